//! pg_idgen's shared memory: the node's block (its clock streams, the durable mark, the lease),
//! and the blocks other subsystems add (`add_region`), requested while preloading and set up once
//! per postmaster life (again after every crash, when the postmaster wipes shared memory). It
//! knows no feature: what the node does at the first attach and at the postmaster's exit comes in
//! through `install_hooks`.

use std::ptr::null_mut;

use pgrx::pg_sys;

use std::ffi::CStr;
use std::sync::{Mutex, OnceLock};

use crate::pg::lwlock::LwLockGuard;
use crate::pg::shared_text::SharedText;
use pg_idgen_core::generator::GeneratorState;

const SHMEM_NAME: &std::ffi::CStr = c"pg_idgen";
const TRANCHE: &std::ffi::CStr = c"pg_idgen";
const LOCKS: i32 = 2;

/// Another subsystem's block (segment mode's cache), requested and attached with the node's, so
/// that this file knows no feature.
pub struct Region {
    pub name: &'static CStr,
    /// Bytes to request; called in the postmaster's shmem-request phase.
    pub size: fn() -> usize,
    /// Lays out the block (initialises it when `found` is false).
    ///
    /// # Safety
    /// Called with a pointer to `size()` bytes of shared memory, the same in every process.
    pub attach: unsafe fn(base: *mut u8, found: bool),
}

static REGIONS: Mutex<Vec<Region>> = Mutex::new(Vec::new());
/// What the node does when its block is first set up (once per shared-memory lifetime: the
/// durable mark restores the clocks), and at the postmaster's exit (the clean-stop record).
static ON_FIRST_ATTACH: OnceLock<fn(&Shared)> = OnceLock::new();
static ON_POSTMASTER_EXIT: OnceLock<fn(&Shared)> = OnceLock::new();

/// Adds a block; from `_PG_init` while preloading.
pub fn add_region(region: Region) {
    REGIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(region);
}

/// Everything the node's processes share.
#[repr(C)]
pub struct Shared {
    /// The clock and sequence of Snowflake IDs.
    pub snowflake: GeneratorState,
    /// The clock and sequence of message IDs (RongCloud's 80-bit format), the same machinery as
    /// Snowflake's.
    pub msgid: GeneratorState,
    /// The clock and counter of UUIDv7s (and ULIDs), the same machinery again.
    pub uuidv7: GeneratorState,
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
    pub lease_status: crate::node::lease_status::LeaseStatus,
    /// Whether pg_upgrade filled the data directory without a mark, and the other systems whose
    /// IDs the node's clocks are above (`pg_idgen.origins`).
    pub origins: crate::node::origins::OriginsState,
    /// Set at startup when the durable mark could not be read: generating could repeat IDs.
    /// Also set when WAL replay could not write a replayed mark into the file.
    pub mark_error: SharedText<512>,
    /// Set at startup when `idgen.layout` changed to one that could repeat or undercut the IDs
    /// of the node's earlier layouts (core::layout_history).
    pub layout_error: SharedText<1024>,
}

static mut SHARED: *mut Shared = null_mut();
static mut LOCK_BASE: *mut pg_sys::LWLockPadded = null_mut();
static mut PREV_REQUEST: pg_sys::shmem_request_hook_type = None;
static mut PREV_STARTUP: pg_sys::shmem_startup_hook_type = None;
/// Whether the postmaster registered its exit callback (once: shared memory is set up again
/// after every crash of a child, in the same postmaster).
static mut EXIT_CALLBACK: bool = false;

/// Installs the hooks; called from `_PG_init` while preloading.
pub fn install_hooks(on_first_attach: fn(&Shared), on_postmaster_exit: fn(&Shared)) {
    let _ = ON_FIRST_ATTACH.set(on_first_attach);
    let _ = ON_POSTMASTER_EXIT.set(on_postmaster_exit);
    // SAFETY: _PG_init runs once, single-threaded, in the postmaster, before any hook fires.
    unsafe {
        PREV_REQUEST = pg_sys::shmem_request_hook;
        pg_sys::shmem_request_hook = Some(shmem_request);
        PREV_STARTUP = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(shmem_startup);
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn shmem_request() {
    // SAFETY: called by the postmaster in its shmem-request phase, as the hook contract says.
    unsafe {
        if let Some(prev) = PREV_REQUEST {
            prev();
        }
        pg_sys::RequestAddinShmemSpace(std::mem::size_of::<Shared>());
        for r in REGIONS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            pg_sys::RequestAddinShmemSpace((r.size)());
        }
        pg_sys::RequestNamedLWLockTranche(TRANCHE.as_ptr(), LOCKS);
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn shmem_startup() {
    // SAFETY: ShmemInitStruct under AddinShmemInitLock is the documented way to attach; the block
    // is only initialised when `found` is false, i.e. once per shared-memory lifetime.
    unsafe {
        if let Some(prev) = PREV_STARTUP {
            prev();
        }
        // AddinShmemInitLock is a C macro: &MainLWLockArray[21].lock.
        let init_lock = &raw mut (*pg_sys::MainLWLockArray.add(21)).lock;
        // Released when the guard drops, also if restoring the mark raises an ERROR.
        let init_guard = LwLockGuard::exclusive(init_lock);
        let mut found = false;
        let p = pg_sys::ShmemInitStruct(
            SHMEM_NAME.as_ptr(),
            std::mem::size_of::<Shared>(),
            &mut found,
        ) as *mut Shared;
        LOCK_BASE = pg_sys::GetNamedLWLockTranche(TRANCHE.as_ptr());
        if !found {
            std::ptr::write_bytes(p as *mut u8, 0, std::mem::size_of::<Shared>());
            SHARED = p;
            (*p).lease_status.reset();
            if let Some(f) = ON_FIRST_ATTACH.get() {
                f(&*p);
            }
        }
        SHARED = p;
        for r in REGIONS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let mut found = false;
            let base = pg_sys::ShmemInitStruct(r.name.as_ptr(), (r.size)(), &mut found) as *mut u8;
            (r.attach)(base, found);
        }
        drop(init_guard);
        if !pg_sys::IsUnderPostmaster && !EXIT_CALLBACK {
            EXIT_CALLBACK = true;
            pg_sys::on_shmem_exit(Some(postmaster_exit), pg_sys::Datum::from(0));
        }
    }
}

/// Runs in the postmaster as it exits, after every child process has exited (PostgreSQL waits for
/// them, also in an immediate shutdown): nothing can make an ID any more.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn postmaster_exit(_code: i32, _arg: pg_sys::Datum) {
    // SAFETY: plain reads of the pointer set at startup, in the process that set it.
    let shared = unsafe { SHARED };
    if !shared.is_null() {
        // SAFETY: the block stays mapped until the postmaster has exited.
        if let Some(f) = ON_POSTMASTER_EXIT.get() {
            f(unsafe { &*shared });
        }
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

/// The LWLock that serialises durable reservations of the Snowflake mark.
pub fn reserve_lock() -> *mut pg_sys::LWLock {
    // SAFETY: LOCK_BASE points at LOCKS padded locks set up at startup.
    unsafe { &mut (*LOCK_BASE).lock }
}

/// The LWLock over the segment cache's directory (which slot holds which business type).
pub fn segment_dir_lock() -> *mut pg_sys::LWLock {
    // SAFETY: LOCK_BASE points at LOCKS padded locks set up at startup.
    unsafe { &mut (*LOCK_BASE.add(1)).lock }
}

impl Shared {
    pub fn set_mark_error(&self, msg: &str) {
        self.mark_error.set(msg);
    }

    pub fn set_layout_error(&self, msg: &str) {
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
