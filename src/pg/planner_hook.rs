//! A function run over each statement's query tree before PostgreSQL plans it (planner_hook),
//! chained with the hooks of other extensions (Citus, pg_stat_statements), which run after it;
//! and what it asks to be done to the plan once made.
use std::sync::OnceLock;

use pgrx::pg_sys;
use pgrx::pg_sys::ffi::pg_guard_ffi_boundary;

/// What to do to the plan once made, if anything.
pub type After = Box<dyn FnOnce(*mut pg_sys::PlannedStmt)>;
type Before = fn(*mut pg_sys::Query, pg_sys::ParamListInfo) -> Option<After>;

/// The functions run before planning, in the order they were given (a few: one per subsystem).
static BEFORE: [OnceLock<Before>; 4] = [const { OnceLock::new() }; 4];
static mut PREV: pg_sys::planner_hook_type = None;

/// Runs `before` over the query tree of every statement planned from now on (it may change the
/// tree: the planner works on a copy of a cached plan's), with the values of the bind parameters
/// the plan is made for (NULL for a generic plan), and what it returns over the plan the planner
/// then makes of that tree. From _PG_init; each subsystem's runs after those given before it.
pub fn before_planning(before: Before) {
    let first = BEFORE[0].get().is_none();
    if !BEFORE.iter().any(|slot| slot.set(before).is_ok()) {
        panic!("planner_hook::before_planning: more subsystems than slots");
    }
    if !first {
        return;
    }
    // SAFETY: hooks are installed from _PG_init, single-threaded, chaining the previous one.
    unsafe {
        PREV = pg_sys::planner_hook;
        pg_sys::planner_hook = Some(plan);
    }
}

/// What the functions given to `before_planning` ask to be done to the plan, in their order.
fn run_before(parse: *mut pg_sys::Query, params: pg_sys::ParamListInfo) -> Option<After> {
    let afters: Vec<After> = BEFORE
        .iter()
        .map_while(|slot| slot.get())
        .filter_map(|before| before(parse, params))
        .collect();
    if afters.is_empty() {
        return None;
    }
    Some(Box::new(move |stmt| {
        afters.into_iter().for_each(|after| after(stmt))
    }))
}

#[cfg(not(feature = "pg19"))]
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn plan(
    parse: *mut pg_sys::Query,
    query_string: *const std::ffi::c_char,
    cursor_options: std::ffi::c_int,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    let after = run_before(parse, bound_params);
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
    let after = run_before(parse, bound_params);
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
