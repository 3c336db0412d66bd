//! An LWLock held for the life of a guard: released when the guard drops, also while an ERROR
//! unwinds through Rust frames (PostgreSQL's own abort would release it too, but only in a
//! process that runs transactions).

use pgrx::pg_sys;

pub struct LwLockGuard(*mut pg_sys::LWLock);

impl LwLockGuard {
    /// Takes `lock` exclusively. Interrupts are held off until the guard drops: keep the section
    /// short, and never wait in it for anything another process may need the lock for.
    ///
    /// # Safety
    /// `lock` points at an initialised LWLock in shared memory.
    pub unsafe fn exclusive(lock: *mut pg_sys::LWLock) -> LwLockGuard {
        // SAFETY: per the caller's contract.
        unsafe { pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE) };
        LwLockGuard(lock)
    }
}

impl Drop for LwLockGuard {
    fn drop(&mut self) {
        // SAFETY: acquired in `exclusive` by this process and not released since.
        unsafe { pg_sys::LWLockRelease(self.0) };
    }
}
