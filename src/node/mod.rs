//! The node: the clock state every time-based generator of this server shares. Its shared block
//! (`shared`), the generators of its three streams (`generator`, `streams`), the durable mark's
//! life cycle (`mark`) and its WAL record (`wal`), the reservation (`reservation`) and the worker
//! that renews it (`renewal_worker`), the clock (`clock`), the checks every ID passes (`checks`,
//! `origin_check`, `worker_unset`) and the count of refusals (`refusals`), the read horizon, the
//! lease's state and the origins, and the worker id from Citus (`citus_group`). The SQL surfaces
//! (`snowflake.rs`, `msgid.rs`, `uuidv7.rs`, ...) are thin layers on it, and take their IDs
//! through its front door, `take`.

mod backend_generator;
pub mod backfill_homes;
pub mod checks;
mod citus_group;
mod clock;
pub mod generator;
pub mod horizon;
pub mod layouts;
pub mod lease_status;
mod mark;
pub mod origin_check;
pub mod origins;
pub mod refusals;
pub mod renewal_worker;
pub mod reservation;
pub mod shared;
pub mod streams;
pub mod take;
mod wal;
pub mod worker_unset;

/// Sets up the node while preloading: its generator from the settings (refusing to start the
/// server on a layout or worker id that could not make good IDs), its WAL resource manager, its
/// shared block (first of all regions; restored from the mark at its first attach, the clean stop
/// recorded at the postmaster's exit), the reserver, the read horizon and the refusal counters.
pub fn init() {
    generator::init();
    wal::register();
    crate::pg::shmem::add_region(crate::pg::shmem::Region {
        name: shared::NAME,
        size: std::mem::size_of::<shared::Shared>,
        lwlocks: shared::LWLOCKS,
        attach: attach_shared,
    });
    crate::pg::shmem::at_postmaster_exit(|| {
        if let Some(shared) = shared::attached() {
            mark::record_stop(shared);
        }
    });
    renewal_worker::register();
    horizon::init();
    refusals::register();
}

/// Attaches the node's block; its first attach in a shared-memory lifetime (the server's start,
/// and again after a crash) restores the clocks from the durable mark.
///
/// # Safety
/// As `pg::shmem::Region::attach` requires.
unsafe fn attach_shared(base: *mut u8, locks: *mut pgrx::pg_sys::LWLockPadded, found: bool) {
    // SAFETY: passed on under the same contract.
    if let Some(fresh) = unsafe { shared::attach(base, locks, found) } {
        mark::restore_from_mark(fresh);
    }
}
