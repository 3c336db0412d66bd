//! Reading a small table (a catalog, or one of this extension's) the way PostgreSQL reads its
//! catalogs: a heap scan under the latest snapshot, not a query, which costs a backend's first
//! call no parse and no plan. No privilege is checked and no code of any role runs
//! (no row-level security, no operator, no view): the scan is how an extension's C code reads
//! what only its owner may read (a secret, say), on behalf of a caller who may use but never see
//! it. The latest snapshot, rather than the statement's or a REPEATABLE READ
//! transaction's, sees every change committed before the scan, so a cache filled from it and
//! cleared by the table's relcache invalidations (sent at the commit of a later change) is never
//! left older than the table.

use pgrx::pg_sys;

/// The table `schema.name` (None if it does not exist), each row's `datum(attnum)` passed to
/// `row`. The values are valid only during the call: copy what is kept.
pub fn scan_latest(
    schema: &std::ffi::CStr,
    name: &std::ffi::CStr,
    row: impl FnMut(&dyn Fn(i32) -> Option<pg_sys::Datum>),
) -> Option<pg_sys::Oid> {
    with_table(schema, name, |rel| {
        // SAFETY: rel is open and locked for the call.
        unsafe { scan_open(rel, row) };
        // SAFETY: as above.
        unsafe { (*rel).rd_id }
    })
}

/// `then` with the table `schema.name` open under AccessShareLock (None if it does not exist);
/// closed after.
pub fn with_table<T>(
    schema: &std::ffi::CStr,
    name: &std::ffi::CStr,
    then: impl FnOnce(pg_sys::Relation) -> T,
) -> Option<T> {
    let table = table_oid(schema, name)?;
    // SAFETY: table_open/table_close by the book; an ERROR inside unwinds through PostgreSQL's
    // resource owners, which release the lock.
    unsafe {
        let lock = pg_sys::AccessShareLock as pg_sys::LOCKMODE;
        let rel = pg_sys::table_open(table, lock);
        let result = then(rel);
        pg_sys::table_close(rel, lock);
        Some(result)
    }
}

/// Each row of the open table `rel`, read under the latest snapshot, its `datum(attnum)` passed to
/// `row`.
///
/// # Safety
/// `rel` is open and locked at least AccessShareLock.
pub unsafe fn scan_open(
    rel: pg_sys::Relation,
    mut row: impl FnMut(&dyn Fn(i32) -> Option<pg_sys::Datum>),
) {
    // SAFETY: the caller holds rel open and locked.
    unsafe {
        // A parallel worker may not take a snapshot of its own; it reads with the catalog snapshot
        // (NULL), and lives for one query.
        let snapshot = if pg_sys::IsInParallelMode() {
            std::ptr::null_mut()
        } else {
            pg_sys::GetLatestSnapshot()
        };
        scan_rows(rel, snapshot, |datum| {
            row(datum);
            true
        });
    }
}

/// Each row version of the open table `rel` that `snapshot` returns (NULL: the catalog snapshot),
/// its `datum(attnum)` passed to `row`, until `row` answers false; whether every row was passed.
/// The values are valid only during the call.
///
/// # Safety
/// `rel` is open and locked at least AccessShareLock; `snapshot` is NULL or lives through the call.
pub unsafe fn scan_rows(
    rel: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    mut row: impl FnMut(&dyn Fn(i32) -> Option<pg_sys::Datum>) -> bool,
) -> bool {
    // SAFETY: the caller holds rel open and locked.
    unsafe {
        // A heap scan by the book (systable_beginscan/systable_getnext/systable_endscan), as Citus
        // reads its pg_dist_local_group; the tuple's columns are read while the scan holds it. An ERROR
        // inside unwinds through PostgreSQL's resource owners, which release the scan.
        let scan = pg_sys::systable_beginscan(
            rel,
            pg_sys::InvalidOid,
            false,
            snapshot,
            0,
            std::ptr::null_mut(),
        );
        let desc = (*rel).rd_att;
        let mut every = true;
        loop {
            let tuple = pg_sys::systable_getnext(scan);
            if tuple.is_null() {
                break;
            }
            let go_on = row(&|attnum| {
                let mut isnull = false;
                let d = pg_sys::heap_getattr(tuple, attnum, desc, &mut isnull);
                (!isnull).then_some(d)
            });
            if !go_on {
                every = false;
                break;
            }
        }
        pg_sys::systable_endscan(scan);
        every
    }
}

/// The table `schema.name`, if it exists (two lookups in the catalog caches).
pub fn table_oid(schema: &std::ffi::CStr, name: &std::ffi::CStr) -> Option<pg_sys::Oid> {
    // SAFETY: catalog cache lookups by name, which raise nothing with missing_ok.
    unsafe {
        let namespace = pg_sys::get_namespace_oid(schema.as_ptr(), true);
        if namespace == pg_sys::InvalidOid {
            return None;
        }
        let table = pg_sys::get_relname_relid(name.as_ptr(), namespace);
        (table != pg_sys::InvalidOid).then_some(table)
    }
}
