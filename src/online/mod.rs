//! Online key conversion (`idgen.convert_online`, sql/install/online.sql): a 32-bit key and every
//! column that references it widened to bigint and moved onto pg_idgen while the application
//! keeps writing. The plan and each step's bookkeeping are SQL; this module adds what SQL cannot
//! do:
//!
//! - the trigger that keeps each new column equal to its old one (`online_conversion_copy`), in C
//!   so that it costs the application's writes next to nothing and runs with no rights at all;
//! - the worker that runs the steps one by one as the converting role, each in transactions of
//!   its own: a lock step with a short `lock_timeout`, retried; a copy batch by batch; an index
//!   CONCURRENTLY, which only a top-level command may build (`pg::toplevel`).
//!
//! Every step's effect and its record commit together (an index built CONCURRENTLY is found
//! again by its name), so a cancelled, killed or restarted worker leaves the conversion where
//! its last step ended; `idgen.convert_online_resume` starts a new one, and so does the resumer
//! (resume.rs) after the server restarts.

use std::time::Duration;

use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

use crate::pg;
use crate::pg::errors::IdError;

pub mod resume;

extension_sql_file!(
    "../../sql/install/online.sql",
    name = "online",
    requires = ["adopt"],
);

/// The worker's type in pg_stat_activity.
const WORKER_TYPE: &str = "pg_idgen online conversion";

/// The key space of the lock each conversion's worker holds (`objsubid` in pg_locks; ASCII "id");
/// `idgen_internal.online_conversion_worker` looks for it.
const LOCK_SPACE: u16 = 0x6964;

#[cfg(any(feature = "pg15", feature = "pg16"))]
const BYPASS_LOGIN_CHECK: u32 = 0;
#[cfg(not(any(feature = "pg15", feature = "pg16")))]
const BYPASS_LOGIN_CHECK: u32 = pg_sys::BGWORKER_BYPASS_ROLELOGINCHECK;

/// The record behind `pg_finfo_online_conversion_copy_wrapper`.
static V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };

#[no_mangle]
#[doc(hidden)]
pub extern "C" fn pg_finfo_online_conversion_copy_wrapper() -> &'static pg_sys::Pg_finfo_record {
    &V1
}

/// The trigger `idgen_internal.online_conversion_copy(old, new, ...)`, BEFORE INSERT OR UPDATE
/// FOR EACH ROW: sets each new (bigint) column to its old (smallint or integer) column's value.
///
/// # Safety
/// Called by PostgreSQL's trigger manager, with its call record.
#[pg_guard]
#[no_mangle]
pub unsafe extern "C-unwind" fn online_conversion_copy_wrapper(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: the trigger manager's call record and TriggerData, read as trigger.h's macros do;
    // the tuple is the one it passed, modified into a new one in the current memory context.
    unsafe {
        let context = (*fcinfo).context;
        if context.is_null() || (*context).type_ != pg_sys::NodeTag::T_TriggerData {
            IdError::new(
                PgSqlErrorCode::ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED,
                "idgen_internal.online_conversion_copy: not called by the trigger manager",
            )
            .hint("It is the trigger of an online key conversion (idgen.convert_online).")
            .raise();
        }
        let data = context as *mut pg_sys::TriggerData;
        let event = (*data).tg_event;
        let row = event & pg_sys::TRIGGER_EVENT_ROW != 0;
        let before = event & pg_sys::TRIGGER_EVENT_TIMINGMASK == pg_sys::TRIGGER_EVENT_BEFORE;
        let op = event & pg_sys::TRIGGER_EVENT_OPMASK;
        let trigger = (*data).tg_trigger;
        let nargs = (*trigger).tgnargs as usize;
        if !row
            || !before
            || !(op == pg_sys::TRIGGER_EVENT_INSERT || op == pg_sys::TRIGGER_EVENT_UPDATE)
            || nargs == 0
            || !nargs.is_multiple_of(2)
        {
            IdError::new(
                PgSqlErrorCode::ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED,
                "idgen_internal.online_conversion_copy: must fire BEFORE INSERT OR UPDATE FOR EACH ROW, with pairs of column names",
            )
            .raise();
        }
        let tuple = if op == pg_sys::TRIGGER_EVENT_UPDATE {
            (*data).tg_newtuple
        } else {
            (*data).tg_trigtuple
        };
        let rel = (*data).tg_relation;
        let desc = (*rel).rd_att;
        let args = std::slice::from_raw_parts((*trigger).tgargs, nargs);
        let mut columns = Vec::with_capacity(nargs / 2);
        let mut values = Vec::with_capacity(nargs / 2);
        let mut nulls = Vec::with_capacity(nargs / 2);
        for pair in args.chunks(2) {
            let from = pg_sys::SPI_fnumber(desc, pair[0]);
            let to = pg_sys::SPI_fnumber(desc, pair[1]);
            if from <= 0 || to <= 0 {
                IdError::new(
                    PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
                    "idgen_internal.online_conversion_copy: a column it copies does not exist",
                )
                .raise();
            }
            let mut null = false;
            let value = pg_sys::heap_getattr(tuple, from as i32, desc, &mut null);
            let from_type = pg_sys::SPI_gettypeid(desc, from);
            let widened = if null {
                0
            } else if from_type == pg_sys::INT2OID {
                i64::from(value.value() as i16)
            } else if from_type == pg_sys::INT4OID {
                i64::from(value.value() as i32)
            } else {
                value.value() as i64
            };
            columns.push(to as i32);
            values.push(pg_sys::Datum::from(widened));
            nulls.push(null);
        }
        let modified = pg_sys::heap_modify_tuple_by_cols(
            tuple,
            desc,
            columns.len() as i32,
            columns.as_mut_ptr(),
            values.as_mut_ptr(),
            nulls.as_mut_ptr(),
        );
        pg_sys::Datum::from(modified)
    }
}

/// Starts the worker of conversion `conv` (the caller must see its row: a member of the role
/// that started it). Returns the worker's process ID.
#[pg_extern(volatile, parallel_unsafe, sql = false)]
fn online_conversion_launch(conv: i64) -> i32 {
    // The conversion's own role, never the caller's: a member of that role (a superuser too)
    // who resumes it runs its steps, which that role wrote, with that role's rights only.
    let role = Spi::get_one_with_args::<pg_sys::Oid>(
        "SELECT role FROM idgen_internal.online_conversions WHERE id = $1",
        &[conv.into()],
    )
    .ok()
    .flatten();
    let Some(role) = role else {
        IdError::new(
            PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
            format!(
                "idgen.convert_online: there is no conversion {conv} of a role you are a member of"
            ),
        )
        .raise();
    };
    // SAFETY: reading this backend's identities and its transaction's ID.
    let (db, session_user, sec, xid) = unsafe {
        let mut user = pg_sys::InvalidOid;
        let mut sec = 0;
        pg_sys::GetUserIdAndSecContext(&mut user, &mut sec);
        (
            pg_sys::MyDatabaseId,
            pg_sys::GetSessionUserId(),
            sec,
            pg_sys::GetTopTransactionIdIfAny(),
        )
    };
    // Code that runs for another role's command (an index expression, a materialized view's
    // query, ANALYZE's functions) starts nothing that outlives that command, as PostgreSQL's own
    // rule for such operations has it.
    if sec & pg_sys::SECURITY_RESTRICTED_OPERATION as i32 != 0 {
        IdError::new(
            PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
            "idgen.convert_online: cannot start an online conversion within a security-restricted operation",
        )
        .hint("Run it in a session of its own, as the owner of the tables.")
        .raise();
    }
    let pid = match start_worker(conv, db, session_user, role, xid) {
        Ok(Ok(pid)) => pid,
        Ok(Err(status)) => IdError::new(
            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
            format!("idgen.convert_online: its background worker did not start ({status:?})"),
        )
        .hint("The server log says why; then idgen.convert_online_resume(table).")
        .raise(),
        Err(_) => IdError::new(
            PgSqlErrorCode::ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
            "idgen.convert_online: could not start its background worker",
        )
        .detail("Every background worker slot (max_worker_processes) is in use.")
        .hint("Raise max_worker_processes, or wait for another worker to end; then idgen.convert_online_resume(table).")
        .raise(),
    };
    Spi::run_with_args(
        "UPDATE idgen_internal.online_conversions SET worker_pid = $2, updated_at = clock_timestamp() WHERE id = $1",
        &[conv.into(), pid.into()],
    )
    .unwrap_or_else(|e| panic!("recording the worker of conversion {conv}: {e}"));
    pid
}

/// Registers the worker of conversion `conv` in database `db`, to connect as `session_user` and
/// run as `role` once transaction `xid` (if any) has ended, and waits for it to start.
fn start_worker(
    conv: i64,
    db: pg_sys::Oid,
    session_user: pg_sys::Oid,
    role: pg_sys::Oid,
    xid: pg_sys::TransactionId,
) -> Result<Result<i32, pgrx::bgworkers::BackgroundWorkerStatus>, ()> {
    // An error of load_dynamic is the only one: no free worker slot.
    let extra = format!(
        "{conv} {} {} {} {}",
        u32::from(db),
        u32::from(session_user),
        u32::from(role),
        u32::from(xid)
    );
    BackgroundWorkerBuilder::new(&format!("pg_idgen online conversion {conv}"))
        .set_type(WORKER_TYPE)
        .set_library("pg_idgen")
        .set_function("pg_idgen_online_conversion_main")
        .set_extra(&extra)
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(None)
        // SAFETY: this process's ID, so that the postmaster tells it of the start.
        .set_notify_pid(unsafe { pg_sys::MyProcPid })
        .load_dynamic()
        .map(|w| w.wait_for_startup())
        .map_err(|_| ())
}

/// The next step of a conversion, as `idgen_internal.online_conversion_next` gives it.
struct Step {
    number: i32,
    kind: String,
    statement: String,
    pause: Duration,
}

fn next_step(conv: i64) -> Option<Step> {
    BackgroundWorker::transaction(|| {
        Spi::connect(|client| {
            let rows = client
                .select(
                    "SELECT step, kind, statement, (extract(epoch FROM pause) * 1000)::bigint FROM idgen_internal.online_conversion_next($1)",
                    None,
                    &[conv.into()],
                )
                .unwrap_or_else(|e| panic!("reading the next step: {e}"));
            rows.into_iter().next().map(|row| Step {
                number: row.get::<i32>(1).ok().flatten().unwrap_or(0),
                kind: row.get::<String>(2).ok().flatten().unwrap_or_default(),
                statement: row.get::<String>(3).ok().flatten().unwrap_or_default(),
                pause: Duration::from_millis(
                    row.get::<i64>(4).ok().flatten().unwrap_or(0).max(0) as u64
                ),
            })
        })
    })
}

fn sql(query: &str, conv: i64, step: i32) {
    BackgroundWorker::transaction(|| {
        Spi::run_with_args(query, &[conv.into(), step.into()])
            .unwrap_or_else(|e| panic!("{query}: {e}"))
    });
}

/// One step, run to its end (a copy: every batch; a lock step: until it got its locks).
fn run_step(conv: i64, step: &Step) {
    match step.kind.as_str() {
        "lock" => loop {
            // The attempt blocks others from its first lock request (queued or granted) until
            // its commit releases its locks, recorded after it; the commit's removal of dropped
            // relations' files comes after that release and blocks no one.
            let started = std::time::Instant::now();
            let (done, released) = crate::pg::locks_released::around(|| {
                BackgroundWorker::transaction(|| {
                    Spi::get_one_with_args::<bool>(
                        "SELECT idgen_internal.online_conversion_lock_step($1, $2)",
                        &[conv.into(), step.number.into()],
                    )
                    .unwrap_or_else(|e| panic!("step {}: {e}", step.number))
                    .unwrap_or(false)
                })
            });
            let held = released
                .unwrap_or_else(std::time::Instant::now)
                .duration_since(started)
                .as_secs_f64()
                * 1000.0;
            pgrx::debug1!(
                "online conversion {conv}, step {}: locks held {held:.1} ms, the transaction took {:.1} ms",
                step.number,
                started.elapsed().as_secs_f64() * 1000.0
            );
            BackgroundWorker::transaction(|| {
                Spi::run_with_args(
                    "SELECT idgen_internal.online_conversion_lock_held($1, $2, $3, $4)",
                    &[conv.into(), step.number.into(), held.into(), done.into()],
                )
                .unwrap_or_else(|e| panic!("step {}: {e}", step.number))
            });
            if done {
                return;
            }
            if !BackgroundWorker::wait_latch(Some(Duration::from_millis(
                50 + crate::pg::strong_random::next_u64() % 200,
            ))) {
                return;
            }
        },
        "copy" => loop {
            let done = BackgroundWorker::transaction(|| {
                Spi::get_one_with_args::<bool>(
                    "SELECT idgen_internal.online_conversion_copy_batch($1, $2)",
                    &[conv.into(), step.number.into()],
                )
                .unwrap_or_else(|e| panic!("step {}: {e}", step.number))
                .unwrap_or(false)
            });
            if done {
                return;
            }
            if !step.pause.is_zero() && !BackgroundWorker::wait_latch(Some(step.pause)) {
                return;
            }
            // SAFETY: a cancel or terminate request is served here, between batches.
            unsafe { pg_sys::ProcessInterrupts() };
        },
        "concurrently" => {
            // A build an earlier worker began: done if valid, dropped and built again if not.
            let leftover = BackgroundWorker::transaction(|| {
                Spi::get_one_with_args::<String>(
                    "SELECT idgen_internal.online_conversion_index_leftover($1, $2)",
                    &[conv.into(), step.number.into()],
                )
                .unwrap_or_else(|e| panic!("step {}: {e}", step.number))
            });
            match leftover.as_deref() {
                Some("valid") => {}
                Some(drop) => {
                    crate::pg::toplevel::run(drop);
                    crate::pg::toplevel::run(&step.statement);
                }
                None => crate::pg::toplevel::run(&step.statement),
            }
            sql(
                "SELECT idgen_internal.online_conversion_step_done($1, $2)",
                conv,
                step.number,
            );
        }
        _ => sql(
            "SELECT idgen_internal.online_conversion_run_step($1, $2)",
            conv,
            step.number,
        ),
    }
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pg_idgen_online_conversion_main(_arg: pg_sys::Datum) {
    // PostgreSQL's own signal handlers stay: SIGTERM (idgen.convert_online_stop, shutdown) and
    // SIGINT (pg_cancel_backend) end the statement it runs, and with it the worker.
    let extra = BackgroundWorker::get_extra().to_string();
    let parts: Vec<u32> = extra
        .split_whitespace()
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    let conv = extra
        .split_whitespace()
        .next()
        .and_then(|p| p.parse::<i64>().ok())
        .unwrap_or(0);
    if parts.len() != 5 || conv <= 0 {
        pgrx::warning!("pg_idgen online conversion: bad arguments {extra:?}");
        return;
    }
    // SAFETY: unblocking signals is the first thing a background worker does.
    unsafe { pg_sys::BackgroundWorkerUnblockSignals() };
    let (db, session_user, user, xid) = (parts[1], parts[2], parts[3], parts[4]);
    // SAFETY: connecting is what a background worker does first. A worker the resumer starts
    // after a restart connects as the conversion's role, which may be one that cannot log in
    // (PostgreSQL 17 and later let a worker through; the resumer skips such roles on 15 and 16).
    unsafe {
        pg_sys::BackgroundWorkerInitializeConnectionByOid(
            pg_sys::Oid::from(db),
            pg_sys::Oid::from(session_user),
            BYPASS_LOGIN_CHECK,
        )
    };
    // The conversion's role (the current user of the session that started it), whatever role
    // this session connected as; SET ROLE and SET SESSION AUTHORIZATION are refused from here on,
    // as in a SECURITY DEFINER function.
    // SAFETY: setting this process's user before its first transaction.
    unsafe {
        pg_sys::SetUserIdAndSecContext(
            pg_sys::Oid::from(user),
            pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32,
        )
    };
    // Triggers, foreign keys and the conversion's own records as in any session of the
    // application, whatever session_replication_role the database or role sets: with `replica`
    // the tables of conversions would drop this worker's writes (their REPLICA trigger, for
    // logical replication's apply workers) and it would run its steps again and again.
    pg::set_for_process(c"session_replication_role", c"origin");
    // The conversion's lock, held until this process exits (idgen_internal.online_conversion_worker
    // reads it): it says this worker runs the conversion, and that no other does. (Code of the
    // conversion's own role that runs here, a trigger that calls pg_advisory_unlock_all(), could
    // let it go; only that role's own conversion would suffer.)
    if !pg::session_lock::try_hold(LOCK_SPACE, conv) {
        pgrx::log!("pg_idgen online conversion {conv}: another worker runs it");
        return;
    }
    // The launching transaction first: its rows are the conversion.
    if xid != 0 {
        BackgroundWorker::transaction(|| {
            // SAFETY: waiting for another transaction's end, inside a transaction.
            unsafe {
                pg_sys::XactLockTableWait(
                    pg_sys::TransactionId::from(xid),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    pg_sys::XLTW_Oper::XLTW_None,
                )
            }
        });
    }
    loop {
        let outcome = PgTryBuilder::new(|| {
            let Some(step) = next_step(conv) else {
                return false;
            };
            run_step(conv, &step);
            true
        })
        .catch_others(|e| {
            let (code, message) = match &e {
                pg_sys::panic::CaughtError::PostgresError(r)
                | pg_sys::panic::CaughtError::ErrorReport(r)
                | pg_sys::panic::CaughtError::RustPanic { ereport: r, .. } => {
                    (r.sql_error_code(), r.message().to_string())
                }
            };
            // SAFETY: the error left its transaction (if any) to be aborted here.
            unsafe {
                pg_sys::AbortCurrentTransaction();
                pg_sys::FlushErrorState();
            }
            let state = if code == PgSqlErrorCode::ERRCODE_QUERY_CANCELED {
                "stopped"
            } else {
                "failed"
            };
            BackgroundWorker::transaction(|| {
                Spi::run_with_args(
                    "SELECT idgen_internal.online_conversion_finish($1, $2, $3)",
                    &[conv.into(), state.into(), message.clone().into()],
                )
                .unwrap_or_else(|e| panic!("recording the failure of conversion {conv}: {e}"))
            });
            pgrx::warning!("pg_idgen online conversion {conv} {state}: {message}");
            false
        })
        .execute();
        if !outcome {
            return;
        }
    }
}

/// Tells the worker of conversion `conv` to stop (the caller must see the conversion, and its
/// worker must be running): SIGTERM ends the statement it runs and the worker with it.
#[pg_extern(volatile, parallel_unsafe, sql = false)]
fn online_conversion_stop(conv: i64) -> bool {
    // The process that holds the conversion's lock: its worker, whatever pid the row recorded.
    let pid = Spi::get_one_with_args::<i32>(
        "SELECT idgen_internal.online_conversion_worker(c.id) FROM idgen_internal.online_conversions c WHERE c.id = $1",
        &[conv.into()],
    )
    .ok()
    .flatten();
    let Some(pid) = pid else {
        return false;
    };
    // SAFETY: a signal to a process this query just found to be the conversion's worker.
    unsafe { libc::kill(pid, libc::SIGTERM) == 0 }
}

/// The stored state of conversion `conv` as the latest snapshot sees it
/// (`idgen_internal.online_conversion_latest_state`), whatever snapshot the caller's statement
/// or REPEATABLE READ transaction reads: the view asks for it when it finds no worker, to tell a
/// worker that ended the conversion after the caller's snapshot from one that was killed. None
/// for a caller who is not a member of the conversion's role (row level security's rule for the
/// table, which this scan does not go through).
#[pg_extern(volatile, parallel_unsafe, sql = false)]
fn online_conversion_latest_state(conv: i64) -> Option<String> {
    let mut found: Option<(Option<pg_sys::Oid>, Option<String>)> = None;
    pg::latest_scan::with_table(c"idgen_internal", c"online_conversions", |rel| {
        // SAFETY: rel is open and locked for the call; each column is looked up by name and read
        // while the scan holds its row, the text copied out.
        unsafe {
            let desc = (*rel).rd_att;
            let (id_at, role_at, state_at) = (
                pg_sys::SPI_fnumber(desc, c"id".as_ptr()),
                pg_sys::SPI_fnumber(desc, c"role".as_ptr()),
                pg_sys::SPI_fnumber(desc, c"state".as_ptr()),
            );
            pg::latest_scan::scan_open(rel, |datum| {
                if found.is_none() && datum(id_at).map(|d| d.value() as i64) == Some(conv) {
                    found = Some((
                        datum(role_at).map(|d| pg_sys::Oid::from(d.value() as u32)),
                        datum(state_at).and_then(|d| String::from_datum(d, false)),
                    ));
                }
            });
        }
    });
    let (role, state) = found?;
    // SAFETY: a catalog lookup of role membership, in the caller's transaction.
    let member = unsafe { pg_sys::has_privs_of_role(pg_sys::GetUserId(), role?) };
    if member {
        state
    } else {
        None
    }
}
