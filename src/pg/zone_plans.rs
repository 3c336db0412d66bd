//! Plans that read the session's TimeZone while they were made, made again once it changes.
//!
//! PostgreSQL keeps a cached plan (a prepared statement's, PL/pgSQL's, an extended-protocol
//! statement's) across `SET TimeZone`: nothing in a plan it makes depends on the zone, because
//! what does (`created_at::date`, a date compared with a timestamptz) is evaluated when the plan
//! runs. A planner hook that computes something of the zone while planning (a local day's
//! instants, as constants) makes a plan that is right in that zone only. So: such a hook says so
//! (`planned_in_session_zone`), and when the session's zone changes after that, every cached plan
//! of this backend is marked invalid (PostgreSQL's `ResetPlanCache`, what it does itself on a
//! lost invalidation message), so that each is made again, in the new zone, when next used.
//!
//! PostgreSQL has no hook for a change of a setting: the TimeZone setting's own assign hook
//! (`assign_timezone`, which sets `session_timezone`) is wrapped, once, from `_PG_init`; it runs
//! on every change of the zone (SET, SET LOCAL, a function's SET clause, RESET, the end of a
//! transaction or subtransaction that undoes one, a reload of postgresql.conf), after
//! `assign_timezone` itself. It raises nothing and allocates nothing (an assign hook must not fail).
use std::sync::atomic::{AtomicBool, Ordering};

use pgrx::pg_sys;

use crate::pg::backend_local::BackendLocal;

/// The zone a plan was last made in that read it, until the plans are reset.
static READ_IN: BackendLocal<Option<usize>> = BackendLocal::new(None);
/// The TimeZone setting's assign hook before ours (`assign_timezone`).
static mut PREVIOUS: pg_sys::GucStringAssignHook = None;
/// Whether ours is in place (set in the postmaster, or the backend that loaded the library).
static WRAPPED: AtomicBool = AtomicBool::new(false);

/// Records that the plan being made reads the session's zone as it is now.
pub fn planned_in_session_zone() {
    // SAFETY: session_timezone is set in every backend once it is up.
    let zone = unsafe { pg_sys::session_timezone } as usize;
    READ_IN.with(|read| *read = Some(zone));
}

/// Wraps the TimeZone setting's assign hook. Once, from _PG_init; a setting not found, or not
/// the string it is, leaves everything as it was, and plans that read the zone must then not be
/// made (`replans_on_zone_change` says so).
pub fn init() {
    // SAFETY: PostgreSQL's table of settings, built before any library is preloaded; changed from
    // _PG_init, single-threaded, before any session sets the zone.
    unsafe {
        if WRAPPED.load(Ordering::Relaxed) {
            return;
        }
        let Some(slot) = assign_hook_of(c"TimeZone") else {
            return;
        };
        PREVIOUS = *slot;
        *slot = Some(assign);
    }
    WRAPPED.store(true, Ordering::Relaxed);
}

/// Whether a change of the zone has the cached plans made again (`init` wrapped the hook).
pub fn replans_on_zone_change() -> bool {
    WRAPPED.load(Ordering::Relaxed)
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn assign(newval: *const std::ffi::c_char, extra: *mut std::ffi::c_void) {
    // SAFETY: PostgreSQL's own hook, with what PostgreSQL passed to ours.
    unsafe {
        if let Some(previous) = PREVIOUS {
            previous(newval, extra);
        }
    }
    // SAFETY: set by assign_timezone just now.
    let now = unsafe { pg_sys::session_timezone } as usize;
    // A change while READ_IN is in use cannot happen (this runs on the backend's one thread, and
    // nothing of ours sets the zone); were it so, the plans are reset anyway.
    let changed = READ_IN
        .try_with(|read| match *read {
            Some(zone) if zone != now => {
                *read = None;
                true
            }
            _ => false,
        })
        .unwrap_or(true);
    if changed {
        // SAFETY: marks this backend's cached plans invalid; raises nothing, allocates nothing.
        unsafe { pg_sys::ResetPlanCache() };
    }
}

/// Where the assign hook of string setting `name` is kept.
///
/// SAFETY: PostgreSQL's table of settings is built.
unsafe fn assign_hook_of(name: &std::ffi::CStr) -> Option<*mut pg_sys::GucStringAssignHook> {
    // SAFETY: the record of a setting, read as the type its vartype says.
    unsafe {
        let record = setting(name)?;
        if (*record).vartype != pg_sys::config_type::PGC_STRING {
            return None;
        }
        #[cfg(not(feature = "pg19"))]
        let slot = &raw mut (*(record as *mut pg_sys::config_string)).assign_hook;
        #[cfg(feature = "pg19")]
        let slot = &raw mut (*record).__bindgen_anon_1._string.assign_hook;
        Some(slot)
    }
}

/// The record of setting `name`.
///
/// SAFETY: PostgreSQL's table of settings is built.
#[cfg(feature = "pg15")]
unsafe fn setting(name: &std::ffi::CStr) -> Option<*mut pg_sys::config_generic> {
    // SAFETY: the table and its length, as guc.c keeps them.
    unsafe {
        let all = pg_sys::get_guc_variables();
        let n = usize::try_from(pg_sys::GetNumConfigOptions()).ok()?;
        if all.is_null() {
            return None;
        }
        std::slice::from_raw_parts(all, n)
            .iter()
            .copied()
            .find(|&g| {
                !g.is_null()
                    && !(*g).name.is_null()
                    && std::ffi::CStr::from_ptr((*g).name)
                        .to_bytes()
                        .eq_ignore_ascii_case(name.to_bytes())
            })
    }
}

/// SAFETY: PostgreSQL's table of settings is built.
#[cfg(not(feature = "pg15"))]
unsafe fn setting(name: &std::ffi::CStr) -> Option<*mut pg_sys::config_generic> {
    // SAFETY: guc.c's lookup by name; with skip_errors it raises nothing for an unknown name.
    let record =
        unsafe { pg_sys::find_option(name.as_ptr(), false, true, pgrx::PgLogLevel::ERROR as i32) };
    (!record.is_null()).then_some(record)
}
