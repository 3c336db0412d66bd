//! A hint on PostgreSQL's own "permission denied" errors. PostgreSQL checks EXECUTE and SELECT
//! before any code of the function or view runs, so the only place to say which role to grant is
//! the error report itself: an `emit_log_hook`, which sees each error before it is sent to the
//! client and the log, and may add a hint where the error has none.
//!
//! PostgreSQL calls the hook only for reports that go to the server log, so with
//! `log_min_messages` above ERROR the hint is not added (the error itself is unchanged).

use std::ffi::{CStr, CString};
use std::sync::OnceLock;

use pgrx::pg_sys;
use pgrx::PgSqlErrorCode;

/// Given the name of the object a privilege error is about (the last word of its message, as
/// PostgreSQL writes it: `permission denied for function segment_create`), the hint to add.
type HintFor = fn(&str) -> Option<String>;

static HINT_FOR: OnceLock<HintFor> = OnceLock::new();
static mut PREV: pg_sys::emit_log_hook_type = None;

/// Adds `hint_for(object)` as the hint of each privilege error (42501) that has none. Once, from
/// _PG_init.
pub fn on_permission_denied(hint_for: HintFor) {
    if HINT_FOR.set(hint_for).is_err() {
        return;
    }
    // SAFETY: hooks are installed from _PG_init, single-threaded, chaining the previous one.
    unsafe {
        PREV = pg_sys::emit_log_hook;
        pg_sys::emit_log_hook = Some(emit_log);
    }
}

/// The object a privilege error names: the last word of its message, without quotes.
pub fn object_of(message: &str) -> Option<&str> {
    let last = message.trim_end().rsplit(' ').next()?;
    let name = last.trim_matches('"');
    (!name.is_empty()).then_some(name)
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
                CString::new(hint_for(object_of(&message)?)?).ok()
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

#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests {
    use super::object_of;
    use pgrx::prelude::*;

    #[pg_test]
    fn object_of_takes_the_last_word() {
        assert_eq!(
            object_of("permission denied for function segment_create"),
            Some("segment_create")
        );
        assert_eq!(
            object_of("permission denied for view \"Odd Name\""),
            Some("Name")
        );
        assert_eq!(
            object_of("permission denied for table segments "),
            Some("segments")
        );
        assert_eq!(object_of(""), None);
    }
}
