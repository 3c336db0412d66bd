//! Tells a subsystem which database a DROP DATABASE is about to drop: PostgreSQL then waits up to
//! 5 s for every other process connected to it, background workers included, and asks only
//! autovacuum to leave. An object access hook: dropdb() calls it for the database (after its
//! permission check, before it counts the other processes), and the hook wraps nothing else of
//! the statement.

use std::sync::OnceLock;

use pgrx::pg_sys;
use pgrx::prelude::*;

static BEFORE_DROPDB: OnceLock<fn(pg_sys::Oid)> = OnceLock::new();
static mut PREV: pg_sys::object_access_hook_type = None;

/// Calls `callback` with the database's oid before each DROP DATABASE of it (the drop may still
/// fail afterwards, for example with other sessions connected). Once, from _PG_init.
pub fn before_drop_database(callback: fn(pg_sys::Oid)) {
    if BEFORE_DROPDB.set(callback).is_err() {
        return;
    }
    // SAFETY: hooks are installed from _PG_init, single-threaded, chaining the previous one.
    unsafe {
        PREV = pg_sys::object_access_hook;
        pg_sys::object_access_hook = Some(object_access);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn object_access(
    access: pg_sys::ObjectAccessType::Type,
    class_id: pg_sys::Oid,
    object_id: pg_sys::Oid,
    sub_id: std::ffi::c_int,
    arg: *mut std::ffi::c_void,
) {
    if access == pg_sys::ObjectAccessType::OAT_DROP && class_id == pg_sys::DatabaseRelationId {
        if let Some(callback) = BEFORE_DROPDB.get() {
            callback(object_id);
        }
    }
    // SAFETY: the hook that was installed before ours, called as PostgreSQL would have.
    unsafe {
        if let Some(prev) = PREV {
            prev(access, class_id, object_id, sub_id, arg);
        }
    }
}
