//! Work to run once after each start of the server's shared memory (the server's start, and again
//! after a crash, when the postmaster wipes it), in a background worker rather than in a static
//! worker of its own, which would hold one of the server's `max_worker_processes` for good.
//! Subsystems `add` a task while preloading; the first worker to call `run` in a shared-memory
//! lifetime runs them all (the node's reserver does, as it starts), and no later call does.

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Mutex;

use pgrx::pg_sys;

use crate::pg::shmem;

static TASKS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());
/// Whether this shared-memory lifetime's tasks have run: a flag in shared memory, cleared when the
/// block is first attached.
static RAN: AtomicPtr<AtomicBool> = AtomicPtr::new(std::ptr::null_mut());

/// Adds a task (while preloading).
pub fn add(task: fn()) {
    let mut tasks = TASKS.lock().unwrap_or_else(|e| e.into_inner());
    if tasks.is_empty() {
        shmem::add_region(shmem::Region {
            name: c"pg_idgen after start",
            size: std::mem::size_of::<AtomicBool>,
            lwlocks: 0,
            attach,
        });
    }
    tasks.push(task);
}

/// # Safety
/// As `shmem::Region::attach` requires.
unsafe fn attach(base: *mut u8, _locks: *mut pg_sys::LWLockPadded, found: bool) {
    let flag = base.cast::<AtomicBool>();
    if !found {
        // SAFETY: the block is `size_of::<AtomicBool>()` bytes of shared memory, laid out here.
        unsafe { flag.write(AtomicBool::new(false)) };
    }
    RAN.store(flag, Ordering::Release);
}

/// Runs the tasks, if no process has run them since shared memory was last set up.
pub fn run() {
    let flag = RAN.load(Ordering::Acquire);
    if flag.is_null() {
        return;
    }
    // SAFETY: the flag lives in shared memory for the life of the server.
    if unsafe { &*flag }.swap(true, Ordering::AcqRel) {
        return;
    }
    let tasks = TASKS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for task in tasks {
        task();
    }
}
