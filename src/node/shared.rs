//! The node's block of shared memory: its clock streams, the durable mark's state, the lease, the
//! origins and the errors that stop generation. A region of `pg/shmem.rs`, attached before every
//! other; the first attach of each shared-memory lifetime (start, and after a crash) restores the
//! clocks from the durable mark, and the postmaster's exit records the clean stop (node/mark.rs).

use std::ptr::null_mut;

use pgrx::pg_sys;

use pg_idgen_core::generator::GeneratorState;
use pg_idgen_core::shared_text::SharedText;

use super::stream::{self, Clock, PerStream, Stream};

/// Everything the node's processes share.
#[repr(C)]
pub struct Shared {
    /// The clock and sequence (or counter) of each stream: Snowflake IDs, message IDs (RongCloud's
    /// 80-bit format), UUIDv7s (and ULIDs), on the same machinery.
    pub clocks: PerStream<GeneratorState>,
    /// The time (ms since 1970) from which the current layout makes IDs: 0 when the node never
    /// made IDs with another layout (core::layout_history). IDs at a past time stay after it.
    pub layout_start_ms: std::sync::atomic::AtomicI64,
    /// The durable mark as last written (ms): it only moves up, whichever generator moves it.
    pub mark_ms: std::sync::atomic::AtomicI64,
    /// The WAL position of the newest mark record this server wrote (0: none since start).
    pub mark_lsn: std::sync::atomic::AtomicU64,
    /// Set at start: the next reservation writes a record and the file even where the mark
    /// already covers it (the file may hold a clean stop's exact counters; the standbys may not
    /// have confirmed the record this server started from).
    pub mark_rewrite: std::sync::atomic::AtomicBool,
    /// The worker id leased from a coordinator (lease mode), and the keeper's report.
    pub lease: pg_idgen_core::lease::LeaseCell,
    pub lease_status: super::lease_status::LeaseStatus,
    /// Whether pg_upgrade filled the data directory without a mark, and the other systems whose
    /// IDs the node's clocks are above (`pg_idgen.origins`).
    pub origins: super::origins::OriginsState,
    /// The databases found to hold no other system's IDs, by their `idgen.node_origins`' stamp.
    pub clear_databases: super::origins::ClearDatabases,
    /// Set at startup when the durable mark could not be read: generating could repeat IDs.
    /// Also set when WAL replay could not write a replayed mark into the file.
    pub mark_error: SharedText<512>,
    /// Set at startup when `idgen.layout` changed to one that could repeat or undercut the IDs
    /// of the node's earlier layouts (core::layout_history).
    pub layout_error: SharedText<1024>,
}

static mut SHARED: *mut Shared = null_mut();
static mut LOCKS: *mut pg_sys::LWLockPadded = null_mut();

/// The region's name and its one LWLock (the reservation's).
pub const NAME: &std::ffi::CStr = c"pg_idgen";
pub const LWLOCKS: i32 = 1;

/// Points this process at the block, zeroing it first when `found` is false (once per
/// shared-memory lifetime); returns the block when it was just zeroed, for the node to restore.
///
/// # Safety
/// As `Region::attach` requires: `base` holds `size_of::<Shared>()` bytes, `locks` one LWLock.
pub unsafe fn attach(
    base: *mut u8,
    locks: *mut pg_sys::LWLockPadded,
    found: bool,
) -> Option<&'static Shared> {
    // SAFETY: per the contract; the block is zeroed (a valid Shared: atomics and bytes) before
    // the first use, once per shared-memory lifetime.
    unsafe {
        let p = base as *mut Shared;
        LOCKS = locks;
        SHARED = p;
        if found {
            return None;
        }
        std::ptr::write_bytes(base, 0, std::mem::size_of::<Shared>());
        (*p).lease_status.reset();
        Some(&*p)
    }
}

/// The shared block, or None before it is attached (never, in a backend past startup): `shared`
/// without its assertion, for a path that must not panic.
#[inline(always)]
pub fn attached() -> Option<&'static Shared> {
    // SAFETY: as in `shared`.
    unsafe { SHARED.as_ref() }
}

/// The shared block; only after startup, which every backend and worker has passed.
pub fn shared() -> &'static Shared {
    // SAFETY: SHARED is set in the postmaster's startup hook before any backend is forked and
    // never changes afterwards in a child; Shared holds only atomics and plain bytes.
    unsafe {
        assert!(!SHARED.is_null(), "pg_idgen shared memory is not attached");
        &*SHARED
    }
}

/// The LWLock that serialises durable reservations of the mark.
pub(super) fn reserve_lock() -> *mut pg_sys::LWLock {
    // SAFETY: LOCKS points at the block's one padded lock, set up at startup.
    unsafe { &raw mut (*LOCKS).lock }
}

impl Shared {
    /// The clock of `stream`.
    #[inline(always)]
    pub fn clock(&self, stream: Stream) -> Clock<'_> {
        stream.clock(&self.clocks)
    }

    /// Every stream's clock, in the order of `Stream::ALL`.
    pub fn clocks(&self) -> [Clock<'_>; stream::COUNT] {
        Stream::ALL.map(|s| self.clock(s))
    }

    pub(super) fn set_mark_error(&self, msg: &str) {
        self.mark_error.set(msg);
    }

    pub(super) fn set_layout_error(&self, msg: &str) {
        self.layout_error.set(msg);
    }

    #[inline]
    pub fn layout_error(&self) -> Option<String> {
        self.layout_error.get()
    }

    #[inline]
    pub fn mark_error(&self) -> Option<String> {
        self.mark_error.get()
    }
}
