//! `snowflake_next()` and friends: the SQL surface of the node's Snowflake stream (node/), with
//! the worker id from the setting, a lease or the Citus group.

use std::sync::atomic::Ordering::*;

use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

use crate::gucs::{self, WorkerIdSource};
use crate::node::backend_generator::BackendGenerator;
use crate::node::checks::{
    can_generate_now, check_can_generate, check_layout_accepted, to_id_error, warn_step,
};
use crate::node::clock::PgClock;
use crate::node::generator::{build, node};
use crate::node::horizon::{self, Ordered};
use crate::node::refusals::Kind;
use crate::node::reservation::MarkReserver;
use crate::node::shared::{self, Shared};
use crate::pg::errors::{batch_size, IdError};
use crate::pg::fast_entry::fast_entry;
use pg_idgen_core::generator::Generator;

/// This backend's Snowflake generator under the current reloadable clock settings.
static CURRENT: BackendGenerator = BackendGenerator::new();

/// Runs `f` with this backend's generator, rebuilt when a reload changed the clock settings.
fn with_generator<R>(f: impl FnOnce(&Generator) -> R) -> R {
    CURRENT.with(|settings| build(node().layout.clone(), settings), f)
}

/// Takes `want` consecutive counters from the node's generator, with the worker id to make them
/// IDs with: the setting, or in lease mode the lease that was valid before and after the take.
fn take(want: u64) -> (pg_idgen_core::generator::Issued, u64) {
    let shared = shared::shared();
    check_snowflake(shared);
    horizon::hold(Ordered::Snowflake, &shared.snowflake);
    with_generator(|g| {
        let run = |cap: &dyn Fn() -> u64| {
            g.take_capped(
                &shared.snowflake,
                &PgClock,
                &MarkReserver(&g.layout),
                want,
                cap,
            )
        };
        let (worker, result) = if gucs::lease_mode() {
            // No ID later than the lease covers (core::lease::ceiling_ms): its next holder
            // starts above that, whatever this node does before its next heartbeat.
            let cap = || g.layout.tick_of_ms(shared.lease.ceiling_ms()).unwrap_or(0);
            match shared.lease.under(crate::pg::time::mono_ns, || run(&cap)) {
                Ok((w, r)) => (u64::from(w), r),
                Err(fault) => {
                    crate::node::lease_status::lease_fault_error(fault, &shared.lease_status)
                        .raise()
                }
            }
        } else if gucs::citus_mode() {
            (crate::citus::worker_id(), run(&|| u64::MAX))
        } else {
            (g.worker(), run(&|| u64::MAX))
        };
        match result {
            Ok((issued, step)) => {
                if let Some(s) = step {
                    warn_step(s, Kind::Snowflake);
                }
                (issued, worker)
            }
            Err(e) => to_id_error(e, g, Kind::Snowflake).raise(),
        }
    })
}

/// What every Snowflake ID checks first: a primary, a readable mark, an accepted layout, and a
/// database that holds no other system's IDs.
#[inline]
fn check_snowflake(shared: &Shared) {
    check_can_generate(shared, Some(Kind::Snowflake));
    check_layout_accepted(shared);
    crate::node::origin_check::check(Kind::Snowflake);
    crate::node::worker_unset::check();
}

/// True when `check_snowflake` would pass without asking PostgreSQL anything.
#[inline(always)]
fn snowflake_ready(shared: &Shared) -> bool {
    can_generate_now(shared)
        && shared.layout_error.is_empty()
        && crate::node::worker_unset::checked()
}

/// The common case of `snowflake_next()`, run bare (pg/fast_entry.rs): the checks already passed
/// in this backend, the generator made, no lease (whose take is capped by the lease), the Citus
/// group known; then the generator's fast path, one clock read and one compare-and-swap. None,
/// having issued nothing, for anything else.
#[inline(always)]
fn snowflake_next_fast() -> Option<i64> {
    let shared = shared::attached()?;
    if !snowflake_ready(shared) {
        return None;
    }
    let (source, settings) = gucs::per_row_settings();
    let worker = match source {
        WorkerIdSource::Setting => None,
        WorkerIdSource::Citus => Some(crate::citus::cached_worker_id()?),
        WorkerIdSource::Lease => return None,
    };
    if !horizon::hold_fast(Ordered::Snowflake, &shared.snowflake) {
        return None;
    }
    CURRENT
        .with_made(settings, |g| {
            let (first, _) = g.take_fast(&shared.snowflake, &PgClock, 1)?;
            Some(g.id_of_worker(first, 0, worker.unwrap_or_else(|| g.worker())))
        })
        .flatten()
}

// The next Snowflake ID of this node: the SQL function `snowflake_next()` (its symbol is
// `snowflake_next_wrapper`, as pgrx named it in every released script), `snowflake_next_fast`
// first, `snowflake_next_full` under pgrx's guard for the rest.
fast_entry!(
    "snowflake_next",
    r#"CREATE FUNCTION "snowflake_next"() RETURNS bigint
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c
AS 'MODULE_PATHNAME', 'snowflake_next_wrapper';
"#,
    pg_finfo_snowflake_next_wrapper,
    snowflake_next_wrapper,
    snowflake_next_fast,
    pg_sys::Datum::from,
    snowflake_next_full_wrapper
);

/// `snowflake_next()` for every call its fast path leaves: the checks that raise, a generator to
/// make, a lease, a Citus group to read, the generator's full path.
#[pg_extern(volatile, parallel_restricted, sql = false)]
fn snowflake_next_full() -> i64 {
    let (issued, worker) = take(1);
    node().id_of_worker(issued.first, issued.flag, worker)
}

/// `n` IDs at once, ascending. They are taken from the node's stream as the rows are read, at
/// most a tick's worth at a time, not all before the first row: held to the layout's capacity,
/// emitting the rows of one tick overlaps with waiting for the next, and a query that stops
/// reading early (a LIMIT over the function in the select list) takes no more than it read.
#[pg_extern(volatile, parallel_restricted)]
fn snowflake_next_batch(n: Option<i32>) -> SetOfIterator<'static, i64> {
    let mut owed = batch_size("snowflake_next_batch(n)", n) as u64;
    let g = node();
    let per_tick = 1u64 << g.seq_bits();
    let runs = std::iter::from_fn(move || {
        (owed > 0).then(|| {
            let (issued, worker) = take(owed.min(per_tick));
            owed -= issued.count;
            (issued, worker)
        })
    });
    SetOfIterator::new(runs.flat_map(move |(issued, worker)| {
        (issued.first..issued.first + issued.count)
            .map(move |c| g.id_of_worker(c, issued.flag, worker))
    }))
}

/// The read horizon of this node's Snowflake IDs: every ID below it that this node made belongs
/// to a transaction that has ended. Taken in a statement of its own, before the snapshot of the
/// query that reads below it (docs/read-horizon.md).
#[pg_extern(volatile, parallel_restricted, schema = "idgen")]
fn read_horizon() -> i64 {
    let shared = shared::shared();
    horizon::check_reader("idgen.read_horizon()");
    let (_, flag) = shared.snowflake.last();
    let flipped = flag != 0 || shared.snowflake.stats.flag_flips.load(Relaxed) > 0;
    let counter = horizon::horizon_of(Ordered::Snowflake, &shared.snowflake);
    // The node's own worker id, fixed for its life, except in lease mode (a new lease may bring
    // another): there worker 0, below every worker's IDs of the horizon's counter.
    let worker = if gucs::lease_mode() {
        None
    } else if gucs::citus_mode() {
        Some(crate::citus::worker_id())
    } else {
        Some(node().worker())
    };
    let id = with_generator(|g| {
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

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn next_is_increasing_and_decodes_to_now() {
        let a = Spi::get_one::<i64>("SELECT snowflake_next()")
            .unwrap()
            .unwrap();
        let b = Spi::get_one::<i64>("SELECT snowflake_next()")
            .unwrap()
            .unwrap();
        assert!(b > a);
        let fresh = Spi::get_one::<bool>(&format!(
            "SELECT abs(extract(epoch FROM id_timestamp({b}) - clock_timestamp())) < 5"
        ))
        .unwrap()
        .unwrap();
        assert!(fresh);
    }

    #[pg_test]
    fn batch_is_ascending_and_unique() {
        let (n, distinct, ordered) = Spi::get_three::<i64, i64, bool>(
            "WITH b AS (SELECT id, row_number() OVER () AS rn FROM snowflake_next_batch(100000) AS id)
             SELECT count(*), count(DISTINCT id),
                    bool_and(id > coalesce(prev, -1))
             FROM (SELECT id, lag(id) OVER (ORDER BY rn) AS prev FROM b) s",
        )
        .unwrap();
        assert_eq!(
            (n, distinct, ordered),
            (Some(100000), Some(100000), Some(true))
        );
    }

    #[pg_test(error = "snowflake_next_batch(n): n is 0, it must be between 1 and 10000000")]
    fn batch_refuses_zero() {
        Spi::run("SELECT snowflake_next_batch(0)").unwrap();
    }

    #[pg_test(error = "snowflake_next_batch(n): n must not be NULL")]
    fn batch_refuses_null() {
        Spi::run("SELECT snowflake_next_batch(NULL)").unwrap();
    }

    #[pg_test]
    fn default_column_works() {
        Spi::run(
            "CREATE TABLE t_sf (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int);
             INSERT INTO t_sf (v) SELECT g FROM generate_series(1, 20000) g;",
        )
        .unwrap();
        let ok = Spi::get_one::<bool>("SELECT count(*) = 20000 AND bool_and(id > 0) FROM t_sf")
            .unwrap()
            .unwrap();
        assert!(ok);
    }
}
