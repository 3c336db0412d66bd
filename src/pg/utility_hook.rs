//! A function run around each utility statement (ProcessUtility_hook: COPY, ALTER, TRUNCATE ...),
//! chained with the hooks of other extensions. It may leave the statement alone, run it (or
//! another statement in its place) itself through `Utility::run`, and act after it.
use std::sync::OnceLock;

use pgrx::pg_sys;
use pgrx::pg_sys::ffi::pg_guard_ffi_boundary;

/// One utility statement as PostgreSQL passed it to the hook.
pub struct Utility {
    pub pstmt: *mut pg_sys::PlannedStmt,
    query_string: *const std::ffi::c_char,
    read_only_tree: bool,
    context: pg_sys::ProcessUtilityContext::Type,
    params: pg_sys::ParamListInfo,
    query_env: *mut pg_sys::QueryEnvironment,
    dest: *mut pg_sys::DestReceiver,
    pub qc: *mut pg_sys::QueryCompletion,
}

impl Utility {
    /// The statement's parse tree.
    pub fn statement(&self) -> *mut pg_sys::Node {
        // SAFETY: PostgreSQL passes a PlannedStmt of command type CMD_UTILITY.
        unsafe { (*self.pstmt).utilityStmt }
    }

    /// Runs `pstmt` (this statement, or one made in its place) as PostgreSQL would have without
    /// the hook: through the hooks installed before this one, or the standard code.
    pub fn run(&self, pstmt: *mut pg_sys::PlannedStmt) {
        // SAFETY: the previous hook, or the standard ProcessUtility, with the arguments
        // PostgreSQL gave but the statement.
        unsafe {
            match PREV {
                Some(prev) => pg_guard_ffi_boundary(|| {
                    prev(
                        pstmt,
                        self.query_string,
                        self.read_only_tree,
                        self.context,
                        self.params,
                        self.query_env,
                        self.dest,
                        self.qc,
                    )
                }),
                None => pg_sys::standard_ProcessUtility(
                    pstmt,
                    self.query_string,
                    self.read_only_tree,
                    self.context,
                    self.params,
                    self.query_env,
                    self.dest,
                    self.qc,
                ),
            }
        }
    }
}

/// What a subsystem does with a utility statement: true when it ran it (with `Utility::run`, or
/// refused it), false to leave it to the next.
type Around = fn(&Utility) -> bool;

static AROUND: OnceLock<Around> = OnceLock::new();
static mut PREV: pg_sys::ProcessUtility_hook_type = None;

/// Runs `around` for every utility statement from now on. Once, from _PG_init.
pub fn around_utility(around: Around) {
    if AROUND.set(around).is_err() {
        return;
    }
    // SAFETY: hooks are installed from _PG_init, single-threaded, chaining the previous one.
    unsafe {
        PREV = pg_sys::ProcessUtility_hook;
        pg_sys::ProcessUtility_hook = Some(process_utility);
    }
}

#[allow(clippy::too_many_arguments)]
#[pgrx::pg_guard]
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
    let call = Utility {
        pstmt,
        query_string,
        read_only_tree,
        context,
        params,
        query_env,
        dest,
        qc,
    };
    if !AROUND.get().is_some_and(|around| around(&call)) {
        call.run(pstmt);
    }
}
