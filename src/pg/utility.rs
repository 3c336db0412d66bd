//! A ProcessUtility hook that tells a subsystem which database a DROP DATABASE is about to drop:
//! PostgreSQL waits up to 5 s for every other process connected to it, background workers
//! included, and asks only autovacuum to leave.

use std::sync::OnceLock;

use pgrx::pg_sys;
use pgrx::pg_sys::ffi::pg_guard_ffi_boundary;
use pgrx::prelude::*;

static BEFORE_DROPDB: OnceLock<fn(pg_sys::Oid)> = OnceLock::new();
static mut PREV: pg_sys::ProcessUtility_hook_type = None;

/// Calls `callback` with the database's oid before each DROP DATABASE of an existing database
/// (it may still fail afterwards: other sessions connected, a missing privilege). Once, from
/// _PG_init.
pub fn before_drop_database(callback: fn(pg_sys::Oid)) {
    if BEFORE_DROPDB.set(callback).is_err() {
        return;
    }
    // SAFETY: hooks are installed from _PG_init, single-threaded, chaining the previous one.
    unsafe {
        PREV = pg_sys::ProcessUtility_hook;
        pg_sys::ProcessUtility_hook = Some(process_utility);
    }
}

#[pg_guard]
#[allow(clippy::too_many_arguments)]
unsafe extern "C-unwind" fn process_utility(
    pstmt: *mut pg_sys::PlannedStmt,
    query_string: *const std::ffi::c_char,
    read_only_tree: bool,
    context: pg_sys::ProcessUtilityContext::Type,
    params: pg_sys::ParamListInfo,
    query_env: *mut pg_sys::QueryEnvironment,
    dest: *mut pg_sys::DestReceiver,
    qc: *mut pg_sys::QueryCompletion,
) {
    // SAFETY: PostgreSQL passes a valid PlannedStmt; a DropdbStmt node carries a valid name.
    unsafe {
        let stmt = (*pstmt).utilityStmt;
        if !stmt.is_null() && (*stmt).type_ == pg_sys::NodeTag::T_DropdbStmt {
            let name = (*(stmt as *mut pg_sys::DropdbStmt)).dbname;
            let db = pg_sys::get_database_oid(name, true);
            if db != pg_sys::Oid::INVALID {
                if let Some(callback) = BEFORE_DROPDB.get() {
                    callback(db);
                }
            }
        }
        match PREV {
            Some(prev) => pg_guard_ffi_boundary(|| {
                prev(
                    pstmt,
                    query_string,
                    read_only_tree,
                    context,
                    params,
                    query_env,
                    dest,
                    qc,
                )
            }),
            None => pg_sys::standard_ProcessUtility(
                pstmt,
                query_string,
                read_only_tree,
                context,
                params,
                query_env,
                dest,
                qc,
            ),
        }
    }
}
