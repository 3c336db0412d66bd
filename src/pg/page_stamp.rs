//! What a small table held, checked again without opening it: the stamp of a permanent table of
//! one page is the page's place (the table's file) and its WAL position (LSN). PostgreSQL writes
//! WAL for every change to such a page's rows (an insert, a delete, an update, a lock, a prune, a
//! freeze) and sets the page's LSN to that record's, so while the file still has one page whose LSN
//! is the stamp's, the page holds the same row versions. A commit or an abort writes nothing to the
//! page, which is why a stamp is only taken when no row version on it belongs to a transaction still
//! in progress (a prepared one included) nor to the caller's own: each then has one fate, and the
//! same rows are visible to every later snapshot. A change that makes a new file (TRUNCATE,
//! VACUUM FULL, CLUSTER, SET TABLESPACE, SET UNLOGGED, DROP) leaves the old one empty before it
//! releases its lock, and a second page is seen by counting pages. Checking a stamp costs a lock
//! by OID, two system calls and a pinned buffer, where opening the table costs building its
//! relation cache entry in every new backend (src/node/origin_check.rs, issue 62).

use pgrx::pg_sys;

use super::latest_scan::scan_rows;

/// A one-page table as it was read: which table, where its page lives, the page's LSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageStamp {
    pub table: u32,
    pub tablespace: u32,
    pub database: u32,
    pub file: u32,
    pub lsn: u64,
}

/// The stamp of the open table `rel`, when it is permanent and has one page, no row version on that
/// page is in progress or the caller's own, `accept` accepts every live row (it is passed each
/// row's `datum(attnum)`), and the page's LSN is the same after the scan as before; None otherwise.
///
/// # Safety
/// `rel` is an open relation, locked at least AccessShareLock.
pub unsafe fn stamp_settled(
    rel: pg_sys::Relation,
    mut accept: impl FnMut(&dyn Fn(i32) -> Option<pg_sys::Datum>) -> bool,
) -> Option<PageStamp> {
    // SAFETY: the caller holds rel open and locked; the scan is latest_scan's, with a dirty
    // snapshot that lives through it.
    unsafe {
        // A transaction that wrote anything has an xid: its own row versions look settled to a dirty
        // snapshot (and its deletions are not returned at all), yet it may still abort.
        if pg_sys::GetTopTransactionIdIfAny() != pg_sys::InvalidTransactionId {
            return None;
        }
        if (*(*rel).rd_rel).relpersistence != pg_sys::RELPERSISTENCE_PERMANENT as std::ffi::c_char {
            return None;
        }
        #[cfg(feature = "pg15")]
        let (tablespace, database, file) = {
            let n = (*rel).rd_node;
            (n.spcNode.to_u32(), n.dbNode.to_u32(), n.relNode.to_u32())
        };
        #[cfg(not(feature = "pg15"))]
        let (tablespace, database, file) = {
            let n = (*rel).rd_locator;
            (n.spcOid.to_u32(), n.dbOid.to_u32(), n.relNumber.to_u32())
        };
        let mut stamp = PageStamp {
            table: (*rel).rd_id.to_u32(),
            tablespace,
            database,
            file,
            lsn: 0,
        };
        stamp.lsn = page_lsn(&stamp)?;
        // A dirty snapshot returns the row versions of transactions in progress too, saying so in
        // xmin (an insert) or xmax (a delete) of the snapshot as it returns each; committed deletions
        // and aborted inserts are not returned.
        let mut dirty: pg_sys::SnapshotData = std::mem::zeroed();
        dirty.snapshot_type = pg_sys::SnapshotType::SNAPSHOT_DIRTY;
        let dirty: *mut pg_sys::SnapshotData = &mut dirty;
        let settled = scan_rows(rel, dirty, |datum| {
            let in_progress = (*dirty).xmin != pg_sys::InvalidTransactionId
                || (*dirty).xmax != pg_sys::InvalidTransactionId
                || (*dirty).speculativeToken != 0;
            !in_progress && accept(datum)
        });
        (settled && page_lsn(&stamp) == Some(stamp.lsn)).then_some(stamp)
    }
}

/// Whether the table still holds what it held when `stamp` was taken: its file has one page, of
/// the stamp's LSN. Reads it under AccessShareLock on the table, as opening it would (a TRUNCATE or
/// a VACUUM that shortens the file waits for it, and one that committed first has emptied the old
/// file), and releases the lock after, as closing it would (none is kept to the end of the caller's
/// transaction). If the lock is not free at once, answers false and the caller opens the table (and
/// waits there, as before), so that an OID some other table has since taken never makes it wait.
pub fn unchanged(stamp: &PageStamp) -> bool {
    let table = pg_sys::Oid::from(stamp.table);
    let lock = pg_sys::AccessShareLock as pg_sys::LOCKMODE;
    // SAFETY: a lock by OID (a tag: an OID no table has any more locks nothing of use), the page
    // read as page_lsn does, and the same lock released.
    unsafe {
        if !pg_sys::ConditionalLockRelationOid(table, lock) {
            return false;
        }
        let same = page_lsn(stamp) == Some(stamp.lsn);
        pg_sys::UnlockRelationOid(table, lock);
        same
    }
}

/// The LSN of the stamp's file's one page; None when the file is gone, empty or longer.
///
/// # Safety
/// Called in a transaction; the file's table is locked at least AccessShareLock.
unsafe fn page_lsn(stamp: &PageStamp) -> Option<u64> {
    // SAFETY: smgr and buffer calls on a file of a table the caller has locked; the buffer is
    // pinned, locked, read and released here.
    unsafe {
        #[cfg(feature = "pg15")]
        let place = pg_sys::RelFileNode {
            spcNode: pg_sys::Oid::from(stamp.tablespace),
            dbNode: pg_sys::Oid::from(stamp.database),
            relNode: pg_sys::Oid::from(stamp.file),
        };
        #[cfg(not(feature = "pg15"))]
        let place = pg_sys::RelFileLocator {
            spcOid: pg_sys::Oid::from(stamp.tablespace),
            dbOid: pg_sys::Oid::from(stamp.database),
            relNumber: pg_sys::Oid::from(stamp.file),
        };
        // A permanent table's file: no backend of its own (InvalidBackendId, INVALID_PROC_NUMBER).
        let smgr = pg_sys::smgropen(place, -1);
        let main = pg_sys::ForkNumber::MAIN_FORKNUM;
        // smgrexists keeps the file open, so the count reads that file even if the checkpointer
        // removes an emptied one meanwhile.
        if !pg_sys::smgrexists(smgr, main) || pg_sys::smgrnblocks(smgr, main) != 1 {
            return None;
        }
        let buffer = pg_sys::ReadBufferWithoutRelcache(
            place,
            main,
            0,
            pg_sys::ReadBufferMode::RBM_NORMAL,
            std::ptr::null_mut(),
            true,
        );
        // A share lock keeps out writers that set the LSN under an exclusive lock; BufferGetLSNAtomic
        // reads it under the header lock that hint-bit writers hold.
        #[cfg(not(feature = "pg19"))]
        pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_SHARE as std::ffi::c_int);
        #[cfg(feature = "pg19")]
        pg_sys::LockBufferInternal(buffer, pg_sys::BufferLockMode::BUFFER_LOCK_SHARE);
        let lsn = pg_sys::BufferGetLSNAtomic(buffer);
        pg_sys::UnlockReleaseBuffer(buffer);
        Some(lsn)
    }
}
