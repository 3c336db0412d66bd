//! Shared memory for the subsystems that ask for it. Each hands `add_region` a block while
//! preloading (a name, a size, a number of LWLocks, and what to do when it is attached); the blocks
//! are requested in the postmaster's shmem-request phase and attached, in the order they were
//! added, once per postmaster life and again after every crash, when the postmaster wipes shared
//! memory. `at_postmaster_exit` runs a subsystem's last words once every child has exited. It
//! knows no feature: the node's block is one region among others (node/shared.rs).

use std::ffi::CStr;
use std::sync::Mutex;

use pgrx::pg_sys;

use crate::pg::lwlock::LwLockGuard;

/// A block of shared memory and its LWLocks, in a tranche of the block's name.
pub struct Region {
    pub name: &'static CStr,
    /// Bytes to request; called in the postmaster's shmem-request phase.
    pub size: fn() -> usize,
    /// How many LWLocks the block needs (0: none).
    pub lwlocks: i32,
    /// Lays out the block (initialises it when `found` is false); `locks` points at the block's
    /// `lwlocks` padded LWLocks (null when it has none).
    ///
    /// # Safety
    /// Called with a pointer to `size()` bytes of shared memory, the same in every process, with
    /// `AddinShmemInitLock` held.
    pub attach: unsafe fn(base: *mut u8, locks: *mut pg_sys::LWLockPadded, found: bool),
}

static REGIONS: Mutex<Vec<Region>> = Mutex::new(Vec::new());
static AT_EXIT: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

static mut PREV_REQUEST: pg_sys::shmem_request_hook_type = None;
static mut PREV_STARTUP: pg_sys::shmem_startup_hook_type = None;
/// Whether the postmaster registered its exit callback (once: shared memory is set up again
/// after every crash of a child, in the same postmaster).
static mut EXIT_CALLBACK: bool = false;

/// Adds a block; from `_PG_init` while preloading. Blocks are attached in the order added.
pub fn add_region(region: Region) {
    REGIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(region);
}

/// Runs `f` in the postmaster as it exits, after every child process has exited (PostgreSQL waits
/// for them, also in an immediate shutdown); from `_PG_init` while preloading.
pub fn at_postmaster_exit(f: fn()) {
    AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()).push(f);
}

/// Installs the hooks; called once from `_PG_init` while preloading, before any `add_region`
/// takes effect.
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
        for r in REGIONS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            pg_sys::RequestAddinShmemSpace((r.size)());
            if r.lwlocks > 0 {
                pg_sys::RequestNamedLWLockTranche(r.name.as_ptr(), r.lwlocks);
            }
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn shmem_startup() {
    // SAFETY: ShmemInitStruct under AddinShmemInitLock is the documented way to attach; each block
    // is initialised by its `attach` only when `found` is false, once per shared-memory lifetime.
    unsafe {
        if let Some(prev) = PREV_STARTUP {
            prev();
        }
        // AddinShmemInitLock is a C macro: &MainLWLockArray[21].lock.
        let init_lock = &raw mut (*pg_sys::MainLWLockArray.add(21)).lock;
        // Released when the guard drops, also if an `attach` raises an ERROR.
        let init_guard = LwLockGuard::exclusive(init_lock);
        for r in REGIONS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let mut found = false;
            let base = pg_sys::ShmemInitStruct(r.name.as_ptr(), (r.size)(), &mut found) as *mut u8;
            let locks = if r.lwlocks > 0 {
                pg_sys::GetNamedLWLockTranche(r.name.as_ptr())
            } else {
                std::ptr::null_mut()
            };
            (r.attach)(base, locks, found);
        }
        drop(init_guard);
        if !pg_sys::IsUnderPostmaster && !EXIT_CALLBACK {
            EXIT_CALLBACK = true;
            pg_sys::on_shmem_exit(Some(postmaster_exit), pg_sys::Datum::from(0));
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn postmaster_exit(_code: i32, _arg: pg_sys::Datum) {
    for f in AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        f();
    }
}
