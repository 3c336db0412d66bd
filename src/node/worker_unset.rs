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
use crate::pg::as_owner::as_owner;
use crate::pg::errors::not_ready;
use crate::pg::spi_read::{one_i64, Arg};
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
    let evidence = evidence().unwrap_or_else(|e| {
        not_ready(format!("pg_idgen: could not look for other nodes: {e}")).raise()
    });
    match evidence {
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
fn evidence() -> Result<Option<String>, String> {
    let preload = gucs::preload_libraries();
    if preload
        .split(',')
        .any(|l| l.trim().trim_matches('"') == "citus")
    {
        return Ok(Some(
            "Citus is preloaded (every node of a Citus cluster needs its own worker id)".into(),
        ));
    }
    let replication = one_i64(
        "SELECT (SELECT count(*) FROM pg_catalog.pg_publication)
              + (SELECT count(*) FROM pg_catalog.pg_subscription s
                  WHERE s.subdbid OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database d
                                       WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()))",
        &[],
    )?;
    if replication.unwrap_or(0) > 0 {
        return Ok(Some(
            "this database publishes or subscribes (logical replication: other nodes write its tables)".into(),
        ));
    }
    // idgen.workers is readable by its owner (and idgen_admin): read as its owner, in a
    // security-restricted operation; parallel workers may not change settings, and leave it to
    // the leader.
    // SAFETY: reads of a process-global set at start.
    if unsafe { pg_sys::ParallelWorkerNumber } >= 0 {
        return Ok(None);
    }
    let leased = read_workers(
        "SELECT count(*) FROM (SELECT FROM idgen.workers LIMIT 1) w",
        &[],
    )?;
    if leased.unwrap_or(0) > 0 {
        return Ok(Some(
            "this database leases worker ids to other nodes (idgen.workers has rows)".into(),
        ));
    }
    Ok(None)
}

/// Whether this database's idgen.workers has ever leased `worker` (a row, live or not: its holder
/// made IDs with it at times nothing records). Read as the table's owner, as above.
pub fn ever_leased(worker: i64) -> Result<bool, String> {
    let n = read_workers(
        "SELECT count(*) FROM idgen.workers WHERE worker_id OPERATOR(pg_catalog.=) $1",
        &[Arg::Int8(worker)],
    )?;
    Ok(n.unwrap_or(0) > 0)
}

/// One number read from idgen.workers as its owner (readable by its owner and idgen_admin), in a
/// security-restricted operation; None where the table does not exist.
fn read_workers(sql: &str, args: &[Arg]) -> Result<Option<i64>, String> {
    let owner = one_i64(
        "SELECT c.relowner::pg_catalog.int8 FROM pg_catalog.pg_class c
           JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
          WHERE n.nspname OPERATOR(pg_catalog.=) 'idgen' AND c.relname OPERATOR(pg_catalog.=) 'workers'",
        &[],
    )?;
    match owner {
        Some(owner) => as_owner(pg_sys::Oid::from(owner as u32), || one_i64(sql, args)),
        None => Ok(None),
    }
}
