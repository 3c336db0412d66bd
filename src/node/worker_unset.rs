//! A node whose worker id comes from `idgen.worker_id` (the default source) with no value set
//! makes Snowflake IDs as worker 0: two nodes set up with only the preload line make the same IDs.
//! The start logs a WARNING, `idgen.status.problem` says it, and where the node is evidently one
//! of several, Snowflake IDs are refused (55000) until the worker id is set, even to 0:
//! - Citus is preloaded (each node needs its own id: `idgen.worker_id_source = citus`);
//! - the database publishes or subscribes (logical replication: another node writes the tables);
//! - the database is a lease coordinator that hands worker ids to other nodes (`idgen.workers`
//!   has rows).

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use crate::gucs;
use crate::pg::errors::not_ready;
use crate::pg::latest_scan::scan_latest;
use pgrx::pg_sys;

/// This backend found the worker id chosen, or no sign of other nodes (per backend: a backend
/// serves one database, and the setting changes only with a restart).
static CHECKED: AtomicBool = AtomicBool::new(false);

/// The node's worker id is `idgen.worker_id`'s built-in default.
pub(super) fn worker_id_unset() -> bool {
    !gucs::lease_mode() && !gucs::citus_mode() && crate::pg::setting_is_default(c"idgen.worker_id")
}

/// What `idgen.status.problem` and the start's WARNING say.
pub fn unset_warning() -> Option<String> {
    worker_id_unset().then(|| {
        "idgen.worker_id is not set: this node makes Snowflake IDs as worker 0, as does every other node set up without it".to_string()
    })
}

/// True when `check` would pass without a query.
#[inline(always)]
pub fn checked() -> bool {
    CHECKED.load(Relaxed)
}

/// Refuses Snowflake IDs where the worker id is unset and the node is evidently one of several.
pub fn check() {
    if CHECKED.load(Relaxed) {
        return;
    }
    if !worker_id_unset() {
        CHECKED.store(true, Relaxed);
        return;
    }
    match evidence() {
        None => CHECKED.store(true, Relaxed),
        Some(why) => {
            super::refusals::count(
                super::stream::Stream::Snowflake,
                super::refusals::Reason::WorkerIdUnset,
            );
            not_ready(format!(
            "Snowflake IDs are refused: idgen.worker_id is not set, and {why}"
        ))
        .detail("Without idgen.worker_id the node makes IDs as worker 0, as does every other node set up without it: their IDs would repeat each other's.")
        .hint("Give each node its own worker id: idgen.worker_id = N in postgresql.conf (0 too, set explicitly, if this node is worker 0) and restart; or idgen.worker_id_source = lease or citus.")
        .raise()
        }
    }
}

/// Why this node is evidently one of several, if it is.
fn evidence() -> Option<String> {
    let preload = gucs::preload_libraries();
    if preload
        .split(',')
        .any(|l| l.trim().trim_matches('"') == "citus")
    {
        return Some(
            "Citus is preloaded (every node of a Citus cluster needs its own worker id)".into(),
        );
    }
    // Read as PostgreSQL reads its catalogs (pg/latest_scan.rs), not by queries: a backend's
    // first Snowflake ID would otherwise parse and plan three. No privilege is checked and no code
    // of any role runs, so idgen.workers, which only its owner and idgen_admin may select, is read
    // here as well as anywhere; the latest snapshot sees at least what the statement's would.
    let mut publications = 0;
    scan_latest(c"pg_catalog", c"pg_publication", |_| publications += 1);
    let mut subscriptions = 0;
    // SAFETY: a process-global set before any function runs.
    let here = unsafe { pg_sys::MyDatabaseId };
    scan_latest(c"pg_catalog", c"pg_subscription", |col| {
        let db = col(pg_sys::Anum_pg_subscription_subdbid as i32);
        if db.map(|d| pg_sys::Oid::from(d.value() as u32)) == Some(here) {
            subscriptions += 1;
        }
    });
    if publications + subscriptions > 0 {
        return Some(
            "this database publishes or subscribes (logical replication: other nodes write its tables)".into(),
        );
    }
    if leased(None) {
        return Some(
            "this database leases worker ids to other nodes (idgen.workers has rows)".into(),
        );
    }
    None
}

/// Whether this database's idgen.workers has ever leased `worker` (a row, live or not: its holder
/// made IDs with it at times nothing records). Read as `evidence` reads it.
pub fn ever_leased(worker: i64) -> bool {
    leased(Some(worker))
}

/// Whether idgen.workers has a row (of `worker`, or any); false where the table does not exist.
fn leased(worker: Option<i64>) -> bool {
    let mut found = false;
    scan_latest(c"idgen", c"workers", |col| {
        // worker_id, the first column: an integer, the primary key.
        let id = col(1).map(|d| i64::from(d.value() as i32));
        found |= worker.is_none() || id == worker;
    });
    found
}
