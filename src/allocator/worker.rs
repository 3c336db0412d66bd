//! The allocator worker: one background worker per database that runs the allocator's rounds
//! (mod.rs): claim what the database's backends asked the clients for, allocate it in a
//! transaction of its own, and only once that has committed, publish the answers and wake the
//! askers. Here: the registry of workers in shared memory (start, wake, check in, leave, exit) and
//! the worker's loop.
//!
//! Backends ask by marking a cell of a client's and setting the worker's latch; the worker answers
//! through shared memory and wakes them with the cell's condition variable. A worker that is idle
//! for a while exits (it would otherwise hold its database open); the next request starts a new
//! one.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

use super::shared::{self, allocators, AllocatorData, AllocatorState, MAX_ALLOCATORS};
use super::{clients, Round};
use crate::gucs;
use crate::pg;
use crate::pg::errors::IdError;
use crate::pg::time::now_ms;
use crate::pg::worker_loop::{self, Next};

/// A worker exits after this long without work. Under 5 s, because DROP DATABASE waits 5 s for
/// other sessions of the database (this worker is one) to go away.
const IDLE_EXIT_MS: i64 = 4_000;
/// A start that has not checked in after this long is taken as failed.
const START_TIMEOUT_MS: i64 = 10_000;
/// Most claims allocated in one transaction.
const BATCH: usize = 256;

/// Whether this process is a database's allocator worker. What it writes it publishes itself, so
/// a client can tell its writes from anyone else's (segment/admin.rs: a move of `max_id` by anyone
/// else invalidates the ranges cached below it).
static IS_ALLOCATOR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn is_this_process() -> bool {
    IS_ALLOCATOR.load(std::sync::atomic::Ordering::Relaxed)
}

/// Makes sure this database's allocator runs and wakes it; 53000 if it cannot start.
pub fn wake(db: u32) -> Result<(), IdError> {
    let now = now_ms();
    enum Step {
        Done,
        Start(usize),
        Full,
    }
    let table = allocators();
    let next = table.with(|t| {
        if let Some(a) = t.iter_mut().find(|a| {
            a.db == db && matches!(a.state, AllocatorState::Starting | AllocatorState::Running)
        }) {
            match a.state {
                AllocatorState::Running => {
                    // SAFETY: the latch is the worker's PGPROC latch, in shared memory.
                    unsafe { pg_sys::SetLatch(a.latch) };
                    return Step::Done;
                }
                _ if now - a.since_ms < START_TIMEOUT_MS => return Step::Done,
                _ => a.state = AllocatorState::None,
            }
        }
        match t.iter().position(|a| a.state == AllocatorState::None) {
            Some(i) => {
                t[i] = AllocatorData {
                    db,
                    state: AllocatorState::Starting,
                    pid: 0,
                    latch: std::ptr::null_mut(),
                    since_ms: now,
                    idle: false,
                };
                Step::Start(i)
            }
            None => Step::Full,
        }
    });
    match next {
        Step::Done => Ok(()),
        Step::Full => {
            shared::count_allocator_wait(true);
            make_room(db);
            Err(IdError::new(
                PgSqlErrorCode::ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
                format!(
                    "pg_idgen: allocators already run for {} databases",
                    MAX_ALLOCATORS
                ),
            )
            .detail(format!(
                "Waited idgen.segment_wait_timeout ({} ms) for one of them to be idle.",
                gucs::segment_wait_timeout_ms()
            ))
            .hint("Use segment mode and backfills in fewer databases of this cluster at once."))
        }
        Step::Start(i) => {
            // The process title names the allocator; its type, which pg_stat_activity shows as
            // backend_type and monitoring matches on, keeps the name it had when the allocator
            // served segments alone.
            let started = BackgroundWorkerBuilder::new(&format!("pg_idgen allocator {db}"))
                .set_type("pg_idgen segment allocator")
                .set_library("pg_idgen")
                .set_function("pg_idgen_allocator_main")
                .set_argument(Some(pg_sys::Datum::from(db)))
                .enable_spi_access()
                .set_start_time(BgWorkerStartTime::RecoveryFinished)
                .set_restart_time(None)
                .load_dynamic();
            if started.is_err() {
                table.with(|t| t[i].state = AllocatorState::None);
                shared::count_allocator_wait(false);
                make_room(db);
                return Err(IdError::new(
                    PgSqlErrorCode::ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
                    "pg_idgen: could not start the allocator worker",
                )
                .detail(format!(
                    "All background worker slots were in use for idgen.segment_wait_timeout ({} ms).",
                    gucs::segment_wait_timeout_ms()
                ))
                .hint("Raise max_worker_processes to at least the number of databases that use segment mode at once plus the other workers (pg_idgen's reserver and lease keeper, parallel workers, other extensions), and restart the server."));
            }
            Ok(())
        }
    }
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pg_idgen_allocator_main(arg: pg_sys::Datum) {
    worker_loop::attach_signals();
    IS_ALLOCATOR.store(true, std::sync::atomic::Ordering::Relaxed);
    let db = arg.value() as u32;
    BackgroundWorker::connect_worker_to_spi_by_oid(Some(pg_sys::Oid::from(db)), None);
    if !check_in(db) {
        return;
    }
    // SAFETY: registering an exit callback is how a process cleans up shared state it owns.
    unsafe { pg_sys::before_shmem_exit(Some(on_exit), pg_sys::Datum::from(db)) };
    // A range must be durable before its IDs are used: an asynchronous commit lost in a crash
    // would hand the same range out again. Keep a stronger setting (remote_*) if there is one.
    // SAFETY: reading a GUC variable of this process.
    if unsafe { pg_sys::synchronous_commit }
        == pg_sys::SyncCommitLevel::SYNCHRONOUS_COMMIT_OFF as i32
    {
        pg::set_for_process(c"synchronous_commit", c"local");
    }
    // The worker runs as a superuser in a database whose owner may have set its search_path:
    // resolve names in pg_catalog only, so no one's functions or operators run as the worker.
    pg::set_for_process(c"search_path", c"pg_catalog, pg_temp");
    let mut idle_since = now_ms();
    // How long the last transaction took to commit: sizes ranges for fast callers.
    let mut commit_latency_us = 1000;
    // SAFETY: MyProcPid is set for every process before its main function runs.
    let pid = unsafe { pg_sys::MyProcPid };
    worker_loop::run(|| {
        if told_to_leave(db, pid) {
            return Next::Stop;
        }
        let mut claims = Vec::new();
        for client in clients() {
            let room = BATCH.saturating_sub(claims.len());
            if room > 0 {
                claims.extend(client.collect(db, room));
            }
        }
        set_idle(db, pid, claims.is_empty());
        if claims.is_empty() {
            if now_ms() - idle_since > IDLE_EXIT_MS {
                return Next::Stop;
            }
            return Next::After(Duration::from_millis(1000));
        }
        idle_since = now_ms();
        let started = std::time::Instant::now();
        let round = Round { commit_latency_us };
        let claims = BackgroundWorker::transaction(AssertUnwindSafe(move || {
            for claim in claims.iter_mut() {
                claim.allocate(&round);
            }
            claims
        }));
        commit_latency_us = started.elapsed().as_micros() as i64;
        // Committed: only now may the answers be handed out.
        let mut again_soon = false;
        for claim in claims {
            again_soon |= claim.publish();
        }
        if again_soon {
            // A row locked by another transaction: try again soon, not in a busy loop.
            Next::After(Duration::from_millis(20))
        } else {
            Next::Now
        }
    });
}

/// Before DROP DATABASE (pg/dropdb_hook.rs): the database's allocator leaves at once, so that the
/// drop does not wait for it (up to 5 s).
pub fn leave(db: pg_sys::Oid) {
    let db = db.to_u32();
    if send_away(|a| a.db == db) > 0 {
        // What the dropping session sees with client_min_messages = debug1 (segments.sh).
        pgrx::debug1!("pg_idgen: the allocator of database {db} leaves before DROP DATABASE");
    }
}

/// Tells the running allocators that `which` picks to leave, and wakes them; how many it told.
fn send_away(which: impl Fn(&AllocatorData) -> bool) -> usize {
    allocators().with(|t| {
        let mut told = 0;
        for a in t
            .iter_mut()
            .filter(|a| a.state == AllocatorState::Running && which(a))
        {
            a.state = AllocatorState::Leaving;
            // SAFETY: the latch is the worker's PGPROC latch, in shared memory.
            unsafe { pg_sys::SetLatch(a.latch) };
            told += 1;
        }
        told
    })
}

/// Records whether this worker has anything to do (see [`make_room`]).
fn set_idle(db: u32, pid: i32, idle: bool) {
    allocators().with(|t| {
        for a in t.iter_mut().filter(|a| a.db == db && a.pid == pid) {
            a.idle = idle;
        }
    });
}

/// No worker slot for `db`'s allocator: the idle allocators of other databases leave, so that a
/// waiting caller's next try finds a slot (they start again when their databases need them).
fn make_room(db: u32) {
    send_away(|a| a.db != db && a.idle);
}

/// Whether this worker was told to leave (its database is being dropped, or its slot is needed).
fn told_to_leave(db: u32, pid: i32) -> bool {
    allocators().with(|t| {
        t.iter()
            .any(|a| a.db == db && a.pid == pid && a.state == AllocatorState::Leaving)
    })
}

/// Marks this worker running for `db`; false if another one already is.
fn check_in(db: u32) -> bool {
    // SAFETY: MyProcPid and MyLatch are set for every process before its main function runs.
    let (pid, latch) = unsafe { (pg_sys::MyProcPid, pg_sys::MyLatch) };
    let me = AllocatorData {
        db,
        state: AllocatorState::Running,
        pid,
        latch,
        since_ms: now_ms(),
        idle: false,
    };
    allocators().with(|t| {
        if t.iter()
            .any(|a| a.db == db && a.state == AllocatorState::Running && a.pid != pid)
        {
            return false;
        }
        let i = t
            .iter()
            .position(|a| a.db == db && a.state == AllocatorState::Starting)
            .or_else(|| t.iter().position(|a| a.state == AllocatorState::None));
        match i {
            Some(i) => {
                t[i] = me;
                true
            }
            None => false,
        }
    })
}

/// At exit: leave the registry and fail what this worker had claimed, so nobody waits on it.
#[pg_guard]
unsafe extern "C-unwind" fn on_exit(_code: i32, arg: pg_sys::Datum) {
    let db = arg.value() as u32;
    // SAFETY: MyProcPid is this process's pid.
    let pid = unsafe { pg_sys::MyProcPid };
    allocators().with(|t| {
        for a in t.iter_mut().filter(|a| a.db == db && a.pid == pid) {
            a.state = AllocatorState::None;
        }
    });
    for client in clients() {
        client.fail_claimed(db);
    }
}
