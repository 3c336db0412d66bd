//! A backend's side of the allocator: its request cell (one request at a time per client), asked
//! with `ask` and answered through shared memory, waited for with `await_answer` (or, for a
//! client's own cells, a `Waiter` on their condition variable); and the refusal where no allocator
//! can run.

use std::time::{Duration, Instant};

use pgrx::{pg_sys, PgSqlErrorCode};

use super::shared::{Locked, RequestCell, RequestState};
use crate::gucs;
use crate::pg::errors::IdError;

/// A single-user server (postgres --single) runs no background worker, so no allocator: refuse at
/// once rather than wait idgen.segment_wait_timeout for a worker slot that never comes.
pub fn refuse_in_single_user() {
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

/// This backend's slot among all processes (a request cell per slot).
pub fn my_proc_number() -> usize {
    // SAFETY: set for every backend before it runs a query.
    #[cfg(any(feature = "pg15", feature = "pg16"))]
    let n = unsafe { (*pg_sys::MyProc).pgprocno };
    // SAFETY: as above; PGPROC.pgprocno became the global MyProcNumber in 17.
    #[cfg(not(any(feature = "pg15", feature = "pg16")))]
    let n = unsafe { pg_sys::MyProcNumber };
    n as usize
}

/// Waits on a condition variable with a deadline; raises 55000 when it passes.
pub struct Waiter {
    prepared: bool,
    deadline: Instant,
}

impl Waiter {
    pub fn new() -> Waiter {
        let ms = gucs::segment_wait_timeout_ms();
        Waiter {
            prepared: false,
            deadline: Instant::now() + Duration::from_millis(ms),
        }
    }

    /// The first call only prepares (the caller must look again before sleeping, or it could
    /// miss a wake-up); later calls sleep up to 100 ms. False once the deadline has passed.
    pub fn sleep(&mut self, cv: *mut pg_sys::ConditionVariable) -> bool {
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

/// Puts a new request into this backend's `cell` (`fill` writes what is asked), pending for the
/// allocator; returns its number.
pub fn ask<T: RequestCell>(cell: &Locked<T>, fill: impl FnOnce(&mut T)) -> u64 {
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
pub fn await_answer<T: RequestCell, R>(
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
        let woke = super::worker::wake(db);
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
