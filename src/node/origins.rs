//! The node's record of other systems' IDs (core::origins, the file `pg_idgen.origins`) in shared
//! memory: whether pg_upgrade filled this data directory without a mark (every time-based ID of
//! the node is refused), and the systems whose mark came along into this data directory (a
//! database that names only these in `idgen.node_origins` is not refused); and the databases
//! found to hold no other system's IDs, by the stamp of that table (node/origin_check.rs).

use std::path::Path;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicBool, AtomicI64, AtomicU32, AtomicU64};

use pg_idgen_core::origins::{Origins, Start, MAX_PAST};
use pgrx::pg_sys;

use crate::pg::lwlock::LwLockGuard;
use crate::pg::page_stamp::PageStamp;

#[repr(C)]
pub struct OriginsState {
    upgraded_without_mark: AtomicBool,
    count: AtomicU32,
    past: [AtomicI64; MAX_PAST],
}

impl OriginsState {
    /// Whether pg_upgrade filled this data directory and nothing has moved the clocks past the
    /// old IDs yet.
    #[inline]
    pub fn upgraded_without_mark(&self) -> bool {
        self.upgraded_without_mark.load(Acquire)
    }

    /// The systems whose mark was copied into this data directory: this node's clocks are above
    /// their IDs. Set at start, before any backend reads it.
    pub fn past(&self) -> Vec<i64> {
        let n = (self.count.load(Acquire) as usize).min(MAX_PAST);
        self.past[..n].iter().map(|s| s.load(Acquire)).collect()
    }

    fn publish(&self, o: &Origins) {
        let n = o.past.len().min(MAX_PAST);
        if n < self.count.load(Acquire) as usize {
            self.count.store(n as u32, Release);
        }
        for (cell, s) in self.past.iter().zip(&o.past) {
            cell.store(*s, Release);
        }
        self.count.store(n as u32, Release);
        self.upgraded_without_mark
            .store(o.upgraded_without_mark, Release);
    }
}

/// This database system's identifier, as pg_control_system() shows it.
pub fn system_identifier() -> i64 {
    // SAFETY: a read of a value set at startup (in the postmaster, once pg_control is read).
    unsafe { pg_sys::GetSystemIdentifier() as i64 }
}

/// At every start (and shared-memory reset), in the postmaster, with the mark just read
/// (`mark`: whether there is one, and which system wrote it): updates the record (pg_upgrade
/// without a mark; a mark copied in from the old system) and publishes it. An error leaves the
/// state as it was; the caller disables the generators.
pub(super) fn on_start(
    state: &OriginsState,
    dir: &Path,
    mark: Option<Option<i64>>,
) -> Result<(), String> {
    let record = Origins::load(dir)?;
    let start = Start {
        // SAFETY: a flag the postmaster sets from its command line (-b) before loading libraries.
        binary_upgrade: unsafe { pg_sys::IsBinaryUpgrade },
        mark,
        me: system_identifier(),
    };
    let record = match record.on_start(&start) {
        Some(next) => {
            next.store(dir)?;
            if next.upgraded_without_mark && !record.upgraded_without_mark {
                pgrx::log!("pg_idgen: this data directory is being filled by pg_upgrade and has no pg_idgen.mark; Snowflake IDs, message IDs and UUIDv7s will be refused until the old system's mark is copied in or idgen.snowflake_start_after() is run");
            }
            for s in next.past.iter().filter(|s| !record.past.contains(s)) {
                pgrx::log!("pg_idgen: this node starts above the mark of database system {s}, copied into its data directory");
            }
            next
        }
        None => record,
    };
    state.publish(&record);
    Ok(())
}

/// After `idgen.snowflake_start_after()`: the node's clocks are past the IDs of the system
/// pg_upgrade came from (the caller's time bounds them, as docs/operations.md's recipe says). Durable
/// before it returns. The systems a database names are not added to `past`: the time may bound
/// only that database's IDs. `lock` serialises the writers of the node's files (the reservation
/// lock).
pub(super) fn moved_past_upgrade(
    state: &OriginsState,
    dir: &Path,
    lock: *mut pg_sys::LWLock,
) -> Result<(), String> {
    if !state.upgraded_without_mark() {
        return Ok(());
    }
    // SAFETY: an LWLock of pg_idgen's tranche, in shared memory; held only here.
    let _lock = unsafe { LwLockGuard::exclusive(lock) };
    let mut record = Origins::load(dir)?;
    if record.upgraded_without_mark {
        record.upgraded_without_mark = false;
        record.store(dir)?;
    }
    state.publish(&record);
    Ok(())
}

/// The databases found to hold no other system's IDs, each with the stamp of its
/// `idgen.node_origins` then (pg/page_stamp.rs), in shared memory: while the stamp holds, a new
/// backend need not open the table. One slot per database OID modulo their number (a collision
/// only costs a scan); zeroed memory is empty (no database has OID 0); reset with shared memory.
#[repr(C)]
pub struct ClearDatabases {
    slots: [ClearSlot; CLEAR_SLOTS],
}

const CLEAR_SLOTS: usize = 64;

/// A sequence lock: `seq` is odd while a writer fills the slot, and a reader that sees it change
/// (or odd) reads nothing.
#[repr(C)]
struct ClearSlot {
    seq: AtomicU32,
    database: AtomicU32,
    table: AtomicU32,
    tablespace: AtomicU32,
    file: AtomicU32,
    lsn: AtomicU64,
}

impl ClearDatabases {
    fn slot(&self, database: u32) -> &ClearSlot {
        &self.slots[database as usize % CLEAR_SLOTS]
    }

    /// The stamp `database` was last found clear with, if its slot holds one.
    pub(super) fn get(&self, database: u32) -> Option<PageStamp> {
        let slot = self.slot(database);
        let seq = slot.seq.load(Acquire);
        if seq % 2 == 1 || slot.database.load(Relaxed) != database {
            return None;
        }
        let stamp = PageStamp {
            table: slot.table.load(Relaxed),
            tablespace: slot.tablespace.load(Relaxed),
            database,
            file: slot.file.load(Relaxed),
            lsn: slot.lsn.load(Relaxed),
        };
        // The reads above happen before the second look at seq.
        fence(Acquire);
        (slot.seq.load(Relaxed) == seq).then_some(stamp)
    }

    /// Records `stamp` for `database`, unless another backend is writing the slot (the next
    /// backend's scan records it then).
    pub(super) fn put(&self, database: u32, stamp: PageStamp) {
        let slot = self.slot(database);
        let seq = slot.seq.load(Relaxed);
        if seq % 2 == 1
            || slot
                .seq
                .compare_exchange(seq, seq.wrapping_add(1), Acquire, Relaxed)
                .is_err()
        {
            return;
        }
        // The stores below happen after the odd seq is seen.
        fence(Release);
        slot.database.store(database, Relaxed);
        slot.table.store(stamp.table, Relaxed);
        slot.tablespace.store(stamp.tablespace, Relaxed);
        slot.file.store(stamp.file, Relaxed);
        slot.lsn.store(stamp.lsn, Relaxed);
        slot.seq.store(seq.wrapping_add(2), Release);
    }
}
