//! Waiting for synchronous standbys to confirm a WAL record, as a commit waits for them.
//!
//! A reservation of the durable mark is WAL-logged but made outside any transaction, so
//! PostgreSQL's commit path never waits for it. With synchronous replication configured, a
//! standby that is promoted after its primary died must know every reservation under which the
//! primary handed out IDs: so an ID beyond the reservation waits until the record is confirmed,
//! once per reservation window, never per ID.

use pgrx::pg_sys;

/// Whether synchronous standbys are configured (this process's synchronous_standby_names).
///
/// Not the flag the checkpointer publishes in WalSndCtl: its byte changed meaning within major
/// versions (16.2's headers have a bool `sync_standbys_defined`, 15.20's the bits
/// `sync_standbys_status`), so a build against newer headers would read "not defined" on an
/// older minor release of the same major version, and never wait. The setting is the same in
/// every minor release. While the checkpointer has not yet published a change, a wait may last
/// until it has, as a commit's would.
fn sync_standbys_defined() -> bool {
    // SAFETY: a GUC string variable of this process, NULL or NUL-terminated.
    unsafe {
        let names = pg_sys::SyncRepStandbyNames;
        !names.is_null() && *names != 0
    }
}

/// The WAL position the synchronous standbys have confirmed at the level a commit would wait
/// for: this session's synchronous_commit, and at least a flush (remote_write and remote_apply
/// are kept; off and local, which would not wait at all, count as on), so no session can let the
/// whole node hand out IDs beyond what a promoted standby knows.
fn confirmed_lsn() -> u64 {
    // SAFETY: reads of a GUC variable and of an 8-byte LSN that walsenders advance under a lock;
    // an aligned 8-byte read is atomic on the platforms PostgreSQL runs on.
    unsafe {
        let mode = match pg_sys::synchronous_commit as u32 {
            pg_sys::SyncCommitLevel::SYNCHRONOUS_COMMIT_REMOTE_WRITE => pg_sys::SYNC_REP_WAIT_WRITE,
            pg_sys::SyncCommitLevel::SYNCHRONOUS_COMMIT_REMOTE_APPLY => pg_sys::SYNC_REP_WAIT_APPLY,
            _ => pg_sys::SYNC_REP_WAIT_FLUSH,
        };
        std::ptr::read_volatile(&(*pg_sys::WalSndCtl).lsn[mode as usize])
    }
}

/// Returns once synchronous standbys have confirmed `lsn`, or at once when none are configured.
/// Waits like a commit does: as long as it takes. `stop` is asked between polls (every
/// millisecond); a backend's query cancel or termination raises its ERROR from here.
pub fn wait_confirmed(lsn: u64, stop: &dyn Fn() -> Option<String>) -> Result<(), String> {
    loop {
        if !sync_standbys_defined() || confirmed_lsn() >= lsn {
            return Ok(());
        }
        if let Some(why) = stop() {
            return Err(why);
        }
        // SAFETY: a plain sleep; interrupts are serviced right after.
        unsafe { pg_sys::pg_usleep(1000) };
        pgrx::check_for_interrupts!();
    }
}
