//! `snowflake_next()` and friends: the SQL surface of the node's Snowflake stream, taken through
//! node/take.rs (which also decides the worker id: the setting, a lease or the Citus group).

use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

use crate::gucs;
use crate::node::stream::Stream;
use crate::node::take::node;
use crate::node::take::{self, NodeWorker};
use crate::pg::errors::{batch_size, IdError};
use crate::pg::fast_entry::fast_entry;

// Next Snowflake ID of this node: unique across backends, restarts, crashes and clock steps;
// strictly increasing per node. Use as DEFAULT snowflake_next().
//
// The SQL function `snowflake_next()` (its symbol is `snowflake_next_wrapper`, as pgrx named it in
// every released script): node/take.rs's fast path first, `snowflake_next_full` under pgrx's guard
// for the rest.
fast_entry!(
    "snowflake_next",
    r#"CREATE FUNCTION "snowflake_next"() RETURNS bigint
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c
AS 'MODULE_PATHNAME', 'snowflake_next_wrapper';
"#,
    pg_finfo_snowflake_next_wrapper,
    snowflake_next_wrapper,
    take::snowflake_fast,
    pg_sys::Datum::from,
    snowflake_next_full_wrapper
);

/// `snowflake_next()` for every call its fast path leaves: the checks that raise, a generator to
/// make, a lease, a Citus group to read, the generator's full path.
#[pg_extern(volatile, parallel_restricted, sql = false)]
fn snowflake_next_full() -> i64 {
    let (issued, worker) = take::snowflake(1);
    node().id_of_worker(issued.first, issued.flag, worker)
}

/// n Snowflake IDs at once (1 to 10000000), ascending.
///
/// They are taken from the node's stream as the rows are read, at most a tick's worth at a time,
/// not all before the first row: held to the layout's capacity, emitting the rows of one tick
/// overlaps with waiting for the next, and a query that stops reading early (a LIMIT over the
/// function in the select list) takes no more than it read.
#[pg_extern(volatile, parallel_restricted)]
fn snowflake_next_batch(n: Option<i32>) -> SetOfIterator<'static, i64> {
    let mut owed = batch_size("snowflake_next_batch(n)", n) as u64;
    let g = node();
    let per_tick = 1u64 << g.seq_bits();
    let runs = std::iter::from_fn(move || {
        (owed > 0).then(|| {
            let (issued, worker) = take::snowflake(owed.min(per_tick));
            owed -= issued.count;
            (issued, worker)
        })
    });
    SetOfIterator::new(runs.flat_map(move |(issued, worker)| {
        (issued.first..issued.first + issued.count)
            .map(move |c| g.id_of_worker(c, issued.flag, worker))
    }))
}

/// This node's read horizon of Snowflake IDs: every ID below it that this node made belongs to a
/// transaction that has ended. Take it in a statement of its own, then read WHERE id > last AND id
/// < horizon in the next (READ COMMITTED); in REPEATABLE READ it is refused (25001): take it before
/// BEGIN.
#[pg_extern(volatile, parallel_restricted, schema = "idgen")]
fn read_horizon() -> i64 {
    let take::Horizon { counter, flipped } =
        take::read_horizon(Stream::Snowflake, "idgen.read_horizon()");
    // The node's own worker id, fixed for its life, except in lease mode (a new lease may bring
    // another): there worker 0, below every worker's IDs of the horizon's counter.
    let worker = match take::node_worker() {
        NodeWorker::Setting(w) => Some(w),
        NodeWorker::Citus(w) => Some(w.unwrap_or_else(|e| e.raise())),
        NodeWorker::Lease => None,
    };
    let id = take::with_snowflake_generator(|g| {
        if counter == 0 && !flipped {
            Some(0) // a prepared transaction from before the start holds every ID
        } else if flipped {
            None
        } else {
            g.horizon_id(counter, worker.unwrap_or(0))
        }
    });
    id.unwrap_or_else(|| {
        IdError::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "idgen.read_horizon(): this node's Snowflake IDs are not in the order of their making",
        )
        .detail(format!(
            "Layout {} with clock policy {}{}: a reader paging by ID would skip rows whatever the horizon.",
            node().layout.name,
            pg_idgen_core::generator::ClockPolicy::from(gucs::clock_settings().policy).name(),
            if flipped { " (the rollback flag flipped since the server started)" } else { "" }
        ))
        .hint("Use a layout with the time in its top bits and a clock policy other than rollback_flag.")
        .raise()
    })
}
