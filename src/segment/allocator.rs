//! The allocator: one background worker per database that commits segment ranges in its own
//! transactions. A caller's transaction never moves `max_id`, so its ROLLBACK cannot give a
//! range back; the worker commits first, and only then are IDs of the range handed out.
//!
//! Backends ask by marking a slot (refill) or their request cell (whole range) and setting the
//! worker's latch; the worker answers through shared memory and wakes them with the cell's
//! condition variable. A worker that is idle for a while exits (it would otherwise hold its
//! database open); the next request starts a new one.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

use super::cache::{self, AllocatorData, AllocatorState, Key, RequestState};
use crate::gucs;
use crate::pg::errors::IdError;
use crate::pg::time::{now_ms, now_us};
use crate::pg::worker_loop::{self, Next as Round};
use pg_idgen_core::segment::{next_step, plan_range, rate_floor, Fault, Range};

/// A worker exits after this long without work. Under 5 s, because DROP DATABASE waits 5 s for
/// other sessions of the database (this worker is one) to go away.
const IDLE_EXIT_MS: i64 = 4_000;
/// A start that has not checked in after this long is taken as failed.
const START_TIMEOUT_MS: i64 = 10_000;
/// Most items committed in one transaction.
const BATCH: usize = 256;

/// Whether this process is a database's allocator: its own moves of `max_id` are the ranges it
/// commits, which it publishes itself; anyone else's move invalidates the ranges cached below it.
static IS_ALLOCATOR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn is_this_process() -> bool {
    IS_ALLOCATOR.load(std::sync::atomic::Ordering::Relaxed)
}

/// Makes sure this database's allocator runs and wakes it; 53000 if it cannot start.
pub fn wake(db: u32) -> Result<(), IdError> {
    let now = now_ms();
    enum Next {
        Done,
        Start(usize),
        Full,
    }
    let table = cache::allocators();
    let next = table.with(|t| {
        if let Some(a) = t.iter_mut().find(|a| {
            a.db == db && matches!(a.state, AllocatorState::Starting | AllocatorState::Running)
        }) {
            match a.state {
                AllocatorState::Running => {
                    // SAFETY: the latch is the worker's PGPROC latch, in shared memory.
                    unsafe { pg_sys::SetLatch(a.latch) };
                    return Next::Done;
                }
                _ if now - a.since_ms < START_TIMEOUT_MS => return Next::Done,
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
                Next::Start(i)
            }
            None => Next::Full,
        }
    });
    match next {
        Next::Done => Ok(()),
        Next::Full => {
            make_room(db);
            Err(IdError::new(
                PgSqlErrorCode::ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
                format!(
                    "pg_idgen: segment allocators already run for {} databases",
                    cache::MAX_ALLOCATORS
                ),
            )
            .detail(format!(
                "Waited idgen.segment_wait_timeout ({} ms) for one of them to be idle.",
                gucs::segment_wait_timeout_ms()
            ))
            .hint("Use segment mode in fewer databases of this cluster at once."))
        }
        Next::Start(i) => {
            let started = BackgroundWorkerBuilder::new(&format!("pg_idgen segment allocator {db}"))
                .set_type("pg_idgen segment allocator")
                .set_library("pg_idgen")
                .set_function("pg_idgen_segment_allocator_main")
                .set_argument(Some(pg_sys::Datum::from(db)))
                .enable_spi_access()
                .set_start_time(BgWorkerStartTime::RecoveryFinished)
                .set_restart_time(None)
                .load_dynamic();
            if started.is_err() {
                table.with(|t| t[i].state = AllocatorState::None);
                make_room(db);
                return Err(IdError::new(
                    PgSqlErrorCode::ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
                    "pg_idgen: could not start the segment allocator worker",
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

/// What one allocation came to.
enum Outcome {
    Range(Range, i64),
    Fault(Fault),
    /// The row is locked by another transaction (an admin's UPDATE, segment_drop): try later.
    Locked,
}

enum Item {
    Refill {
        slot: usize,
        generation: u64,
        key: Key,
        prev_step: i64,
        /// µs since the last range was installed, and IDs handed out since.
        lasted_us: i64,
        used: i64,
    },
    Alloc {
        cell: usize,
        seq: u64,
        key: Key,
    },
}

impl Item {
    fn key(&self) -> &Key {
        match self {
            Item::Refill { key, .. } | Item::Alloc { key, .. } => key,
        }
    }
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pg_idgen_segment_allocator_main(arg: pg_sys::Datum) {
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
        // SAFETY: setting a GUC for this process only, as a superuser-level override.
        unsafe {
            pg_sys::SetConfigOption(
                c"synchronous_commit".as_ptr(),
                c"local".as_ptr(),
                pg_sys::GucContext::PGC_SUSET,
                pg_sys::GucSource::PGC_S_OVERRIDE,
            )
        };
    }
    // The worker runs as a superuser in a database whose owner may have set its search_path:
    // resolve names in pg_catalog only, so no one's functions or operators run as the worker.
    // SAFETY: setting a GUC for this process only.
    unsafe {
        pg_sys::SetConfigOption(
            c"search_path".as_ptr(),
            c"pg_catalog, pg_temp".as_ptr(),
            pg_sys::GucContext::PGC_SUSET,
            pg_sys::GucSource::PGC_S_OVERRIDE,
        )
    };
    let mut idle_since = now_ms();
    // How long the last transaction took to commit: sizes ranges for fast callers.
    let mut refill_latency_us = 1000;
    // SAFETY: MyProcPid is set for every process before its main function runs.
    let pid = unsafe { pg_sys::MyProcPid };
    worker_loop::run(|| {
        if told_to_leave(db, pid) {
            return Round::Stop;
        }
        let items = collect(db);
        set_idle(db, pid, items.is_empty());
        if items.is_empty() {
            if now_ms() - idle_since > IDLE_EXIT_MS {
                return Round::Stop;
            }
            return Round::After(Duration::from_millis(1000));
        }
        idle_since = now_ms();
        let started = std::time::Instant::now();
        let outcomes = BackgroundWorker::transaction(AssertUnwindSafe(|| {
            items
                .iter()
                .map(|item| allocate(item, refill_latency_us))
                .collect::<Vec<_>>()
        }));
        refill_latency_us = started.elapsed().as_micros() as i64;
        // Committed: only now may the ranges be handed out.
        let mut locked = false;
        for (item, outcome) in items.iter().zip(outcomes) {
            locked |= matches!(outcome, Outcome::Locked);
            publish(item, outcome);
        }
        if locked {
            // A row locked by another transaction: try again soon, not in a busy loop.
            Round::After(Duration::from_millis(20))
        } else {
            Round::Now
        }
    });
}

/// Before DROP DATABASE (pg/dropdb_hook.rs): the database's allocator leaves at once, so that the
/// drop does not wait for it (up to 5 s).
pub fn leave(db: pg_sys::Oid) {
    let db = db.to_u32();
    send_away(|a| a.db == db);
}

/// Tells the running allocators that `which` picks to leave, and wakes them.
fn send_away(which: impl Fn(&AllocatorData) -> bool) {
    cache::allocators().with(|t| {
        for a in t
            .iter_mut()
            .filter(|a| a.state == AllocatorState::Running && which(a))
        {
            a.state = AllocatorState::Leaving;
            // SAFETY: the latch is the worker's PGPROC latch, in shared memory.
            unsafe { pg_sys::SetLatch(a.latch) };
        }
    });
}

/// Records whether this worker has anything to do (see [`make_room`]).
fn set_idle(db: u32, pid: i32, idle: bool) {
    cache::allocators().with(|t| {
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
    cache::allocators().with(|t| {
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
    cache::allocators().with(|t| {
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
    cache::allocators().with(|t| {
        for a in t.iter_mut().filter(|a| a.db == db && a.pid == pid) {
            a.state = AllocatorState::None;
        }
    });
    for slot in cache::slots() {
        let failed = slot.with(|d| {
            let mine = d.in_use
                && d.key.db == db
                && d.state.refill == pg_idgen_core::segment::Refill::InProgress;
            if mine {
                d.state.fail(Fault::WorkerGone);
            }
            mine
        });
        if failed {
            slot.broadcast();
        }
    }
    for cell in cache::requests() {
        let failed = cell.with(|d| {
            let mine = d.state == RequestState::Working && d.key.db == db;
            if mine {
                d.fault = Fault::WorkerGone as u32;
                d.state = RequestState::Done;
            }
            mine
        });
        if failed {
            cell.broadcast();
        }
    }
}

/// Claims what this database's backends asked for, up to [`BATCH`] items.
fn collect(db: u32) -> Vec<Item> {
    let mut items = Vec::new();
    for (i, slot) in cache::slots().iter().enumerate() {
        if items.len() >= BATCH {
            return items;
        }
        let claimed = slot.with(|d| {
            (d.in_use && d.key.db == db && d.state.claim()).then_some(Item::Refill {
                slot: i,
                generation: d.generation,
                key: d.key,
                prev_step: d.state.step,
                lasted_us: now_us() - d.state.last_refill_us,
                used: (d.state.issued - d.state.issued_at_refill) as i64,
            })
        });
        items.extend(claimed);
    }
    for (i, cell) in cache::requests().iter().enumerate() {
        if items.len() >= BATCH {
            break;
        }
        let claimed = cell.with(|d| {
            (d.state == RequestState::Pending && d.key.db == db).then(|| {
                d.state = RequestState::Working;
                Item::Alloc {
                    cell: i,
                    seq: d.seq,
                    key: d.key,
                }
            })
        });
        items.extend(claimed);
    }
    items
}

/// An SPI failure that is not a PostgreSQL ERROR (those abort the worker's transaction on their
/// own): a row whose columns no longer read as pg_idgen wrote them. Logged with its cause, and
/// reported to the caller as what it is, never as a missing or locked type.
fn unreadable(name: &str, e: impl std::fmt::Display) -> Outcome {
    pgrx::warning!("pg_idgen segment allocator: the row of \"{name}\" in idgen.segments: {e}");
    Outcome::Fault(Fault::RowUnreadable)
}

/// Moves one type's `max_id` forward inside the worker's transaction. The row is locked with
/// SKIP LOCKED, so a row held by someone else's open transaction delays only its own type.
fn allocate(item: &Item, refill_latency_us: i64) -> Outcome {
    let name = item.key().name();
    Spi::connect_mut(|client| {
        let read = client
            .update(
                "SELECT max_id, step, delta, remainder FROM idgen.segments \
                 WHERE biz_type = $1 FOR UPDATE SKIP LOCKED",
                Some(1),
                &[name.as_str().into()],
            )
            .and_then(|t| {
                if t.is_empty() {
                    return Ok(None);
                }
                let t = t.first();
                Ok(Some((
                    t.get::<i64>(1)?,
                    t.get::<i32>(2)?,
                    t.get::<i32>(3)?,
                    t.get::<i32>(4)?,
                )))
            })
            .map_err(|e| e.to_string())
            .and_then(|row| match row {
                None => Ok(None),
                Some((Some(m), Some(s), Some(d), Some(r))) => {
                    Ok(Some((m, s as i64, d as i64, r as i64)))
                }
                // NOT NULL columns: a NULL here means the table was changed by hand.
                Some(_) => Err("a NULL in max_id, step, delta or remainder".to_string()),
            });
        let row = match read {
            Ok(row) => row,
            Err(e) => return unreadable(&name, e),
        };
        let Some((max_id, configured, delta, remainder)) = row else {
            let exists = match client.select(
                "SELECT 1 FROM idgen.segments WHERE biz_type = $1",
                Some(1),
                &[name.as_str().into()],
            ) {
                Ok(t) => !t.is_empty(),
                Err(e) => return unreadable(&name, e),
            };
            return if exists {
                Outcome::Locked
            } else {
                Outcome::Fault(Fault::NotFound)
            };
        };
        let step = match item {
            Item::Refill {
                prev_step,
                lasted_us,
                used,
                ..
            } => {
                let max_step = gucs::segment_max_step();
                let target_ms = gucs::segment_step_target_ms();
                let leaf = next_step(
                    *prev_step,
                    configured,
                    max_step,
                    lasted_us / 1000,
                    target_ms,
                );
                // Only once there is a previous range of this cache slot to measure.
                let floor = if *prev_step > 0 && target_ms > 0 {
                    let percent = gucs::segment_prefetch_percent();
                    rate_floor(*used, *lasted_us, refill_latency_us, percent).min(max_step)
                } else {
                    0
                };
                leaf.max(floor)
            }
            Item::Alloc { .. } => configured,
        };
        // Near the top of bigint a grown step shrinks back towards the configured one.
        let step = step.min(i64::MAX.saturating_sub(max_id)).max(configured);
        let range = match plan_range(max_id, step, delta, remainder) {
            Ok(r) => r,
            Err(f) => return Outcome::Fault(f),
        };
        let updated = client.update(
            "UPDATE idgen.segments SET max_id = $2, version = version + 1, updated_at = now() \
             WHERE biz_type = $1",
            None,
            &[name.as_str().into(), range.end.into()],
        );
        match updated {
            Ok(_) => Outcome::Range(range, step),
            Err(e) => unreadable(&name, e),
        }
    })
}

fn publish(item: &Item, outcome: Outcome) {
    match *item {
        Item::Refill {
            slot, generation, ..
        } => {
            let s = &cache::slots()[slot];
            s.with(|d| {
                // A slot forgotten or given to another type meanwhile: the range is a gap.
                if d.generation != generation {
                    return;
                }
                match outcome {
                    Outcome::Range(range, step) => d.state.install(range, step, now_us()),
                    Outcome::Fault(f) => d.state.fail(f),
                    Outcome::Locked => d.state.unclaim(),
                }
            });
            s.broadcast();
        }
        Item::Alloc { cell, seq, .. } => {
            let c = &cache::requests()[cell];
            c.with(|d| {
                if d.seq != seq || d.state != RequestState::Working {
                    return;
                }
                match outcome {
                    Outcome::Range(range, _) => {
                        d.range = range;
                        d.fault = 0;
                        d.state = RequestState::Done;
                    }
                    Outcome::Fault(f) => {
                        d.fault = f as u32;
                        d.state = RequestState::Done;
                    }
                    Outcome::Locked => d.state = RequestState::Pending,
                }
            });
            c.broadcast();
        }
    }
}
