//! Worker ids from Citus (`idgen.worker_id_source = citus`): a node's worker id is its Citus group
//! id, which the coordinator assigns to each group when `citus_add_node()` adds it (from a
//! sequence, so never twice), and which a group's standbys share (they generate only once
//! promoted). The coordinator is group 0. Nothing to configure per node, and no coordinator
//! round trip after the first ID of a backend.
//!
//! The group id lives in the Citus database, in `pg_dist_local_group`; a backend reads it with its
//! first Snowflake ID and keeps it until Citus changes it (the table's trigger sends a relcache
//! invalidation, which Citus's own cache of the group id follows too). It is read under the latest
//! snapshot, not the statement's, so that a statement that began before a change cannot cache the
//! old value after the change's invalidation has already been handled. A node whose group is 0 but
//! which is not the coordinator is not part of a cluster yet (or was removed from one): it refuses,
//! since its IDs would repeat the coordinator's.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicI64;
use std::sync::atomic::Ordering::Relaxed;

use pgrx::pg_sys;

use crate::pg::errors::{not_ready, IdError};
use crate::pg::latest_scan::scan_latest;
use crate::pg::spi_read::one_i64;

/// This backend's group id, -1 when not read yet or invalidated. A backend is one process with
/// one thread: a plain static is per backend (see `node/origin_check.rs`).
static GROUP: AtomicI64 = AtomicI64::new(-1);
/// The OID of `pg_dist_local_group` in this backend's database, for the invalidation callback.
static TABLE_OID: AtomicI64 = AtomicI64::new(0);
static CALLBACK: AtomicBool = AtomicBool::new(false);

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn invalidate(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    let table = TABLE_OID.load(Relaxed);
    if relid == pg_sys::InvalidOid || i64::from(u32::from(relid)) == table {
        GROUP.store(-1, Relaxed);
    }
}

/// The group id `current` would return without reading anything: None when it is not cached.
#[inline(always)]
pub fn cached() -> Option<u64> {
    u64::try_from(GROUP.load(Relaxed)).ok()
}

/// This node's worker id in Citus mode, its group id checked against the layout's largest worker
/// id: read if need be (a cold path), else cached; the error (55000) when it cannot be known.
#[inline]
pub fn current() -> Result<u64, IdError> {
    match GROUP.load(Relaxed) {
        g if g >= 0 => Ok(g as u64),
        _ => read(),
    }
}

/// The group id in `pg_dist_local_group`, read as Citus itself reads it (a scan of the table,
/// not a query), under the latest snapshot rather than the statement's (pg/latest_scan.rs): a
/// change Citus committed after the statement began is seen, and any committed later arrives as an
/// invalidation after this read and clears the cache. None when the table does not exist (no Citus
/// here) or is empty (Citus is being upgraded).
fn scan_local_group() -> Option<i64> {
    let mut group = None;
    let table = scan_latest(c"pg_catalog", c"pg_dist_local_group", |col| {
        // The table's one int4 column, of its one row.
        group = group.or(col(1).map(|d| i64::from(d.value() as i32)));
    })?;
    // Kept for the invalidation callback. Set after the scan, which is safe: a change committed
    // before the scan's snapshot is in what it read, and the invalidation of a later one is
    // handled only at this backend's next lock, after this store.
    TABLE_OID.store(i64::from(u32::from(table)), Relaxed);
    group
}

#[cold]
fn read() -> Result<u64, IdError> {
    let largest = super::generator::node()
        .layout
        .max_value(pg_idgen_core::layout::Field::Worker);
    if !CALLBACK.swap(true, Relaxed) {
        // SAFETY: registers a relcache callback for this backend's life, as Citus does for its own
        // cache of the group id; the function is a plain extern "C" function of this library.
        unsafe { pg_sys::CacheRegisterRelcacheCallback(Some(invalidate), pg_sys::Datum::from(0)) };
    }
    let group = match scan_local_group() {
        Some(g) => g,
        None => {
            return Err(not_ready("this node's worker id comes from Citus (idgen.worker_id_source = citus), but this database has no Citus metadata")
                .hint("Make Snowflake IDs in the database where CREATE EXTENSION citus was run (after Citus has finished any upgrade), or set idgen.worker_id_source to setting or lease."));
        }
    };
    // Group 0 is the coordinator's, and also that of a node not (or no longer) in a cluster.
    if group == 0 {
        let coordinator =
            one_i64("SELECT pg_catalog.citus_is_coordinator()::pg_catalog.int4::pg_catalog.int8")
                .map_err(|e| {
                not_ready(format!(
                    "pg_idgen: could not ask Citus whether this node is the coordinator: {e}"
                ))
            })?;
        if coordinator != Some(1) {
            return Err(not_ready("this node is not part of a Citus cluster: its Citus group id is 0, and it is not the coordinator")
                .detail("Group 0 is the coordinator's; a worker gets its own group when the coordinator adds it, and goes back to 0 when it is removed. Its IDs now could repeat the coordinator's.")
                .hint("On the coordinator, add this node with SELECT citus_add_node('host', port); on the coordinator itself, register it with SELECT citus_set_coordinator_host('host', port) or add a worker first."));
        }
    }
    if group as u64 > largest {
        return Err(not_ready(format!(
            "this node's Citus group id {group} is larger than the layout's largest worker id {largest}"
        ))
        .detail("Citus hands out group ids from a sequence and never reuses them, so a cluster that added and removed many nodes has large ones.")
        .hint("Choose a layout with more worker bits (idgen.layout, at the next restart of every node), or set idgen.worker_id_source to lease."));
    }
    GROUP.store(group, Relaxed);
    Ok(group as u64)
}
