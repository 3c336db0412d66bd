//! Segment mode's SQL surface: `segment_next`, `segment_next_batch`, and in schema `idgen` the
//! table, `segment_create / alter / drop / alloc` and the status view.
//!
//! A backend finds its type's slot once (and remembers it), then takes IDs under the slot's
//! spinlock. When the cache is dry it waits on the slot's condition variable for the allocator
//! (see `allocator.rs`), which commits the next range before publishing it.

mod allocator;
mod cache;
mod catalog;
mod sql;

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

use crate::gucs;
use crate::pg::errors::{batch_size, invalid, not_ready, required, IdError};
use cache::{Key, RequestState};
use pg_idgen_core::segment::{Fault, Range, SegmentState, Take};

/// From _PG_init: an allocator leaves its database as soon as a DROP DATABASE of it starts.
pub fn init() {
    crate::pg::shmem::add_region(crate::pg::shmem::Region {
        name: c"pg_idgen segments",
        size: cache::shmem_size,
        lwlocks: 1,
        attach: cache::attach,
    });
    crate::pg::dropdb_hook::before_drop_database(allocator::leave);
}

thread_local! {
    /// This backend's map from business type to `(slot, generation)`.
    static SLOTS: RefCell<HashMap<Vec<u8>, (usize, u64)>> = RefCell::new(HashMap::new());
}

fn db() -> u32 {
    // SAFETY: set once the backend is connected to its database, before any function runs.
    unsafe { pg_sys::MyDatabaseId }.to_u32()
}

/// The name as a key, or an ERROR for NULL, empty or too long names.
fn key_of(func: &str, biz_type: Option<&str>) -> Key {
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

pub(crate) fn unknown_type(name: &str) -> IdError {
    IdError::new(
        PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
        format!("business type \"{name}\" does not exist"),
    )
    .hint(
        "Create it with SELECT idgen.segment_create('<biz_type>'); a type created in an open transaction is usable once that transaction commits. If this database was restored, restore idgen.segments first (as a member of idgen_admin): a type created anew starts above the columns that default to segment_next() of it, but not above its IDs kept elsewhere.",
    )
}

/// An SPI failure reading or writing a type's row that is not a PostgreSQL ERROR (a column that
/// no longer reads as pg_idgen wrote it): reported with its cause, never as an unknown type.
pub(crate) fn unreadable_row(func: &str, name: &str, e: impl std::fmt::Display) -> IdError {
    IdError::new(
        PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
        format!("{func}: could not read or write the row of \"{name}\" in idgen.segments: {e}"),
    )
    .hint("idgen.segments must keep the columns and types pg_idgen created.")
}

fn segment_fault_error(f: Fault, name: &str) -> IdError {
    match f {
        Fault::NotFound => unknown_type(name),
        Fault::Overflow => IdError::new(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!("business type \"{name}\" has run out of IDs: its next range would pass 9223372036854775807"),
        )
        .hint("Create a new business type, or lower its step with idgen.segment_alter if a smaller range still fits."),
        Fault::WorkerGone => not_ready(format!(
            "the segment allocator exited before it committed a range for \"{name}\""
        ))
        .hint("See the server log for the reason; the next call starts a new allocator."),
        Fault::BadRow => invalid(format!(
            "business type \"{name}\" has an invalid row in idgen.segments (step, delta or remainder)"
        ))
        .hint("Fix it with idgen.segment_alter, or drop and re-create the type above its old max_id."),
        Fault::RowUnreadable => IdError::new(
            PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
            format!("the segment allocator could not read or write the row of \"{name}\" in idgen.segments"),
        )
        .hint("The server log says why (a WARNING of the allocator); idgen.segments must keep the columns and types pg_idgen created."),
    }
}

/// Ranges are committed to idgen.segments, which only a primary can write.
fn refuse_on_standby() {
    crate::pg::recovery::refuse_on_standby(
        "allocate segment IDs",
        "Call segment_next() on the primary; ranges are committed to idgen.segments there.",
    );
}

/// The slot of a business type, checking that the type exists on first use in this backend.
fn resolve(key: &Key, name: &str) -> (usize, u64) {
    if let Some(hit) = SLOTS.with(|m| m.borrow().get(key.name_bytes()).copied()) {
        return hit;
    }
    if !catalog::type_exists(name) {
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
    SLOTS.with(|m| m.borrow_mut().insert(key.name_bytes().to_vec(), found));
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

fn timed_out(what: &str, name: &str) -> IdError {
    not_ready(format!(
        "timed out waiting for the segment allocator to commit {what} for \"{name}\""
    ))
    .detail(format!(
        "Waited idgen.segment_wait_timeout ({} ms).",
        gucs::segment_wait_timeout_ms()
    ))
    .hint("A long transaction may hold the type's row in idgen.segments locked (see pg_locks), or the server log says why the allocator is failing.")
}

/// Up to `want` IDs of one type: `(first, count, delta)`, waiting for a range if none is cached.
fn take(key: &Key, name: &str, want: i64) -> (i64, i64, i64) {
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
                SLOTS.with(|m| m.borrow_mut().remove(key.name_bytes()));
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
                    let _ = allocator::wake(key.db);
                }
                return (first, count, delta);
            }
            Some(Take::Failed(f)) => {
                drop(waiter.take());
                segment_fault_error(f, name).raise();
            }
            Some(Take::Wait { .. }) => {
                refuse_on_standby();
                // No worker slot free (53000): wait for one like for a range, trying again on
                // each round, and report that reason if the time runs out.
                let woke = allocator::wake(key.db);
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

/// The next ID of a business type.
#[pg_extern(volatile, parallel_restricted)]
fn segment_next(biz_type: Option<&str>) -> i64 {
    let key = key_of("segment_next(biz_type)", biz_type);
    take(&key, biz_type.unwrap_or_default(), 1).0
}

/// `n` IDs of a business type at once, ascending.
#[pg_extern(volatile, parallel_restricted)]
fn segment_next_batch(biz_type: Option<&str>, n: Option<i32>) -> SetOfIterator<'static, i64> {
    let key = key_of("segment_next_batch(biz_type, n)", biz_type);
    let n = batch_size("segment_next_batch(biz_type, n)", n) as i64;
    let name = biz_type.unwrap_or_default();
    let mut ids = Vec::with_capacity(n as usize);
    while (ids.len() as i64) < n {
        let (first, count, delta) = take(&key, name, n - ids.len() as i64);
        ids.extend((0..count).map(|i| first + i * delta));
    }
    SetOfIterator::new(ids)
}

/// This backend's slot among all processes (a request cell per slot).
fn my_proc_number() -> usize {
    // SAFETY: set for every backend before it runs a query.
    #[cfg(any(feature = "pg15", feature = "pg16"))]
    let n = unsafe { (*pg_sys::MyProc).pgprocno };
    // SAFETY: as above; PGPROC.pgprocno became the global MyProcNumber in 17.
    #[cfg(not(any(feature = "pg15", feature = "pg16")))]
    let n = unsafe { pg_sys::MyProcNumber };
    n as usize
}

/// A whole committed range for a client that hands IDs out itself (tinyid-client).
fn alloc_range(key: &Key, name: &str) -> Range {
    refuse_on_standby();
    let me = my_proc_number();
    let Some(cell) = cache::requests().get(me) else {
        not_ready("this process cannot allocate segment ranges").raise()
    };
    let seq = cell.with(|d| {
        d.seq += 1;
        d.state = RequestState::Pending;
        d.key = *key;
        d.fault = 0;
        d.seq
    });
    let mut waiter = Waiter::new();
    loop {
        let answer = cell.with(|d| {
            (d.seq == seq && d.state == RequestState::Done).then(|| {
                d.state = RequestState::Free;
                (d.range, d.fault)
            })
        });
        match answer {
            Some((range, 0)) => return range,
            Some((_, code)) => {
                drop(waiter);
                segment_fault_error(Fault::from_code(code).unwrap_or(Fault::WorkerGone), name)
                    .raise();
            }
            None => {}
        }
        // As in take(): no worker slot free is waited out too.
        let woke = allocator::wake(key.db);
        if !waiter.sleep(cell.cv()) {
            // Abandon the request: an answer that still comes is a gap, never handed out.
            cell.with(|d| {
                if d.seq == seq {
                    d.state = RequestState::Free;
                }
            });
            drop(waiter);
            match woke {
                Err(e) => e.raise(),
                Ok(()) => timed_out("a whole range", name).raise(),
            }
        }
    }
}

pub(crate) fn forget(name: &str) {
    if let Some(key) = Key::new(db(), name.as_bytes()) {
        cache::forget(&key);
        SLOTS.with(|m| m.borrow_mut().remove(key.name_bytes()));
    }
}

pub(crate) fn reset_step(name: &str) {
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

pub(crate) fn cache_rows() -> Vec<(String, SegmentState)> {
    let db = db();
    cache::slots()
        .iter()
        .filter_map(|s| s.with(|d| (d.in_use && d.key.db == db).then(|| (d.key.name(), d.state))))
        .collect()
}

pub(crate) fn cache_usage() -> (i64, i64, i64) {
    cache::usage()
}
