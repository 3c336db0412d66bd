//! The node: the clock state every time-based generator of this server shares. Its clock streams
//! (`stream`: Snowflake IDs, message IDs, UUIDv7s, each with one identity), their shared block
//! (`shared`) and generators (`generator`, `backend_generator`), the durable mark's life cycle
//! (`mark`) and its WAL record (`wal`), the reservation (`reservation`) and the worker that renews
//! it (`renewal_worker`), the clock (`clock`), the checks every ID passes (`checks`,
//! `origin_check`, `worker_unset`) and the count of refusals (`refusals`), the read horizon
//! (`horizon`), the lease's state (`lease_status`), the origins, and the worker id from Citus
//! (`citus_group`).
//!
//! The rest of the extension comes in through a few doors, and only through them
//! (tools/module_graph.py fails on an import of any other module of node/):
//! - `take`: the IDs of the clock streams, the read horizon's hold and its readers' view, the
//!   node's worker id; every SQL surface that makes IDs takes them here;
//! - `stream`: the streams' identity, which the other doors speak in;
//! - `backfills`: what an ID at a past time asks of the node (src/backfill/);
//! - `lease`: the worker-id lease's cell and report, which the keeper writes (src/lease/);
//! - `report`: the node as the status views read it (status.rs);
//! - `layouts`: layouts by name, and the node's own;
//! - this module: `init` from `_PG_init`, and `idgen.snowflake_start_after`'s move.

mod backend_generator;
pub mod backfills;
mod checks;
mod citus_group;
mod clock;
mod generator;
mod horizon;
pub mod layouts;
pub mod lease;
mod lease_status;
mod mark;
mod origin_check;
mod origins;
mod refusals;
mod renewal_worker;
pub mod report;
mod reservation;
mod shared;
pub mod stream;
pub mod take;
mod wal;
mod worker_unset;

pub use origins::system_identifier;
pub use worker_unset::unset_warning;

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

/// `idgen.snowflake_start_after`: moves every stream of the node past `ms`, durably (the mark
/// reaches the standbys before this returns), and with it past every ID in this database that
/// another database system made, which node/origin_check.rs refused until now. Returns the start
/// (ms) of the Snowflake stream's next tick.
pub fn start_after(ms: i64) -> Result<i64, String> {
    checks::check_can_generate(shared::shared(), None);
    let next_ms = reservation::move_past_ms(ms)?;
    // Every ID in this database, whichever system made it, is now below the next ones.
    origin_check::adopt();
    Ok(next_ms)
}
