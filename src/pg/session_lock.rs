//! A heavyweight lock a process holds for the rest of its life, as proof that it is alive and the
//! one doing something: a session-level lock of the advisory kind, in a key space of its own (the
//! tag's fourth field, which `pg_advisory_lock(bigint)` sets to 1 and `pg_advisory_lock(int,
//! int)` to 2, is `space`), so that no SQL function takes the same one. Like a session's advisory
//! locks it survives the ends of transactions, aborts included, and goes with the process: its
//! exit releases it (`ShutdownPostgres`), a crash too (the postmaster's reinitialisation).
//! pg_locks shows it, read anew at each query: `locktype` 'advisory', `classid` the high 32 bits
//! of the object, `objid` the low 32, `objsubid` the space, `pid` its holder.
//! (A session lock of the default kind would outlive a process that exits outside a transaction:
//! only the advisory kind's are released at exit.)

use pgrx::pg_sys;

/// Takes the lock on `object` in key space `space` of this database (ExclusiveLock, for the
/// session) if no other process holds it; false if one does. `space` is never 1 or 2 (those of
/// the SQL functions).
pub fn try_hold(space: u16, object: i64) -> bool {
    debug_assert!(space > 2);
    let tag = pg_sys::LOCKTAG {
        // SAFETY: this process's database, set once it connected.
        locktag_field1: u32::from(unsafe { pg_sys::MyDatabaseId }),
        locktag_field2: ((object as u64) >> 32) as u32,
        locktag_field3: (object as u64 & 0xffff_ffff) as u32,
        locktag_field4: space,
        locktag_type: pg_sys::LockTagType::LOCKTAG_ADVISORY as u8,
        locktag_lockmethodid: pg_sys::USER_LOCKMETHOD as u8,
    };
    // SAFETY: a lock request by the book, as pg_try_advisory_lock makes it: a session lock, so no
    // resource owner keeps it, and dontWait, so it returns at once; an out-of-memory ERROR in the
    // lock table unwinds.
    let got =
        unsafe { pg_sys::LockAcquire(&tag, pg_sys::ExclusiveLock as pg_sys::LOCKMODE, true, true) };
    got != pg_sys::LockAcquireResult::LOCKACQUIRE_NOT_AVAIL
}
