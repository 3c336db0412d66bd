//! A backend's side of segment mode: it finds its type's slot in the shared cache once (and
//! remembers it), takes IDs under the slot's spinlock, and when the cache is dry waits on the
//! slot's condition variable for the allocator (allocator_worker.rs), which commits the next range
//! before publishing it. Whole ranges for clients go through a request cell the same way. Also
//! what the admin functions tell the cache (a type dropped or moved, a step changed).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::{Duration, Instant};

use pgrx::{pg_sys, PgSqlErrorCode};

use super::allocator_worker;
use super::cache::{self, Key, Locked, RequestCell, RequestState};
use super::errors::{segment_fault_error, timed_out, unknown_type};
use super::table;
use crate::gucs;
use crate::pg::backend_local::BackendLocal;
use crate::pg::errors::{invalid, not_ready, required, IdError};
use pg_idgen_core::segment::{Fault, Range, SegmentState, Take};

/// A business type's name to its `(slot, generation)` in the shared cache.
type SlotMap = HashMap<Vec<u8>, (usize, u64), BuildHasherDefault<Fnv1a>>;

/// This backend's map of the types it has used.
static SLOTS: BackendLocal<SlotMap> =
    BackendLocal::new(HashMap::with_hasher(BuildHasherDefault::new()));

/// FNV-1a for SLOTS. Its keys are names this backend found in idgen.segments (a name is added
/// only once the type exists), so a keyed hash's defence against chosen collisions buys nothing
/// there, and the standard SipHash was a quarter of segment_next()'s instructions.
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

fn db() -> u32 {
    // SAFETY: set once the backend is connected to its database, before any function runs.
    unsafe { pg_sys::MyDatabaseId }.to_u32()
}

/// The name as a key, or an ERROR for NULL, empty or too long names.
pub fn key_of(func: &str, biz_type: Option<&str>) -> Key {
    let name = required(func, "biz_type", biz_type);
    Key::new(db(), name.as_bytes()).unwrap_or_else(|| {
        invalid(format!(
            "{func}: biz_type must be 1 to {} bytes long, not {}",
            cache::KEY_MAX,
            name.len()
        ))
        .raise()
    })
}

/// Ranges are committed to idgen.segments, which only a primary can write.
fn refuse_on_standby() {
    crate::pg::recovery::refuse_on_standby(
        "allocate segment IDs",
        "Call segment_next() on the primary; ranges are committed to idgen.segments there.",
    );
}

/// A single-user server (postgres --single) runs no background worker, so no allocator: refuse at
/// once rather than wait idgen.segment_wait_timeout for a worker slot that never comes.
fn refuse_in_single_user() {
    // SAFETY: a flag PostgreSQL sets once, at the start of the process.
    if unsafe { !pg_sys::IsUnderPostmaster } {
        IdError::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "this needs pg_idgen's allocator background worker, which a single-user server does not run",
        )
        .hint("Call it once the server runs normally (pg_ctl start).")
        .raise()
    }
}

/// The slot of a business type, checking that the type exists on first use in this backend.
fn resolve(key: &Key, name: &str) -> (usize, u64) {
    if let Some(hit) = SLOTS.with(|m| m.get(key.name_bytes()).copied()) {
        return hit;
    }
    if !table::type_exists(name) {
        unknown_type(name).raise();
    }
    let found = cache::find_or_insert(key).unwrap_or_else(|| {
        IdError::new(
            PgSqlErrorCode::ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
            "the segment cache is full: every slot is waiting for a range",
        )
        .hint("Raise idgen.segment_cache_size (a restart is needed) above the number of business types in use at once.")
        .raise()
    });
    SLOTS.with(|m| m.insert(key.name_bytes().to_vec(), found));
    found
}

/// Waits on a condition variable with a deadline; raises 55000 when it passes.
struct Waiter {
    prepared: bool,
    deadline: Instant,
}

impl Waiter {
    fn new() -> Waiter {
        let ms = gucs::segment_wait_timeout_ms();
        Waiter {
            prepared: false,
            deadline: Instant::now() + Duration::from_millis(ms),
        }
    }

    /// The first call only prepares (the caller must look again before sleeping, or it could
    /// miss a wake-up); later calls sleep up to 100 ms. False once the deadline has passed.
    fn sleep(&mut self, cv: *mut pg_sys::ConditionVariable) -> bool {
        // SAFETY: cv is a condition variable in our shared memory; PostgreSQL cancels a prepared
        // sleep itself if an ERROR or cancel interrupts the wait.
        unsafe {
            if !self.prepared {
                pg_sys::ConditionVariablePrepareToSleep(cv);
                self.prepared = true;
                return true;
            }
            if Instant::now() >= self.deadline {
                return false;
            }
            pg_sys::ConditionVariableTimedSleep(cv, 100, pg_sys::PG_WAIT_EXTENSION);
        }
        true
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        if self.prepared {
            // SAFETY: ends the sleep prepared above; a no-op if PostgreSQL already did.
            unsafe { pg_sys::ConditionVariableCancelSleep() };
        }
    }
}

/// Up to `want` IDs of one type: `(first, count, delta)`, waiting for a range if none is cached.
pub fn take(key: &Key, name: &str, want: i64) -> (i64, i64, i64) {
    let (mut slot, mut generation) = resolve(key, name);
    let prefetch_percent = gucs::segment_prefetch_percent();
    let mut waiter: Option<Waiter> = None;
    loop {
        let s = &cache::slots()[slot];
        s.touch();
        let took =
            s.with(|d| (d.generation == generation).then(|| d.state.take(want, prefetch_percent)));
        match took {
            None => {
                // Evicted or dropped meanwhile: look the type up again.
                drop(waiter.take());
                SLOTS.with(|m| m.remove(key.name_bytes()));
                (slot, generation) = resolve(key, name);
            }
            Some(Take::Got {
                first,
                count,
                delta,
                prefetch,
            }) => {
                if prefetch {
                    // Best effort: if the worker cannot start now, a caller that runs dry
                    // tries again and reports why.
                    let _ = allocator_worker::wake(key.db);
                }
                return (first, count, delta);
            }
            Some(Take::Failed(f)) => {
                drop(waiter.take());
                segment_fault_error(f, name).raise();
            }
            Some(Take::Wait { .. }) => {
                refuse_on_standby();
                refuse_in_single_user();
                // No worker slot free (53000): wait for one like for a range, trying again on
                // each round, and report that reason if the time runs out.
                let woke = allocator_worker::wake(key.db);
                if !waiter.get_or_insert_with(Waiter::new).sleep(s.cv()) {
                    drop(waiter.take());
                    match woke {
                        Err(e) => e.raise(),
                        Ok(()) => timed_out("a range", name).raise(),
                    }
                }
            }
        }
    }
}

/// This backend's slot among all processes (a request cell per slot).
pub(super) fn my_proc_number() -> usize {
    // SAFETY: set for every backend before it runs a query.
    #[cfg(any(feature = "pg15", feature = "pg16"))]
    let n = unsafe { (*pg_sys::MyProc).pgprocno };
    // SAFETY: as above; PGPROC.pgprocno became the global MyProcNumber in 17.
    #[cfg(not(any(feature = "pg15", feature = "pg16")))]
    let n = unsafe { pg_sys::MyProcNumber };
    n as usize
}

/// Puts a new request into this backend's `cell` (`fill` writes what is asked), pending for the
/// allocator; returns its number.
pub(super) fn ask<T: RequestCell>(cell: &Locked<T>, fill: impl FnOnce(&mut T)) -> u64 {
    refuse_in_single_user();
    cell.with(|d| {
        fill(d);
        let (seq, state) = d.header();
        *seq += 1;
        *state = RequestState::Pending;
        *seq
    })
}

/// Waits for the allocator of database `db` to answer request `seq` in `cell`, and reads the
/// answer with `read`. A worker slot that is not free is waited out like the answer (as in
/// take()). When idgen.segment_wait_timeout passes, the request is abandoned (an answer that
/// still comes is a gap, never used) and the reason the allocator could not start, or
/// `timed_out()`, is raised.
pub(super) fn await_answer<T: RequestCell, R>(
    cell: &Locked<T>,
    db: u32,
    seq: u64,
    read: impl Fn(&T) -> R,
    timed_out: impl FnOnce() -> IdError,
) -> R {
    let mut waiter = Waiter::new();
    loop {
        let answer = cell.with(|d| {
            let (s, state) = d.header();
            if *s != seq || *state != RequestState::Done {
                return None;
            }
            *state = RequestState::Free;
            Some(read(d))
        });
        if let Some(answer) = answer {
            return answer;
        }
        let woke = allocator_worker::wake(db);
        if !waiter.sleep(cell.cv()) {
            cell.with(|d| {
                let (s, state) = d.header();
                if *s == seq {
                    *state = RequestState::Free;
                }
            });
            drop(waiter);
            match woke {
                Err(e) => e.raise(),
                Ok(()) => timed_out().raise(),
            }
        }
    }
}

/// A whole committed range for a client that hands IDs out itself (tinyid-client).
pub fn alloc_range(key: &Key, name: &str) -> Range {
    refuse_on_standby();
    let me = my_proc_number();
    let Some(cell) = cache::requests().get(me) else {
        not_ready("this process cannot allocate segment ranges").raise()
    };
    let seq = ask(cell, |d| {
        d.key = *key;
        d.fault = 0;
    });
    let (range, code) = await_answer(
        cell,
        key.db,
        seq,
        |d| (d.range, d.fault),
        || timed_out("a whole range", name),
    );
    if code != 0 {
        segment_fault_error(Fault::from_code(code).unwrap_or(Fault::WorkerGone), name).raise();
    }
    range
}

pub fn forget(name: &str) {
    if let Some(key) = Key::new(db(), name.as_bytes()) {
        cache::forget(&key);
        SLOTS.with(|m| m.remove(key.name_bytes()));
    }
}

pub fn reset_step(name: &str) {
    if let Some(key) = Key::new(db(), name.as_bytes()) {
        if let Some((i, generation)) = cache::find(&key) {
            cache::slots()[i].with(|d| {
                if d.generation == generation {
                    d.state.step = 0;
                }
            });
        }
    }
}

pub fn cache_rows() -> Vec<(String, SegmentState)> {
    let db = db();
    cache::slots()
        .iter()
        .filter_map(|s| s.with(|d| (d.in_use && d.key.db == db).then(|| (d.key.name(), d.state))))
        .collect()
}
