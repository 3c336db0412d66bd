//! The per-database half of the origins (docs/guarantees.md, guarantee 3, across pg_upgrade and restores onto
//! another server): `idgen.node_origins` lists the database systems whose IDs a database may hold,
//! and this module owns every statement on it. When a row names a system this node's clocks are not
//! above, time-based IDs are refused in that database until `idgen.snowflake_start_after()` moves
//! the clocks past the old IDs (`adopt`). The node-wide half, the files in the data directory, is
//! node/origins.rs.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

use super::origins::system_identifier;
use super::refusals::{self, Reason};
use super::shared;
use super::stream::Stream;
use crate::pg::errors::{not_ready, IdError};
use crate::pg::latest_scan::{scan_open, table_oid, with_table};
use crate::pg::page_stamp;

/// This backend's database was found to hold no other system's IDs (a backend serves one
/// database; a refusal is not cached, so it ends as soon as the operator acts). A backend is one
/// process with one thread: a plain static is per backend, and costs less to read on every ID
/// than a thread-local of a shared library.
static CHECKED: AtomicBool = AtomicBool::new(false);

/// True when `check` would pass without a query: this backend's database was already found clear.
#[inline(always)]
pub fn checked() -> bool {
    CHECKED.load(Relaxed)
}

/// Refuses to make time-based IDs in a database that holds IDs of another database system whose
/// mark this node has not been moved past; the refusal is counted for `stream`.
pub fn check(stream: Stream) {
    let kind = stream.ids();
    if CHECKED.load(Relaxed) {
        return;
    }
    let me = system_identifier();
    let node = &shared::shared().origins;
    if node.upgraded_without_mark() {
        refusals::count(stream, Reason::UpgradedWithoutMark);
        not_ready(format!(
            "{kind}s are refused on this node: pg_upgrade filled its data directory, and the old system's durable mark did not come along"
        ))
        .detail("The databases pg_upgrade carried hold IDs the old server made; this node's clocks know nothing of them, in any database, also in one created since. pg_idgen.origins in the data directory records it.")
        .hint("Stop this server, copy pg_idgen.mark and pg_idgen.layouts from the old data directory into the new one (which has none), and start it again; or, once the old server has stopped, set idgen.max_drift to at least the old server's and run SELECT idgen.snowflake_start_after(clock_timestamp() + current_setting('idgen.max_drift')::interval) in each database pg_upgrade carried (the first ends this node-wide refusal). docs/operations.md explains, under Upgrading PostgreSQL.")
        .raise();
    }
    // Systems this node's clocks are above: its own, and those whose mark was copied into its
    // data directory (node/origins.rs).
    let past = node.past();
    // SAFETY: set before any of our code runs in a backend, and never changed.
    let database = unsafe { pg_sys::MyDatabaseId }.to_u32();
    // Another backend found this database clear, and its table has not changed since (node-wide,
    // by the page's stamp: pg/page_stamp.rs): a new session's first ID opens no table.
    if let Some(stamp) = shared::shared().clear_databases.get(database) {
        if page_stamp::unchanged(&stamp) {
            CHECKED.store(true, Relaxed);
            return;
        }
    }
    // Read as PostgreSQL reads a catalog (pg/latest_scan.rs), not by a query: a backend's first
    // ID would otherwise parse and plan one (nearly all of its cost: 3 million instructions of
    // the first snowflake_next(), against 16 thousand for the rest). Every row, whatever a policy
    // or a grant says, under the latest snapshot: at least what the statement's would see. A
    // database whose extension predates the table (ALTER EXTENSION UPDATE not yet run) has
    // nothing recorded.
    let mut other = None;
    let ours = |system: i64| system == me || past.contains(&system);
    let stamp = with_table(c"idgen", c"node_origins", |rel| {
        // SAFETY: rel is open and locked for the call.
        unsafe {
            scan_open(rel, |col| {
                // system_identifier, the first column: a bigint, NOT NULL.
                if let Some(system) = col(1).map(|d| d.value() as i64) {
                    if other.is_none() && !ours(system) {
                        other = Some(system);
                    }
                }
            });
            // Found clear: stamped for the node's other backends, when the page is settled and
            // names only systems this node is above (a parallel worker leaves it to its leader).
            (other.is_none() && !pg_sys::IsInParallelMode())
                .then(|| {
                    page_stamp::stamp_settled(rel, |col| {
                        col(1).is_some_and(|d| ours(d.value() as i64))
                    })
                })
                .flatten()
        }
    })
    .flatten();
    match other {
        None => {
            if let Some(stamp) = stamp {
                shared::shared().clear_databases.put(database, stamp);
            }
            CHECKED.store(true, Relaxed)
        }
        Some(old) => {
            refusals::count(stream, Reason::OtherSystem);
            not_ready(format!(
            "{kind}s are refused in this database: its IDs were made on another database system (system identifier {old}), whose durable mark did not come along"
        ))
        .detail(format!(
            "This system is {me}. pg_upgrade, a restore onto another server and a copy of the files carry a database's tables, not the mark in the data directory that keeps new IDs above the old ones."
        ))
        .hint("Move this node's clocks past the newest ID the old system made: SELECT idgen.snowflake_start_after(<its time>) in this database. Once the old system has stopped, its IDs are at most its idgen.max_drift ahead of now: set this node's idgen.max_drift to at least the old system's, reload, and run SELECT idgen.snowflake_start_after(clock_timestamp() + current_setting('idgen.max_drift')::interval). docs/operations.md explains, under Moving a node.")
        .raise()
        }
    }
}

/// After `idgen.snowflake_start_after()`: this node's clocks are past every ID in this database,
/// whichever system made them.
pub fn adopt() {
    // Not where the extension's SQL objects predate the table (the library is new, ALTER
    // EXTENSION pg_idgen UPDATE not yet run): nothing is recorded there.
    let exists = table_oid(c"idgen", c"node_origins").is_some();
    let me = system_identifier();
    // The node-wide refusal after pg_upgrade ends too: the caller's time bounds the old system's
    // IDs (docs/operations.md's recipe). Other databases that name another system are still refused until
    // this runs there: their IDs may be later than this database's.
    super::origins::moved_past_upgrade(
        &shared::shared().origins,
        &crate::pg::data_dir(),
        shared::reserve_lock(),
    )
    .unwrap_or_else(|e| {
        IdError::new(
            PgSqlErrorCode::ERRCODE_IO_ERROR,
            format!("pg_idgen: could not record the move in pg_idgen.origins: {e}"),
        )
        .raise()
    });
    if !exists {
        CHECKED.store(true, Relaxed);
        return;
    }
    Spi::run_with_args(
        "DELETE FROM idgen.node_origins WHERE system_identifier OPERATOR(pg_catalog.<>) $1;
         INSERT INTO idgen.node_origins (system_identifier)
         SELECT $1 WHERE NOT EXISTS (SELECT FROM idgen.node_origins WHERE system_identifier OPERATOR(pg_catalog.=) $1)",
        &[me.into()],
    )
    .unwrap_or_else(|e| {
        not_ready(format!("pg_idgen: could not record this system in idgen.node_origins: {e}"))
            .hint("Run idgen.snowflake_start_after() as a member of idgen_admin, after ALTER EXTENSION pg_idgen UPDATE.")
            .raise()
    });
    CHECKED.store(true, Relaxed);
}
