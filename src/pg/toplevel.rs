//! A statement run as a client's simple query would be: at top level, outside any transaction
//! block, so that the commands that manage their own transactions (CREATE INDEX CONCURRENTLY,
//! DROP INDEX CONCURRENTLY) may run. Neither a function nor a procedure may run them: SPI always
//! runs a statement as part of its caller's. Only a background worker, between transactions,
//! calls this.

use std::ffi::CString;

use pgrx::pg_sys;

/// Runs `sql`, one statement, in transactions of its own: parsed, analyzed, planned and executed
/// as `exec_simple_query` does, then committed. Its ERROR propagates (the caller's catch aborts the
/// transaction it leaves).
pub fn run(sql: &str) {
    let text = CString::new(sql).expect("a statement has no NUL byte");
    // SAFETY: PostgreSQL's own sequence for a simple query, outside any transaction: a memory
    // context of our own that outlives the command's internal commits (the parse and plan trees
    // live in it, and PortalContext points at it as it would at a portal's), a transaction
    // snapshot pushed for the command to pop (CIC does), and the command's last transaction
    // committed.
    unsafe {
        assert!(
            !pg_sys::IsTransactionState(),
            "pg::toplevel::run is called between transactions"
        );
        let context = pg_sys::AllocSetContextCreateExtended(
            pg_sys::TopMemoryContext,
            c"pg_idgen top-level statement".as_ptr(),
            pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
            pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
        );
        let old = pg_sys::MemoryContextSwitchTo(context);
        let old_portal_context = pg_sys::PortalContext;
        pg_sys::PortalContext = context;
        pg_sys::StartTransactionCommand();
        // CREATE INDEX CONCURRENTLY leaves its last transaction in TopTransactionContext's care:
        // come back to ours for what follows.
        pg_sys::MemoryContextSwitchTo(context);
        let raw = pg_sys::pg_parse_query(text.as_ptr());
        assert!(
            !raw.is_null() && (*raw).length == 1,
            "pg::toplevel::run runs one statement"
        );
        let raw_stmt = pg_sys::list_nth(raw, 0) as *mut pg_sys::RawStmt;
        let queries = pg_sys::pg_analyze_and_rewrite_fixedparams(
            raw_stmt,
            text.as_ptr(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        );
        let plans = pg_sys::pg_plan_queries(
            queries,
            text.as_ptr(),
            pg_sys::CURSOR_OPT_PARALLEL_OK as i32,
            std::ptr::null_mut(),
        );
        let pstmt = pg_sys::list_nth(plans, 0) as *mut pg_sys::PlannedStmt;
        assert!(
            !(*pstmt).utilityStmt.is_null(),
            "pg::toplevel::run runs utility statements"
        );
        pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot());
        let mut qc: pg_sys::QueryCompletion = std::mem::zeroed();
        pg_sys::ProcessUtility(
            pstmt,
            text.as_ptr(),
            false,
            pg_sys::ProcessUtilityContext::PROCESS_UTILITY_TOPLEVEL,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            pg_sys::None_Receiver,
            &mut qc,
        );
        if pg_sys::ActiveSnapshotSet() {
            pg_sys::PopActiveSnapshot();
        }
        pg_sys::CommitTransactionCommand();
        pg_sys::PortalContext = old_portal_context;
        pg_sys::MemoryContextSwitchTo(old);
        pg_sys::MemoryContextDelete(context);
    }
}
