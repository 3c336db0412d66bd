//! Running code as a table's owner, the way VACUUM, ANALYZE and REFRESH MATERIALIZED VIEW do.
//!
//! Reading another role's table can run that role's code: row-level security policies, index
//! expressions, a view's functions, operators of its column types. Run as the caller, such code
//! would act with the caller's rights (an administrator's, a superuser's). Run as the owner, it
//! can do nothing its owner could not do anyway. The switch is a security-restricted operation
//! (the owner's code cannot change role, create temporary objects or leave settings behind) with
//! `search_path` set to `pg_catalog, pg_temp` for its duration.

use pgrx::pg_sys;

/// Runs `f` as `owner` in a security-restricted operation with a safe `search_path`, and puts
/// the caller's identity and settings back afterwards. An ERROR in `f` needs no catch: the abort
/// of the (sub)transaction restores the user id and pops the settings' nest level, as it does for
/// a function with SET clauses (and a catch here would re-raise the error with a Rust backtrace in
/// its DETAIL where RUST_BACKTRACE is set).
pub fn as_owner<R>(owner: pg_sys::Oid, f: impl FnOnce() -> R) -> R {
    let (mut user, mut context) = (pg_sys::Oid::INVALID, 0);
    // SAFETY: saving and switching the current user id and opening a GUC nest level, as
    // PostgreSQL's own maintenance commands do; undone below, or by the abort of an ERROR.
    let nest = unsafe {
        pg_sys::GetUserIdAndSecContext(&mut user, &mut context);
        pg_sys::SetUserIdAndSecContext(
            owner,
            context
                | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32
                | pg_sys::SECURITY_RESTRICTED_OPERATION as i32,
        );
        let nest = pg_sys::NewGUCNestLevel();
        pg_sys::set_config_option(
            c"search_path".as_ptr(),
            c"pg_catalog, pg_temp".as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_SAVE,
            true,
            0,
            false,
        );
        nest
    };
    let result = f();
    // SAFETY: undoes exactly what was done above, innermost first.
    unsafe {
        pg_sys::AtEOXact_GUC(false, nest);
        pg_sys::SetUserIdAndSecContext(user, context);
    }
    result
}
