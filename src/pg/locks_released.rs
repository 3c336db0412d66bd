//! When this process's last transaction let go of its heavyweight locks: the end of the time it
//! blocked others. A commit does more after it releases them (it removes the files of the
//! relations the transaction dropped, "since this may take many seconds", as PostgreSQL's
//! `CommitTransaction` says), so a transaction's wall time overstates how long it blocked anyone.

use std::cell::Cell;
use std::time::Instant;

use pgrx::pg_sys;

thread_local! {
    static REGISTERED: Cell<bool> = const { Cell::new(false) };
    static RELEASED: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `transaction` (which starts and ends a transaction) and returns its result with the
/// instant its locks were released, if it released any in this process.
pub fn around<R>(transaction: impl FnOnce() -> R) -> (R, Option<Instant>) {
    if !REGISTERED.get() {
        // SAFETY: a plain C function pointer, registered once per process; it touches only this
        // thread's cells.
        unsafe { pg_sys::RegisterResourceReleaseCallback(Some(after_locks), std::ptr::null_mut()) };
        REGISTERED.set(true);
    }
    RELEASED.set(None);
    let result = transaction();
    (result, RELEASED.take())
}

/// Called for each resource owner, children first, in each phase of a transaction's end; the
/// last call in the phase after the locks is the top transaction's owner, right after
/// `ProcReleaseLocks`.
unsafe extern "C-unwind" fn after_locks(
    phase: pg_sys::ResourceReleasePhase::Type,
    _is_commit: bool,
    is_top_level: bool,
    _arg: *mut std::ffi::c_void,
) {
    if is_top_level && phase == pg_sys::ResourceReleasePhase::RESOURCE_RELEASE_AFTER_LOCKS {
        RELEASED.set(Some(Instant::now()));
    }
}
