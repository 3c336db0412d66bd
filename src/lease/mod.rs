//! Worker-id leases: the coordinator's SQL (`sql`), and a node in lease mode, whose background
//! worker (`keeper`) leases the node's worker id from a coordinator database over libpq.

// pgrx needs the column tuples of TableIterator spelled out in each signature (no type alias).
#![allow(clippy::type_complexity)]

use pgrx::prelude::*;

use crate::node::lease::{self as node_lease, KeeperState};
use crate::node::take::{self, NodeWorker};

pub mod keeper;
mod libpq;
mod sql;

use crate::pg::time::mono_ns;

/// Whether the current role may see this node's lease number. It is the proof of holding the
/// lease at the coordinator (heartbeat and release demand it), so only superusers and members of
/// idgen_admin see it: not pg_read_all_settings, which pg_monitor and so every monitoring role has.
fn may_see_lease_number() -> bool {
    // SAFETY: reads of this backend's current user and the role catalog caches.
    unsafe {
        if pg_sys::superuser() {
            return true;
        }
        let admin = pg_sys::get_role_oid(c"idgen_admin".as_ptr(), true);
        admin != pg_sys::InvalidOid && pg_sys::has_privs_of_role(pg_sys::GetUserId(), admin)
    }
}

/// The node's worker id and where it came from, for `idgen.status`.
pub fn node_worker() -> (Option<i32>, String) {
    match take::node_worker() {
        NodeWorker::Citus(w) => {
            return (
                w.ok().map(|w| w as i32),
                "Citus group id (pg_dist_local_group)".into(),
            )
        }
        NodeWorker::Setting(w) => return (Some(w as i32), "setting idgen.worker_id".into()),
        NodeWorker::Lease => {}
    }
    let lease = node_lease::lease();
    let w = lease
        .cell
        .current(mono_ns())
        .map(|(_, worker_id, _)| worker_id as i32);
    let code = lease.status.code().unwrap_or_default();
    (w, format!("lease from coordinator as \"{code}\""))
}

#[pg_schema]
mod idgen_internal {
    use std::sync::atomic::Ordering::Relaxed;

    use pgrx::prelude::*;

    use super::{mono_ns, node_lease, KeeperState};
    use crate::node::take::{self, NodeWorker};
    use crate::pg::time::ts_of_ms;

    /// This node's worker id source and, in lease mode, its lease as the keeper reports it; read it
    /// through the view idgen.worker_status.
    #[pg_extern(volatile, parallel_safe)]
    fn worker_lease_state() -> TableIterator<
        'static,
        (
            name!(source, String),
            name!(state, String),
            name!(worker_id, Option<i32>),
            name!(code, Option<String>),
            name!(lease, Option<i64>),
            name!(can_generate, bool),
            name!(valid_for_ms, Option<i64>),
            name!(acquired_at, Option<TimestampWithTimeZone>),
            name!(expires_at, Option<TimestampWithTimeZone>),
            name!(last_heartbeat, Option<TimestampWithTimeZone>),
            name!(start_after, Option<TimestampWithTimeZone>),
            name!(acquisitions, i64),
            name!(renewals, i64),
            name!(failures, i64),
            name!(first_lease_ms, Option<i64>),
            name!(last_error, Option<String>),
        ),
    > {
        let lease = node_lease::lease();
        // A worker id from the setting or from Citus: no lease, no keeper, no counters.
        let without_lease = |source: &str, state: &str, worker: Option<i32>, error| {
            TableIterator::once((
                source.into(),
                state.into(),
                worker,
                None,
                None,
                worker.is_some(),
                None,
                None,
                None,
                None,
                None,
                0,
                0,
                0,
                None,
                error,
            ))
        };
        match take::node_worker() {
            NodeWorker::Citus(Ok(w)) => {
                return without_lease("citus", "citus group", Some(w as i32), None)
            }
            NodeWorker::Citus(Err(e)) => {
                return without_lease("citus", "no group", None, Some(e.message))
            }
            NodeWorker::Setting(w) => {
                return without_lease("setting", "fixed", Some(w as i32), None)
            }
            NodeWorker::Lease => {}
        }
        let st = lease.status;
        let now = mono_ns();
        let cur = lease.cell.current(now);
        let ms = |a: &std::sync::atomic::AtomicI64| {
            let v = a.load(Relaxed);
            (v > 0).then(|| ts_of_ms(v))
        };
        let count = |a: &std::sync::atomic::AtomicU64| a.load(Relaxed) as i64;
        let after = st.start_after_ms.load(Relaxed);
        let first = st.first_lease_ms.load(Relaxed);
        TableIterator::once((
            "lease".into(),
            KeeperState::name(st.state.load(Relaxed)).into(),
            cur.map(|(_, w, _)| w as i32),
            st.code(),
            cur.filter(|_| super::may_see_lease_number())
                .map(|_| st.lease_no.load(Relaxed)),
            cur.is_some_and(|(_, _, valid)| valid),
            cur.map(|_| (lease.cell.valid_until_ns() - now).max(0) / 1_000_000),
            ms(&st.acquired_ms),
            ms(&st.expires_ms),
            ms(&st.renewed_ms),
            (after != i64::MIN).then(|| ts_of_ms(after)),
            count(&st.acquisitions),
            count(&st.renewals),
            count(&st.failures),
            (first >= 0).then_some(first),
            node_lease::keeper_error(st),
        ))
    }
}

extension_sql_file!(
    "../../sql/install/worker_status.sql",
    name = "worker_status_view",
    requires = [idgen_internal::worker_lease_state],
);
