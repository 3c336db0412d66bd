//! The Snowflake mark in the WAL (docs/guarantees.md, guarantee 3: a promoted standby starts above it too): every durable
//! reservation is also a record of a custom resource manager. A physical standby replays it into
//! its own mark file and shared state, so once promoted it starts above every ID its old primary
//! handed out, even if its own clock is behind. Crash recovery on the primary replays it too,
//! which covers a crash between the WAL flush and the file write.
//!
//! The WAL refers to the resource manager by number (`idgen.wal_rmgr_id`): every server that
//! replays this WAL, standbys included, must preload pg_idgen with the same number.

use std::ffi::{c_char, CString};

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::gucs;

const XLOG_IDGEN_MARK: u8 = 0x00;

static mut RMGR: pg_sys::RmgrData = pg_sys::RmgrData {
    rm_name: c"pg_idgen".as_ptr(),
    rm_redo: Some(redo),
    rm_desc: Some(desc),
    rm_identify: Some(identify),
    rm_startup: None,
    rm_cleanup: None,
    rm_mask: None,
    rm_decode: None,
};

fn rmgr_id() -> u8 {
    gucs::wal_rmgr_id()
}

/// Registers the resource manager; from `_PG_init` while preloading, as PostgreSQL requires.
/// Each mark record replayed (crash recovery, a standby) goes to `mark::replay_mark`, which
/// raises no ERROR: one would stop recovery and with it the whole server.
pub fn register() {
    // SAFETY: RMGR is a static that outlives the server; registration happens once, in the
    // postmaster, before any WAL is read or written.
    unsafe { pg_sys::RegisterCustomRmgr(rmgr_id(), &raw mut RMGR) };
}

/// Writes and flushes a mark record; returns its position once it is durable in the local WAL.
pub(super) fn log_mark(reserved_until_ms: i64) -> u64 {
    let mut bytes = reserved_until_ms.to_le_bytes();
    // SAFETY: the standard XLogBeginInsert / XLogRegisterData / XLogInsert sequence; `bytes`
    // lives until XLogInsert has copied it.
    unsafe {
        pg_sys::XLogBeginInsert();
        // (The parameter types differ between PostgreSQL versions: char * and int in 15, const
        // void * and uint32 from 16 on.)
        pg_sys::XLogRegisterData(bytes.as_mut_ptr() as _, bytes.len() as _);
        let lsn = pg_sys::XLogInsert(rmgr_id(), XLOG_IDGEN_MARK);
        pg_sys::XLogFlush(lsn);
        lsn
    }
}

/// The mark carried by a record.
///
/// # Safety
/// `record` is a decoded record handed to us by the WAL reader.
unsafe fn mark_of(record: *mut pg_sys::XLogReaderState) -> Option<i64> {
    // SAFETY: per the caller's contract; XLogRecGetData/XLogRecGetDataLen are these fields.
    unsafe {
        let rec = (*record).record;
        if (*rec).main_data_len != 8 {
            return None;
        }
        let data = std::slice::from_raw_parts((*rec).main_data as *const u8, 8);
        Some(i64::from_le_bytes(data.try_into().ok()?))
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn redo(record: *mut pg_sys::XLogReaderState) {
    // SAFETY: called by the startup process with a valid record of ours.
    match unsafe { mark_of(record) } {
        Some(ms) => super::mark::replay_mark(ms),
        None => pgrx::error!("pg_idgen: malformed Snowflake mark record in the WAL"),
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn desc(buf: pg_sys::StringInfo, record: *mut pg_sys::XLogReaderState) {
    // SAFETY: as in redo; appendStringInfoString copies the C string.
    unsafe {
        let text = match mark_of(record) {
            Some(ms) => format!("reserved_until_ms {ms}"),
            None => "malformed".to_string(),
        };
        let c = CString::new(text).unwrap_or_default();
        pg_sys::appendStringInfoString(buf, c.as_ptr());
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn identify(info: u8) -> *const c_char {
    if info & !pg_sys::XLR_INFO_MASK as u8 == XLOG_IDGEN_MARK {
        c"SNOWFLAKE_MARK".as_ptr()
    } else {
        std::ptr::null()
    }
}
