//! The read horizon's shared state (core::horizon has the protocol): one slot per backend, where a
//! transaction publishes a lower bound of the counters it takes from each ordered stream before
//! its first one, and one record per prepared transaction, which keeps that bound from PREPARE
//! TRANSACTION until COMMIT/ROLLBACK PREPARED. The slot is cleared once the transaction's end is
//! visible to new snapshots: at abort, from the transaction callback; at commit, only after every
//! transaction callback has run (a resource-release callback of the top-level transaction), since
//! some of them make the transaction's rows visible elsewhere: Citus commits a transaction that
//! wrote to several workers with COMMIT PREPARED on each from its COMMIT callback, after ours.
//!
//! Shared memory starts empty at every start and after every crash: no transaction of an earlier
//! life is still open then, except prepared ones, which survive a restart. Their bounds are not
//! kept on disk, so while one from before the start is open the horizon stays at the lowest
//! value (nothing is readable) and `idgen.read_horizon_holders` names it.

use std::ffi::c_int;
use std::sync::atomic::Ordering::*;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicU8};

use pgrx::pg_sys;
use pgrx::prelude::*;

use pg_idgen_core::generator::GeneratorState;
use pg_idgen_core::horizon::{self, EMPTY};

use super::stream::{PerStream, Stream};

/// One backend's transaction: the bound of each ordered stream it holds (EMPTY: none; always for
/// a stream readers do not page by) and its pid.
#[repr(C, align(64))]
struct Slot {
    low: PerStream<AtomicU64>,
    pid: AtomicI32,
}

/// A prepared transaction's bounds; `xid` 0 is a free record.
#[repr(C)]
struct Prepared {
    xid: AtomicU32,
    low: PerStream<AtomicU64>,
}

#[repr(C)]
struct Header {
    backends: u32,
    prepared: u32,
    /// The next transaction id when this life's first transaction took an ordered ID (0: not
    /// yet): a prepared transaction below it that holds no record may come from before the start.
    boot_xid: AtomicU32,
}

extern "C" {
    // twophase.h: `extern PGDLLIMPORT int max_prepared_xacts;` (pgrx's bindings lack it).
    static max_prepared_xacts: c_int;
}

static mut BASE: *mut u8 = std::ptr::null_mut();

/// This backend: bit `1 << stream` while its transaction holds that stream; READY once its
/// transaction callback is registered and its slot known (until then the per-row paths go the
/// full way, which sets them up).
static HELD: AtomicU8 = AtomicU8::new(0);
const READY: u8 = 0x80;
/// Set at this backend's COMMIT event while it holds a stream: the slot is cleared when the
/// top-level transaction's resources are released, after every other COMMIT callback.
const COMMITTED: u8 = 0x40;
static mut MY_SLOT: usize = usize::MAX;

fn counts() -> (usize, usize) {
    // SAFETY: read in the postmaster's shmem-request phase, after both settings are final.
    unsafe {
        (
            pg_sys::MaxBackends as usize,
            max_prepared_xacts.max(0) as usize,
        )
    }
}

fn size() -> usize {
    let (backends, prepared) = counts();
    std::mem::size_of::<Header>().next_multiple_of(64)
        + backends * std::mem::size_of::<Slot>()
        + prepared * std::mem::size_of::<Prepared>()
}

/// # Safety
/// `base` points at `size()` bytes of shared memory, the same in every process.
unsafe fn attach(base: *mut u8, _locks: *mut pg_sys::LWLockPadded, found: bool) {
    // SAFETY: as the caller promises; all-zero is a valid empty state for every field.
    unsafe {
        if !found {
            std::ptr::write_bytes(base, 0, size());
            let (backends, prepared) = counts();
            let h = base as *mut Header;
            (*h).backends = backends as u32;
            (*h).prepared = prepared as u32;
        }
        BASE = base;
    }
}

/// From `_PG_init`.
pub fn init() {
    crate::pg::shmem::add_region(crate::pg::shmem::Region {
        name: c"pg_idgen read horizon",
        size,
        lwlocks: 0,
        attach,
    });
}

fn header() -> Option<&'static Header> {
    // SAFETY: BASE is set once, in the postmaster, before any backend exists, and points at a
    // block laid out by `attach`.
    unsafe { (BASE as *const Header).as_ref() }
}

fn slots(h: &'static Header) -> &'static [Slot] {
    let start = std::mem::size_of::<Header>().next_multiple_of(64);
    // SAFETY: the block holds `backends` slots after the header, as `size` laid it out.
    unsafe {
        std::slice::from_raw_parts(
            (h as *const Header as *const u8).add(start) as *const Slot,
            h.backends as usize,
        )
    }
}

fn prepared(h: &'static Header) -> &'static [Prepared] {
    let start = std::mem::size_of::<Header>().next_multiple_of(64)
        + h.backends as usize * std::mem::size_of::<Slot>();
    // SAFETY: the records follow the slots, as `size` laid them out.
    unsafe {
        std::slice::from_raw_parts(
            (h as *const Header as *const u8).add(start) as *const Prepared,
            h.prepared as usize,
        )
    }
}

/// The per-row paths' part, before they take a counter of `stream` from `st`: true when this
/// transaction holds the stream (now, or from an earlier ID). False, having published nothing,
/// when this backend is not set up yet: the caller goes its full path, which calls `hold`.
#[inline(always)]
pub(super) fn hold_fast(stream: Stream, st: &GeneratorState) -> bool {
    let held = HELD.load(Relaxed);
    debug_assert!(
        stream.ordered(),
        "a horizon is kept for ordered streams only"
    );
    let bit = 1u8 << stream as u8;
    if held & bit != 0 {
        return true;
    }
    if held & READY == 0 {
        return false;
    }
    publish(stream, st, held | bit);
    true
}

/// Before a counter of `stream` is taken from `st` in this transaction: publishes the bound
/// unless it is published already, setting this backend up first if needed.
pub fn hold(stream: Stream, st: &GeneratorState) {
    if HELD.load(Relaxed) & READY == 0 {
        set_up();
    }
    if !hold_fast(stream, st) {
        unreachable!("pg_idgen: the read horizon's slot is set up above");
    }
}

#[inline(always)]
fn publish(stream: Stream, st: &GeneratorState, held: u8) {
    // SAFETY: MY_SLOT is set with READY, by this process, before it is read.
    let slot = unsafe { MY_SLOT };
    let Some(h) = header() else { return };
    let (last, _) = st.last();
    // Sequentially consistent, as the counter's compare-and-swap that follows: a reader that
    // loads the counter after that swap sees this store (core::horizon).
    slots(h)[slot].low[stream].store(horizon::low_for(last), SeqCst);
    HELD.store(held, Relaxed);
}

#[cold]
fn set_up() {
    let Some(h) = header() else {
        return;
    };
    // SAFETY: MyProc and ProcGlobal are set for every backend before any function runs.
    let index = unsafe { pg_sys::MyProc.offset_from((*pg_sys::ProcGlobal).allProcs) };
    if index < 0 || index as usize >= h.backends as usize {
        crate::pg::errors::IdError::new(
            pgrx::PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "pg_idgen: this process has no read-horizon slot",
        )
        .detail("Only client backends and background workers make ordered IDs.")
        .raise();
    }
    if h.boot_xid.load(SeqCst) == 0 {
        // SAFETY: reads the next transaction id under XidGenLock; no side effect.
        let next = unsafe { pg_sys::ReadNextFullTransactionId() }.value as u32;
        let _ = h.boot_xid.compare_exchange(0, next.max(3), SeqCst, SeqCst);
    }
    // SAFETY: registered once per backend; the callback only clears this backend's slot, and at
    // PRE_PREPARE copies it (raising an ERROR there aborts the PREPARE, as it should).
    unsafe {
        MY_SLOT = index as usize;
        slots(h)[index as usize]
            .pid
            .store(pg_sys::MyProcPid, Relaxed);
        pg_sys::RegisterXactCallback(Some(on_xact), std::ptr::null_mut());
        pg_sys::RegisterResourceReleaseCallback(Some(on_release), std::ptr::null_mut());
        pg_sys::before_shmem_exit(Some(on_exit), pg_sys::Datum::from(0));
    }
    HELD.store(READY, Relaxed);
}

/// Clears this backend's slot: its transaction's end is visible to new snapshots.
fn release() {
    let held = HELD.load(Relaxed);
    if held & !(READY | COMMITTED) == 0 {
        HELD.store(held & READY, Relaxed);
        return;
    }
    if let Some(h) = header() {
        // SAFETY: set with READY, which `held` has.
        let slot = &slots(h)[unsafe { MY_SLOT }];
        for (_, low) in slot.low.iter() {
            low.store(EMPTY, SeqCst);
        }
    }
    HELD.store(held & READY, Relaxed);
}

/// PREPARE TRANSACTION: the bounds move to a record of the prepared transaction, before the
/// slot is cleared (at the PREPARE event), so a reader that reads the slot first and the records
/// after never sees neither.
fn keep_for_prepared() {
    let held = HELD.load(Relaxed);
    let Some(h) = header() else { return };
    if held & !READY == 0 {
        return;
    }
    // SAFETY: assigns the transaction id PrepareTransaction is about to assign anyway.
    let xid = unsafe { pg_sys::GetTopTransactionId() }.into_inner();
    // SAFETY: set with READY.
    let slot = &slots(h)[unsafe { MY_SLOT }];
    for rec in prepared(h) {
        let cur = rec.xid.load(SeqCst);
        // SAFETY: TransactionIdIsInProgress reads the proc array; a prepared transaction is in
        // progress until COMMIT/ROLLBACK PREPARED removes it.
        let free = cur == 0
            || !unsafe {
                pg_sys::TransactionIdIsInProgress(pg_sys::TransactionId::from_inner(cur))
            };
        if free && rec.xid.compare_exchange(cur, xid, SeqCst, SeqCst).is_ok() {
            for ((_, dst), (_, src)) in rec.low.iter().zip(slot.low.iter()) {
                dst.store(src.load(SeqCst), SeqCst);
            }
            return;
        }
    }
    crate::pg::errors::IdError::new(
        pgrx::PgSqlErrorCode::ERRCODE_OUT_OF_MEMORY,
        "pg_idgen: no free read-horizon record for a prepared transaction",
    )
    .detail("There are as many records as max_prepared_transactions allows prepared transactions.")
    .hint("COMMIT PREPARED or ROLLBACK PREPARED a transaction that is no longer needed.")
    .raise();
}

#[pg_guard]
unsafe extern "C-unwind" fn on_xact(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    use pg_sys::XactEvent::*;
    match event {
        XACT_EVENT_PRE_PREPARE => keep_for_prepared(),
        // After ProcArrayEndTransaction, but before the COMMIT callbacks registered before ours
        // (they run in the reverse order of registration), Citus's among them: on_release clears
        // the slot after all of them.
        XACT_EVENT_COMMIT => {
            let held = HELD.load(Relaxed);
            if held & !READY != 0 {
                HELD.store(held | COMMITTED, Relaxed);
            }
        }
        // In AbortTransaction this comes after ProcArrayEndTransaction: the transaction's end is
        // visible to every snapshot taken from now on, and its rows on other nodes never are.
        XACT_EVENT_ABORT
        | XACT_EVENT_PREPARE
        | XACT_EVENT_PARALLEL_COMMIT
        | XACT_EVENT_PARALLEL_ABORT => release(),
        _ => {}
    }
}

/// The top-level transaction's resources are released after every transaction callback of its
/// commit (CommitTransaction), so after Citus's COMMIT PREPARED on the other nodes has returned.
#[pg_guard]
unsafe extern "C-unwind" fn on_release(
    phase: pg_sys::ResourceReleasePhase::Type,
    _is_commit: bool,
    is_top_level: bool,
    _arg: *mut std::ffi::c_void,
) {
    if is_top_level
        && phase == pg_sys::ResourceReleasePhase::RESOURCE_RELEASE_AFTER_LOCKS
        && HELD.load(Relaxed) & COMMITTED != 0
    {
        release();
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn on_exit(_code: c_int, _arg: pg_sys::Datum) {
    release();
    if let Some(h) = header() {
        // SAFETY: set with READY, which is set before this callback is registered.
        slots(h)[unsafe { MY_SLOT }].pid.store(0, Relaxed);
    }
}

/// What every reader of a horizon checks: a primary (a standby does not know the primary's open
/// transactions) and a statement snapshot that is taken after the horizon, never a transaction
/// snapshot taken before it.
pub fn check_reader(what: &str) {
    crate::pg::recovery::refuse_on_standby(
        what,
        "Take the horizon on the primary together with pg_current_wal_insert_lsn(), and read on the standby once pg_last_wal_replay_lsn() has passed that position.",
    );
    // SAFETY: reads the transaction's isolation level, set before any statement runs.
    if unsafe { pg_sys::XactIsoLevel } >= pg_sys::XACT_REPEATABLE_READ as i32 {
        crate::pg::errors::IdError::new(
            pgrx::PgSqlErrorCode::ERRCODE_ACTIVE_SQL_TRANSACTION,
            format!("{what} cannot be taken in a REPEATABLE READ or SERIALIZABLE transaction"),
        )
        .detail("The transaction's snapshot was taken before the horizon: a transaction that committed in between would be below the horizon and not seen.")
        .hint("Take the horizon in its own transaction before BEGIN ISOLATION LEVEL REPEATABLE READ, and pass it to the reading query as a parameter.")
        .raise();
    }
}

/// Who holds a horizon back: a backend's open transaction, a prepared transaction, or a prepared
/// transaction from before the start whose bounds are unknown.
pub struct Holder {
    pub kind: &'static str,
    pub pid: Option<i32>,
    pub xid: Option<u32>,
    /// The bound held in each stream (EMPTY: none); all EMPTY for an unknown one.
    pub low: PerStream<u64>,
}

/// What a reader computes: the horizon of `stream` as a counter (0: nothing is readable), in the
/// order core::horizon needs: the stream's counter first, then the slots, then the records.
pub fn horizon_of(stream: Stream, st: &GeneratorState) -> u64 {
    let (last, _) = st.last();
    let Some(h) = header() else { return 0 };
    let from_slots = horizon::horizon(last, slots(h).iter().map(|s| s.low[stream].load(SeqCst)));
    let from_records = horizon::horizon(
        last,
        live_records(h).into_iter().map(|(_, low)| low[stream]),
    );
    if !unknown_prepared(h).is_empty() {
        return 0;
    }
    from_slots.min(from_records)
}

/// The records of prepared transactions still in progress; frees the others.
fn live_records(h: &'static Header) -> Vec<(u32, PerStream<u64>)> {
    let mut live = Vec::new();
    for rec in prepared(h) {
        let xid = rec.xid.load(SeqCst);
        if xid == 0 {
            continue;
        }
        let low = PerStream::from_fn(|s| rec.low[s].load(SeqCst));
        // SAFETY: as in keep_for_prepared.
        let open =
            unsafe { pg_sys::TransactionIdIsInProgress(pg_sys::TransactionId::from_inner(xid)) };
        if open || rec.xid.load(SeqCst) != xid {
            // Reused while we read it: the new owner's slot still holds; counting both is safe.
            live.push((xid, low));
        } else {
            let _ = rec.xid.compare_exchange(xid, 0, SeqCst, SeqCst);
        }
    }
    live
}

/// Prepared transactions in progress that hold no record and may come from before this start.
fn unknown_prepared(h: &'static Header) -> Vec<u32> {
    // SAFETY: reads a setting fixed at server start.
    if unsafe { max_prepared_xacts } == 0 {
        return Vec::new();
    }
    let boot = h.boot_xid.load(SeqCst);
    let known: Vec<u32> = prepared(h).iter().map(|r| r.xid.load(SeqCst)).collect();
    let xids: Vec<i64> = Spi::connect(|client| {
        client
            .select(
                "SELECT transaction::text::bigint FROM pg_catalog.pg_prepared_xact()",
                None,
                &[],
            )?
            .map(|row| row.get::<i64>(1))
            .collect::<Result<Vec<Option<i64>>, _>>()
            .map(|v| v.into_iter().flatten().collect())
    })
    .unwrap_or_else(|e| pgrx::error!("pg_idgen: reading the prepared transactions failed: {e}"));
    xids.into_iter()
        .map(|x| x as u32)
        .filter(|x| !known.contains(x))
        .filter(|&x| {
            // SAFETY: a pure comparison of two transaction ids.
            boot == 0
                || unsafe {
                    pg_sys::TransactionIdPrecedes(
                        pg_sys::TransactionId::from_inner(x),
                        pg_sys::TransactionId::from_inner(boot),
                    )
                }
        })
        .collect()
}

/// Everything that holds a horizon now, for `idgen.read_horizon_holders`.
pub fn holders() -> Vec<Holder> {
    let Some(h) = header() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in slots(h) {
        let low = PerStream::from_fn(|stream| s.low[stream].load(SeqCst));
        if low.iter().any(|(_, &l)| l != EMPTY) {
            out.push(Holder {
                kind: "transaction",
                pid: Some(s.pid.load(Relaxed)),
                xid: None,
                low,
            });
        }
    }
    for (xid, low) in live_records(h) {
        out.push(Holder {
            kind: "prepared",
            pid: None,
            xid: Some(xid),
            low,
        });
    }
    for xid in unknown_prepared(h) {
        out.push(Holder {
            kind: "prepared before start",
            pid: None,
            xid: Some(xid),
            low: PerStream::from_fn(|_| EMPTY),
        });
    }
    out
}
