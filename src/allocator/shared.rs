//! The allocator's shared memory: the cells its clients' requests live in (`Locked`: data under a
//! spinlock, with a condition variable to wait on; `RequestCell`: a backend's one request at a
//! time), and the registry of allocator workers, one per database, with its counters.
//!
//! Spinlocks guard a few lines of arithmetic: no allocation, no `ereport`, no SPI while one is
//! held.

use std::cell::UnsafeCell;
use std::hint::spin_loop;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};

use pgrx::pg_sys;

/// Databases that can have an allocator at once (one worker each).
pub const MAX_ALLOCATORS: usize = 32;

/// A test-and-set lock for a few instructions of work; yields the CPU if a holder is slow.
#[repr(C)]
pub struct SpinLock(AtomicU32);

pub struct SpinGuard<'a>(&'a SpinLock);

impl SpinLock {
    pub fn lock(&self) -> SpinGuard<'_> {
        let mut spins = 0u32;
        while self
            .0
            .compare_exchange_weak(0, 1, Acquire, Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < 200 {
                spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        SpinGuard(self)
    }
}

impl Drop for SpinGuard<'_> {
    fn drop(&mut self) {
        self.0 .0.store(0, Release);
    }
}

/// Data guarded by a spinlock, with a condition variable to wait for changes of it.
#[repr(C, align(64))]
pub struct Locked<T> {
    lock: SpinLock,
    /// A CLOCK reference bit, for a client that evicts cold cells (segment slots): set on use,
    /// cleared by the eviction hand.
    referenced: AtomicU32,
    data: UnsafeCell<T>,
    cv: UnsafeCell<pg_sys::ConditionVariable>,
}

// SAFETY: `data` is only reached through `with`, under the spinlock; the condition variable is
// PostgreSQL's own cross-process primitive.
unsafe impl<T> Sync for Locked<T> {}

impl<T> Locked<T> {
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let _guard = self.lock.lock();
        // SAFETY: the spinlock gives this process exclusive access until the guard drops.
        f(unsafe { &mut *self.data.get() })
    }

    pub fn cv(&self) -> *mut pg_sys::ConditionVariable {
        self.cv.get()
    }

    pub fn touch(&self) {
        // A plain store only when needed keeps the hot path from dirtying the line twice.
        if self.referenced.load(Relaxed) == 0 {
            self.referenced.store(1, Relaxed);
        }
    }

    /// Clears the reference bit; true if it was set (a CLOCK hand passing over the cell).
    pub fn take_referenced(&self) -> bool {
        self.referenced.swap(0, Relaxed) == 1
    }

    /// Wakes every process sleeping on this cell's condition variable.
    pub fn broadcast(&self) {
        // SAFETY: the condition variable was initialised with the shared memory.
        unsafe { pg_sys::ConditionVariableBroadcast(self.cv()) };
    }
}

#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RequestState {
    Free = 0,
    Pending = 1,
    Working = 2,
    Done = 3,
}

/// A backend's cell for one request to the allocator at a time (a whole range, backfill blocks):
/// its request number and state, which cells.rs's `ask` and `await_answer` drive.
pub trait RequestCell {
    fn header(&mut self) -> (&mut u64, &mut RequestState);
}

#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AllocatorState {
    None = 0,
    Starting = 1,
    Running = 2,
    /// Its database is being dropped: it exits at once (a new one may start if the drop fails).
    Leaving = 3,
}

/// One database's allocator worker.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct AllocatorData {
    pub db: u32,
    pub state: AllocatorState,
    pub pid: i32,
    pub latch: *mut pg_sys::Latch,
    pub since_ms: i64,
    /// It found nothing to do on its last round: it may give its worker slot to a database that
    /// waits for one.
    pub idle: bool,
}

/// The registry: every database's allocator, and how often a backend waited for one.
#[repr(C)]
struct Registry {
    allocators: Locked<[AllocatorData; MAX_ALLOCATORS]>,
    /// Times a backend found no allocator slot free (every one held by another database), and
    /// times PostgreSQL had no background-worker slot to start an allocator in.
    slot_waits: AtomicU64,
    start_failures: AtomicU64,
}

static mut REGISTRY: *mut Registry = std::ptr::null_mut();

/// Bytes of the registry's block, with room to align it.
pub fn registry_size() -> usize {
    64 + size_of::<Registry>()
}

/// Lays out (when `!found`, initialises) the registry at `base`; runs in the startup hook.
///
/// # Safety
/// `base` must point at `registry_size()` bytes of shared memory, the same in every process.
pub unsafe fn attach_registry(base: *mut u8, _locks: *mut pg_sys::LWLockPadded, found: bool) {
    // SAFETY: by the contract above the aligned start leaves room for the registry.
    unsafe {
        let start = base.add(base.align_offset(64)) as *mut Registry;
        if !found {
            std::ptr::write_bytes(start as *mut u8, 0, size_of::<Registry>());
            pg_sys::ConditionVariableInit((*start).allocators.cv());
        }
        REGISTRY = start;
    }
}

fn registry() -> &'static Registry {
    // SAFETY: set in the postmaster's startup hook, before any backend exists; never changes.
    unsafe {
        let r = REGISTRY;
        assert!(!r.is_null(), "pg_idgen allocator memory is not attached");
        &*r
    }
}

pub fn allocators() -> &'static Locked<[AllocatorData; MAX_ALLOCATORS]> {
    &registry().allocators
}

/// A backend found every allocator slot in use (`full`), or no background-worker slot to start
/// one in.
pub fn count_allocator_wait(full: bool) {
    let r = registry();
    if full {
        r.slot_waits.fetch_add(1, Relaxed);
    } else {
        r.start_failures.fetch_add(1, Relaxed);
    }
}

/// `(allocators running or starting, allocator slots, waits for a slot, failed starts)` over the
/// whole cluster.
pub fn usage() -> (i64, i64, i64, i64) {
    let r = registry();
    let running = allocators().with(|t| {
        t.iter()
            .filter(|a| matches!(a.state, AllocatorState::Starting | AllocatorState::Running))
            .count()
    });
    (
        running as i64,
        MAX_ALLOCATORS as i64,
        r.slot_waits.load(Relaxed) as i64,
        r.start_failures.load(Relaxed) as i64,
    )
}
