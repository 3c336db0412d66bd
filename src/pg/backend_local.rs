//! State of one backend in a plain `static` instead of a `thread_local!`: a thread-local of a
//! library PostgreSQL loads with dlopen is reached through `__tls_get_addr`, on the path of every
//! ID; a plain static is per process, and a backend is one process running our code on one thread.

use std::cell::RefCell;

pub struct BackendLocal<T>(RefCell<T>);

// SAFETY: PostgreSQL runs an extension's code on a backend's one thread (pgrx refuses calls into
// PostgreSQL from any other), and each backend is its own process, forked from a postmaster that
// never touches these values; the RefCell still refuses a re-entrant use.
unsafe impl<T> Sync for BackendLocal<T> {}

impl<T> BackendLocal<T> {
    pub const fn new(value: T) -> BackendLocal<T> {
        BackendLocal(RefCell::new(value))
    }

    /// Runs `f` with this backend's value.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.0.borrow_mut())
    }

    /// `with`, or None instead of a panic when the value is in use (a re-entrant call): for a
    /// path that must not panic and has another way to go.
    #[inline(always)]
    pub fn try_with<R>(&self, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        Some(f(&mut *self.0.try_borrow_mut().ok()?))
    }
}
