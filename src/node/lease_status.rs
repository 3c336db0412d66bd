//! This node's worker-id lease as its keeper reports it, in shared memory, for
//! `idgen.worker_status` and the errors of `snowflake_next()` (the lease itself, the cell every
//! generator checks, is `pg_idgen_core::lease::LeaseCell`).

use std::sync::atomic::Ordering::{Relaxed, Release};
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64};

use crate::pg::shared_text::SharedText;

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
    pub fn reset(&self) {
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
