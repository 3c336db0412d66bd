//! Online conversions go on by themselves after the server restarts (a crash too): the resumer,
//! a worker started once after each start, looks into every database for
//! conversions whose worker was running when the server went down and starts each one's worker
//! again, as the conversion's own role. A conversion stopped on purpose (`convert_online_stop`,
//! a cancel) or failed stays where it is.
//!
//! The resumer connects to no database (it reads the list of databases from the shared
//! catalog); for each database it starts a short-lived checker that connects to it and starts
//! the conversions' workers.

use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::prelude::*;

/// Starts the resumer: a task run once after each start of the server (pg/after_start.rs, from
/// the node's reserver, which a standby starts only once promoted: conversions change tables, so
/// only a primary runs them, and a promoted standby goes on with what its old primary was doing).
pub fn start() {
    let started = BackgroundWorkerBuilder::new("pg_idgen online conversion resumer")
        .set_type("pg_idgen")
        .set_function("pg_idgen_online_resumer_main")
        .set_library("pg_idgen")
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(None)
        .load_dynamic();
    if started.is_err() {
        pgrx::warning!(
            "pg_idgen: no background worker slot to look for online conversions to resume; idgen.convert_online_resume(table) resumes one"
        );
    }
}

/// The databases one may connect to.
fn databases() -> Vec<pg_sys::Oid> {
    BackgroundWorker::transaction(|| {
        let mut found = Vec::new();
        // SAFETY: a scan of the shared catalog pg_database in a transaction, as autovacuum's
        // launcher does it; every tuple is read before the scan ends.
        unsafe {
            pg_sys::GetTransactionSnapshot();
            let rel = pg_sys::table_open(
                pg_sys::DatabaseRelationId,
                pg_sys::AccessShareLock as pg_sys::LOCKMODE,
            );
            let scan = pg_sys::table_beginscan_catalog(rel, 0, std::ptr::null_mut());
            loop {
                let tuple = pg_sys::heap_getnext(scan, pg_sys::ScanDirection::ForwardScanDirection);
                if tuple.is_null() {
                    break;
                }
                let form = pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_database>(tuple);
                if (*form).datallowconn {
                    found.push((*form).oid);
                }
            }
            pg_sys::heap_endscan(scan);
            pg_sys::table_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        }
        found
    })
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pg_idgen_online_resumer_main(_arg: pg_sys::Datum) {
    // SAFETY: unblocking signals is the first thing a background worker does.
    unsafe { pg_sys::BackgroundWorkerUnblockSignals() };
    BackgroundWorker::connect_worker_to_spi(None, None);
    let databases = databases();
    for &db in &databases {
        let checker = BackgroundWorkerBuilder::new("pg_idgen online conversion resumer")
            .set_type("pg_idgen")
            .set_function("pg_idgen_online_checker_main")
            .set_library("pg_idgen")
            .set_extra(&u32::from(db).to_string())
            .enable_spi_access()
            .set_start_time(BgWorkerStartTime::RecoveryFinished)
            .set_restart_time(None)
            // SAFETY: this process's ID, so that the postmaster tells it of the checker.
            .set_notify_pid(unsafe { pg_sys::MyProcPid })
            .load_dynamic();
        // One database at a time: the checkers take one worker slot, not one per database.
        match checker {
            Ok(w) => {
                if w.wait_for_startup().is_ok() {
                    let _ = w.wait_for_shutdown();
                }
            }
            Err(_) => pgrx::warning!(
                "pg_idgen: no background worker slot to look for online conversions to resume in database {}; idgen.convert_online_resume(table) resumes one",
                u32::from(db)
            ),
        }
    }
    pgrx::log!(
        "pg_idgen: looked for online conversions to resume in {} databases",
        databases.len()
    );
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pg_idgen_online_checker_main(_arg: pg_sys::Datum) {
    // SAFETY: unblocking signals is the first thing a background worker does.
    unsafe { pg_sys::BackgroundWorkerUnblockSignals() };
    let db: u32 = BackgroundWorker::get_extra().parse().unwrap_or(0);
    if db == 0 {
        return;
    }
    // As the bootstrap superuser, which reads every role's conversions; each one's worker then
    // runs as that conversion's role.
    BackgroundWorker::connect_worker_to_spi_by_oid(Some(pg_sys::Oid::from(db)), None);
    let pending: Vec<(i64, pg_sys::Oid, bool)> = BackgroundWorker::transaction(|| {
        // A superuser in a database whose other roles may have put objects on the default path.
        Spi::run("SET LOCAL search_path = pg_catalog, pg_temp")
            .unwrap_or_else(|e| panic!("setting the search path: {e}"));
        let installed = Spi::get_one::<bool>(
            "SELECT pg_catalog.to_regclass('idgen_internal.online_conversions') IS NOT NULL
                AND EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'pg_idgen')",
        )
        .unwrap_or_else(|e| panic!("looking for pg_idgen's conversions: {e}"))
        .unwrap_or(false);
        if !installed {
            return Vec::new();
        }
        Spi::connect(|client| {
            client
                .select(
                    "SELECT c.id, c.role, r.rolcanlogin
                       FROM idgen_internal.online_conversions c
                       JOIN pg_catalog.pg_roles r ON r.oid = c.role
                      WHERE c.state IN ('starting', 'running')
                        AND idgen_internal.online_conversion_worker(c.id) IS NULL
                      ORDER BY c.id",
                    None,
                    &[],
                )
                .and_then(|rows| {
                    rows.map(|row| {
                        Ok((
                            row.get::<i64>(1)?.unwrap_or(0),
                            row.get::<pg_sys::Oid>(2)?.unwrap_or(pg_sys::InvalidOid),
                            row.get::<bool>(3)?.unwrap_or(false),
                        ))
                    })
                    .collect()
                })
                .unwrap_or_else(|e| panic!("reading the online conversions to resume: {e}"))
        })
    });
    for (conv, role, can_login) in pending {
        if super::BYPASS_LOGIN_CHECK == 0 && !can_login {
            pgrx::warning!(
                "pg_idgen: online conversion {conv} was running when the server stopped; its role cannot log in, which a background worker needs before PostgreSQL 17: idgen.convert_online_resume(table) resumes it"
            );
            continue;
        }
        // SAFETY: a database this process is connected to.
        let started = super::start_worker(
            conv,
            unsafe { pg_sys::MyDatabaseId },
            role,
            role,
            pg_sys::InvalidTransactionId,
        );
        match started {
            Ok(Ok(pid)) => pgrx::log!("pg_idgen: online conversion {conv} resumed (worker {pid})"),
            _ => pgrx::warning!(
                "pg_idgen: online conversion {conv} could not be resumed (no background worker started); idgen.convert_online_resume(table) resumes it"
            ),
        }
    }
}
