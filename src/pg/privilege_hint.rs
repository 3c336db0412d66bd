//! A hint on PostgreSQL's own "permission denied" errors. PostgreSQL checks EXECUTE and SELECT
//! before any code of the function or view runs, so the only place to say which role to grant is
//! the error report itself: an `emit_log_hook`, which sees each error before it is sent to the
//! client and the log, and may add a hint where the error has none.
//!
//! PostgreSQL calls the hook only for reports that go to the server log, so with
//! `log_min_messages` above ERROR the hint is not added (the error itself is unchanged).
//!
//! The message names a table or view without its schema, and a user's own table may have the
//! name of one of ours (`workers`, `segments`). So a hook after parse analysis (which comes before
//! any permission check of the statement) records the names of the relations in the given schemas
//! that the statement names, and a hint about a table or view is added only when the denied name
//! is one of them. That hook only reads catalog caches; the error hook does no catalog access.

use std::ffi::{CStr, CString};
use std::sync::OnceLock;

use pgrx::pg_sys;
use pgrx::PgSqlErrorCode;

use crate::pg::backend_local::BackendLocal;
use crate::pg::nodes::cells;
use pg_idgen_core::privilege_message::{about_relation, object_of};

/// Given the name of the object a privilege error is about (the last word of its message, as
/// PostgreSQL writes it: `permission denied for function segment_create`), the hint to add.
type HintFor = fn(&str) -> Option<String>;

static HINT_FOR: OnceLock<HintFor> = OnceLock::new();
/// The schemas whose relations get hints.
static SCHEMAS: OnceLock<&'static [&'static CStr]> = OnceLock::new();
static mut PREV: pg_sys::emit_log_hook_type = None;
static mut PREV_PARSE: pg_sys::post_parse_analyze_hook_type = None;
/// The names of the relations of `SCHEMAS` that the statement last analysed names.
static CHECKED: BackendLocal<Vec<String>> = BackendLocal::new(Vec::new());

/// Adds `hint_for(object)` as the hint of each privilege error (42501) that has none: for a
/// function, by its name; for a table or view, only if it is one of `schemas`'. Once, from
/// _PG_init.
pub fn on_permission_denied(hint_for: HintFor, schemas: &'static [&'static CStr]) {
    if HINT_FOR.set(hint_for).is_err() || SCHEMAS.set(schemas).is_err() {
        return;
    }
    // SAFETY: hooks are installed from _PG_init, single-threaded, chaining the previous ones.
    unsafe {
        PREV = pg_sys::emit_log_hook;
        pg_sys::emit_log_hook = Some(emit_log);
        PREV_PARSE = pg_sys::post_parse_analyze_hook;
        pg_sys::post_parse_analyze_hook = Some(after_parse);
    }
}

/// Every relation a query names: its range table, and those of its subqueries and CTEs.
///
/// SAFETY: `query` is a Query node of parse analysis, or NULL.
unsafe fn relids(query: *mut pg_sys::Query, out: &mut Vec<pg_sys::Oid>) {
    if query.is_null() || out.len() > 256 {
        return;
    }
    // SAFETY: a Query node's lists hold the node types named below.
    unsafe {
        for node in cells((*query).rtable) {
            let rte = node as *mut pg_sys::RangeTblEntry;
            match (*rte).rtekind {
                pg_sys::RTEKind::RTE_RELATION => out.push((*rte).relid),
                pg_sys::RTEKind::RTE_SUBQUERY => relids((*rte).subquery, out),
                _ => {}
            }
        }
        for node in cells((*query).cteList) {
            let q = (*(node as *mut pg_sys::CommonTableExpr)).ctequery;
            if !q.is_null() && (*q).type_ == pg_sys::NodeTag::T_Query {
                relids(q as *mut pg_sys::Query, out);
            }
        }
    }
}

/// The hook's third argument: a const pointer since PostgreSQL 19.
#[cfg(not(feature = "pg19"))]
type JumbleStatePtr = *mut pg_sys::JumbleState;
#[cfg(feature = "pg19")]
type JumbleStatePtr = *const pg_sys::JumbleState;

/// After parse analysis, before any permission check of the statement: records which relations
/// of `SCHEMAS` it names, then calls the previous hook. (A plan reused without parse analysis, as
/// PL/pgSQL reuses its own, finds the record of the last statement analysed: at worst a hint goes
/// missing, or names one of our relations which that statement used.)
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn after_parse(
    pstate: *mut pg_sys::ParseState,
    query: *mut pg_sys::Query,
    jstate: JumbleStatePtr,
) {
    let schemas = SCHEMAS.get().copied().unwrap_or_default();
    // SAFETY: reads of the current transaction's state and of the Query node passed in.
    let lookable = unsafe {
        pg_sys::IsTransactionState()
            && !query.is_null()
            && (*query).commandType != pg_sys::CmdType::CMD_UTILITY
    };
    // SAFETY: catalog cache lookups in a backend, inside a valid transaction (not an aborted one:
    // a ROLLBACK there is parse-analysed too, and a catalog lookup would fail it).
    let names = unsafe {
        if !lookable {
            Vec::new()
        } else {
            let spaces: Vec<pg_sys::Oid> = schemas
                .iter()
                .map(|s| pg_sys::get_namespace_oid(s.as_ptr(), true))
                .filter(|o| *o != pg_sys::InvalidOid)
                .collect();
            let mut names = Vec::new();
            if !spaces.is_empty() {
                let mut rels = Vec::new();
                relids(query, &mut rels);
                for rel in rels {
                    if spaces.contains(&pg_sys::get_rel_namespace(rel)) {
                        let name = pg_sys::get_rel_name(rel);
                        if !name.is_null() {
                            names.push(CStr::from_ptr(name).to_string_lossy().into_owned());
                        }
                    }
                }
            }
            names
        }
    };
    CHECKED.try_with(|c| *c = names);
    // SAFETY: the previous hook, with the arguments PostgreSQL passed.
    unsafe {
        if let Some(prev) = PREV_PARSE {
            prev(pstate, query, jstate);
        }
    }
}

// No #[pg_guard]: an ERROR raised from inside error reporting would recurse. Nothing here raises
// one: a panic is caught and the report goes on unchanged.
unsafe extern "C-unwind" fn emit_log(edata: *mut pg_sys::ErrorData) {
    // SAFETY: PostgreSQL passes the error being reported, valid for the duration of the call;
    // the current memory context is the error's, which frees the hint with the report.
    unsafe {
        if !edata.is_null()
            && (*edata).sqlerrcode == PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE as i32
            && (*edata).hint.is_null()
            && !(*edata).message.is_null()
        {
            let message = CStr::from_ptr((*edata).message)
                .to_string_lossy()
                .into_owned();
            let hint = std::panic::catch_unwind(|| {
                let hint_for = HINT_FOR.get()?;
                let object = object_of(&message)?;
                if about_relation(&message)
                    && !CHECKED
                        .try_with(|c| c.iter().any(|n| n == object))
                        .unwrap_or(false)
                {
                    return None;
                }
                CString::new(hint_for(object)?).ok()
            });
            if let Ok(Some(hint)) = hint {
                (*edata).hint = pg_sys::pstrdup(hint.as_ptr());
            }
        }
        if let Some(prev) = PREV {
            prev(edata);
        }
    }
}
