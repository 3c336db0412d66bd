//! pg_idgen's shared memory: one block, requested while preloading and set up once per
//! postmaster life (again after every crash, when the postmaster wipes shared memory).

use std::cell::UnsafeCell;
use std::ptr::null_mut;

use pgrx::pg_sys;

use crate::core::generator::GeneratorState;
use crate::segment;
use crate::snowflake;

const SHMEM_NAME: &std::ffi::CStr = c"pg_idgen";
const TRANCHE: &std::ffi::CStr = c"pg_idgen";
const LOCKS: i32 = 2;
const SEGMENTS_NAME: &std::ffi::CStr = c"pg_idgen segments";

/// Everything the node's processes share.
#[repr(C)]
pub struct Shared {
    pub generator: GeneratorState,
    /// The clock and sequence of message IDs (seed 000), the same machinery as Snowflake's.
    pub msgid: GeneratorState,
    /// The durable mark as last written (ms): it only moves up, whichever generator moves it.
    pub mark_ms: std::sync::atomic::AtomicI64,
    /// The worker id leased from a coordinator (lease mode), and the keeper's report.
    pub lease: crate::core::lease::LeaseCell,
    pub lease_status: crate::lease::LeaseStatus,
    /// Set at startup when the durable mark could not be read: generating could repeat IDs.
    pub mark_error: UnsafeCell<[u8; 256]>,
    /// Set at startup when `idgen.layout` changed to one that could repeat or undercut the IDs
    /// of the node's earlier layouts (core::layout_history).
    pub layout_error: UnsafeCell<[u8; 1024]>,
}

static mut SHARED: *mut Shared = null_mut();
static mut LOCK_BASE: *mut pg_sys::LWLockPadded = null_mut();
static mut PREV_REQUEST: pg_sys::shmem_request_hook_type = None;
static mut PREV_STARTUP: pg_sys::shmem_startup_hook_type = None;

/// Installs the hooks; called from `_PG_init` while preloading.
pub fn install_hooks() {
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
        pg_sys::RequestAddinShmemSpace(segment::shmem_size());
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
        pg_sys::LWLockAcquire(init_lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
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
            snowflake::restore_from_mark(&*p);
        }
        SHARED = p;
        let mut seg_found = false;
        let seg = pg_sys::ShmemInitStruct(
            SEGMENTS_NAME.as_ptr(),
            segment::shmem_size(),
            &mut seg_found,
        ) as *mut u8;
        segment::attach(seg, seg_found);
        pg_sys::LWLockRelease(init_lock);
    }
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
        set_text(&self.mark_error, msg);
    }

    pub fn set_layout_error(&self, msg: &str) {
        set_text(&self.layout_error, msg);
    }

    pub fn layout_error(&self) -> Option<String> {
        text(&self.layout_error)
    }

    pub fn mark_error(&self) -> Option<String> {
        text(&self.mark_error)
    }
}

/// Writes a startup error text (cut to fit, NUL-terminated). Through UnsafeCell: the block is
/// reached by shared references, and a write through one of those may be optimised away.
fn set_text<const N: usize>(cell: &UnsafeCell<[u8; N]>, msg: &str) {
    let bytes = msg.as_bytes();
    let mut n = bytes.len().min(N - 1);
    while !msg.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: only written at startup (shared-memory initialisation in the postmaster), before
    // any backend reads it; n < N.
    unsafe {
        let dst = cell.get() as *mut u8;
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, n);
        *dst.add(n) = 0;
    }
}

fn text<const N: usize>(cell: &UnsafeCell<[u8; N]>) -> Option<String> {
    // SAFETY: written only at startup, before any reader exists (see set_text).
    let buf = unsafe { &*cell.get() };
    let end = buf.iter().position(|b| *b == 0).unwrap_or(0);
    (end > 0).then(|| String::from_utf8_lossy(&buf[..end]).into_owned())
}
