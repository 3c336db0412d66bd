//! This node's worker-id lease as its keeper reports it, in shared memory, for
//! `idgen.worker_status` and the errors of `snowflake_next()` (the lease itself, the cell every
//! generator checks, is `pg_idgen_core::lease::LeaseCell`).

use std::sync::atomic::Ordering::{Relaxed, Release};
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64};

use pgrx::pg_sys;

use crate::pg::errors::{not_ready, IdError};
use pg_idgen_core::lease::LeaseFault;
use pg_idgen_core::shared_text::SharedText;

/// What the keeper is doing, for `idgen.worker_status`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub enum KeeperState {
    Acquiring = 1,
    Leased = 2,
    Retrying = 3,
    Lapsed = 4,
    Stopped = 5,
}

impl KeeperState {
    pub fn name(v: u32) -> &'static str {
        match v {
            0 => "starting",
            1 => "acquiring",
            2 => "leased",
            3 => "renewal failing",
            4 => "lapsed",
            _ => "stopped",
        }
    }
}

/// The keeper's report in shared memory. One writer (the keeper); readers may see fields of two
/// consecutive updates, which only informs.
#[repr(C)]
pub struct LeaseStatus {
    pub state: AtomicU32,
    pub worker_id: AtomicI64,
    pub lease_no: AtomicI64,
    pub acquired_ms: AtomicI64,
    pub expires_ms: AtomicI64,
    pub renewed_ms: AtomicI64,
    pub start_after_ms: AtomicI64,
    pub acquisitions: AtomicU64,
    pub renewals: AtomicU64,
    pub failures: AtomicU64,
    pub started_ms: AtomicI64,
    pub first_lease_ms: AtomicI64,
    error: SharedText<256>,
    code: SharedText<256>,
}

impl LeaseStatus {
    /// Called at every shared-memory initialisation (the block is zeroed before).
    pub(super) fn reset(&self) {
        self.worker_id.store(-1, Relaxed);
        self.start_after_ms.store(i64::MIN, Relaxed);
        self.first_lease_ms.store(-1, Relaxed);
    }

    pub fn set_state(&self, s: KeeperState) {
        self.state.store(s as u32, Release);
    }

    pub fn set_error(&self, msg: &str) {
        self.error.set(msg);
    }

    pub fn set_code(&self, code: &str) {
        self.code.set(code);
    }

    pub fn error(&self) -> Option<String> {
        self.error.get()
    }

    pub fn code(&self) -> Option<String> {
        self.code.get()
    }
}

/// The keeper's last error as the current role may see it. Connection errors name the
/// coordinator's host, port and user, which come from `idgen.worker_lease_conninfo`, a setting
/// only superusers and members of pg_read_all_settings may read.
pub fn keeper_error(st: &LeaseStatus) -> Option<String> {
    let e = st.error()?;
    // SAFETY: reads of this backend's current user and the role catalog cache.
    let may_read = unsafe {
        pg_sys::superuser()
            || pg_sys::has_privs_of_role(
                pg_sys::GetUserId(),
                pg_sys::Oid::from(pg_sys::ROLE_PG_READ_ALL_SETTINGS),
            )
    };
    Some(if may_read {
        e
    } else {
        "(not shown: it may name the coordinator's host, port or user; superusers and members of pg_read_all_settings see it)".into()
    })
}

/// The ERROR for a Snowflake ID that cannot be made because the lease is missing or lapsed.
pub(super) fn lease_fault_error(fault: LeaseFault, status: &LeaseStatus) -> IdError {
    let why = keeper_error(status)
        .map(|e| format!("The lease keeper reports: {e}"))
        .unwrap_or_else(|| "The lease keeper has not reported an error.".into());
    let reason = match fault {
        LeaseFault::NotLeased => super::refusals::Reason::LeaseMissing,
        LeaseFault::Lapsed { .. } => super::refusals::Reason::LeaseLapsed,
    };
    super::refusals::count(super::stream::Stream::Snowflake, reason);
    match fault {
        LeaseFault::NotLeased => not_ready("this node has no worker id yet: it leases one from its coordinator (idgen.worker_id_source = lease)")
            .detail(why)
            .hint("See SELECT * FROM idgen.worker_status; check that the coordinator in idgen.worker_lease_conninfo is up and has a free worker id. IDs resume as soon as a lease is granted."),
        LeaseFault::Lapsed { worker_id } => not_ready(format!(
            "the lease of worker id {worker_id} has lapsed: the coordinator did not renew it in time"
        ))
        .detail(format!("{why} Making IDs now could repeat the IDs of the worker id's next holder."))
        .hint("See SELECT * FROM idgen.worker_status; IDs resume when the coordinator renews the lease or grants a new one."),
    }
}
