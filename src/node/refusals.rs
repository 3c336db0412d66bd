//! How often the node refused to make an ID, per stream and reason, since the server started: the
//! counters behind `idgen.refusals`, which monitoring turns into a metric whose reason label comes
//! from the fixed set `Reason::ALL`. Each is counted just before its ERROR is raised. The counters
//! are a shared-memory block of their own, zero at every start (as a Prometheus counter may be).

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use super::stream::{PerStream, Stream};

/// Why an ID was refused. The names are labels of a metric: never renamed, only added to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The server is a standby.
    Standby = 0,
    /// The durable mark could not be read (or a replayed one written).
    MarkUnreadable,
    /// `idgen.layout` changed to one that could repeat earlier IDs.
    LayoutRefused,
    /// pg_upgrade filled the data directory without the old system's mark.
    UpgradedWithoutMark,
    /// The database holds IDs of another database system.
    OtherSystem,
    /// `idgen.worker_id` is unset and the node is evidently one of several.
    WorkerIdUnset,
    /// The clock is behind the last ID further than the clock policy lets it wait.
    ClockBehind,
    /// Every ID of the tick was used and the next tick did not come in time.
    SequenceExhausted,
    /// The clock is before the layout's epoch.
    BeforeEpoch,
    /// The layout has run out of time bits.
    LayoutExhausted,
    /// The mark could not be written.
    MarkNotWritten,
    /// Lease mode, and no lease yet.
    LeaseMissing,
    /// The lease lapsed: the coordinator did not renew it in time.
    LeaseLapsed,
    /// The next ID would be later than the lease covers.
    LeaseCeiling,
}

const REASONS: usize = 14;

// Each reason sits at its own number in `Reason::ALL` (the counters are indexed by it), checked
// when the crate compiles; that their names differ is checked through idgen.refusals
// (tests/pg_regress/sql/generators.sql).
const _: () = {
    let mut i = 0;
    while i < REASONS {
        assert!(Reason::ALL[i] as usize == i, "Reason::ALL is out of order");
        i += 1;
    }
};

impl Reason {
    pub const ALL: [Reason; REASONS] = [
        Reason::Standby,
        Reason::MarkUnreadable,
        Reason::LayoutRefused,
        Reason::UpgradedWithoutMark,
        Reason::OtherSystem,
        Reason::WorkerIdUnset,
        Reason::ClockBehind,
        Reason::SequenceExhausted,
        Reason::BeforeEpoch,
        Reason::LayoutExhausted,
        Reason::MarkNotWritten,
        Reason::LeaseMissing,
        Reason::LeaseLapsed,
        Reason::LeaseCeiling,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reason::Standby => "standby",
            Reason::MarkUnreadable => "mark_unreadable",
            Reason::LayoutRefused => "layout_refused",
            Reason::UpgradedWithoutMark => "upgraded_without_mark",
            Reason::OtherSystem => "other_system",
            Reason::WorkerIdUnset => "worker_id_unset",
            Reason::ClockBehind => "clock_behind",
            Reason::SequenceExhausted => "sequence_exhausted",
            Reason::BeforeEpoch => "before_epoch",
            Reason::LayoutExhausted => "layout_exhausted",
            Reason::MarkNotWritten => "mark_not_written",
            Reason::LeaseMissing => "lease_missing",
            Reason::LeaseLapsed => "lease_lapsed",
            Reason::LeaseCeiling => "lease_ceiling",
        }
    }
}

/// The counters.
#[repr(C)]
struct Refusals(PerStream<[AtomicU64; REASONS]>);

static mut BLOCK: *const Refusals = std::ptr::null();

/// Adds the counters' block to shared memory; from `_PG_init` while preloading.
pub fn register() {
    crate::pg::shmem::add_region(crate::pg::shmem::Region {
        name: c"pg_idgen refusals",
        size: std::mem::size_of::<Refusals>,
        lwlocks: 0,
        attach,
    });
}

/// # Safety
/// As `Region::attach` requires: `base` holds `size_of::<Refusals>()` bytes.
unsafe fn attach(base: *mut u8, _locks: *mut pgrx::pg_sys::LWLockPadded, found: bool) {
    // SAFETY: per the contract; zeroed atomics are valid counters.
    unsafe {
        if !found {
            std::ptr::write_bytes(base, 0, std::mem::size_of::<Refusals>());
        }
        BLOCK = base as *const Refusals;
    }
}

fn block() -> Option<&'static Refusals> {
    // SAFETY: set once in the postmaster's startup hook, before any backend is forked, and
    // pointing at atomics only.
    unsafe { BLOCK.as_ref() }
}

/// Counts a refusal (once the block is attached: always, past start-up).
pub fn count(stream: Stream, reason: Reason) {
    if let Some(b) = block() {
        b.0[stream][reason as usize].fetch_add(1, Relaxed);
    }
}

/// The refusals of a stream for a reason since the server started.
pub fn get(stream: Stream, reason: Reason) -> u64 {
    block().map_or(0, |b| b.0[stream][reason as usize].load(Relaxed))
}
