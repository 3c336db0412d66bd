//! A function run over each statement's query tree before PostgreSQL plans it (planner_hook),
//! chained with the hooks of other extensions (Citus, pg_stat_statements), which run after it;
//! and what it asks to be done to the plan once made.
use std::sync::OnceLock;

use pgrx::pg_sys;
use pgrx::pg_sys::ffi::pg_guard_ffi_boundary;

/// What to do to the plan once made, if anything.
pub type After = Box<dyn FnOnce(*mut pg_sys::PlannedStmt)>;
type Before = fn(*mut pg_sys::Query, pg_sys::ParamListInfo) -> Option<After>;

static BEFORE: OnceLock<Before> = OnceLock::new();
static mut PREV: pg_sys::planner_hook_type = None;

/// Runs `before` over the query tree of every statement planned from now on (it may change the
/// tree: the planner works on a copy of a cached plan's), with the values of the bind parameters
/// the plan is made for (NULL for a generic plan), and what it returns over the plan the planner
/// then makes of that tree. Once, from _PG_init.
pub fn before_planning(before: Before) {
    if BEFORE.set(before).is_err() {
        return;
    }
    // SAFETY: hooks are installed from _PG_init, single-threaded, chaining the previous one.
    unsafe {
        PREV = pg_sys::planner_hook;
        pg_sys::planner_hook = Some(plan);
    }
}

#[cfg(not(feature = "pg19"))]
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn plan(
    parse: *mut pg_sys::Query,
    query_string: *const std::ffi::c_char,
    cursor_options: std::ffi::c_int,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    let after = BEFORE.get().and_then(|before| before(parse, bound_params));
    // SAFETY: the previous hook, or the standard planner, with the arguments PostgreSQL gave.
    let stmt = unsafe {
        match PREV {
            Some(prev) => {
                pg_guard_ffi_boundary(|| prev(parse, query_string, cursor_options, bound_params))
            }
            None => pg_sys::standard_planner(parse, query_string, cursor_options, bound_params),
        }
    };
    finish(stmt, after)
}

#[cfg(feature = "pg19")]
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn plan(
    parse: *mut pg_sys::Query,
    query_string: *const std::ffi::c_char,
    cursor_options: std::ffi::c_int,
    bound_params: pg_sys::ParamListInfo,
    es: *mut pg_sys::ExplainState,
) -> *mut pg_sys::PlannedStmt {
    let after = BEFORE.get().and_then(|before| before(parse, bound_params));
    // SAFETY: the previous hook, or the standard planner, with the arguments PostgreSQL gave.
    let stmt = unsafe {
        match PREV {
            Some(prev) => pg_guard_ffi_boundary(|| {
                prev(parse, query_string, cursor_options, bound_params, es)
            }),
            None => pg_sys::standard_planner(parse, query_string, cursor_options, bound_params, es),
        }
    };
    finish(stmt, after)
}

/// The plan, after what `before` asked to be done to it.
fn finish(stmt: *mut pg_sys::PlannedStmt, after: Option<After>) -> *mut pg_sys::PlannedStmt {
    if let (Some(after), false) = (after, stmt.is_null()) {
        after(stmt);
    }
    stmt
}
