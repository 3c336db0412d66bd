//! The front door of the node's clock streams: every SQL surface takes its IDs here. A take runs
//! the same steps for each stream: the checks its IDs pass, the read horizon's hold (for the
//! streams a reader pages by), the backend's generator for the current clock settings, the
//! generator's take (under the lease's cap in lease mode), then the warning of a clock step or the
//! error. And the worker id of this node's Snowflake IDs is decided here once (`node_worker`),
//! and a reader of a stream's read horizon gets it here (`read_horizon`).
//!
//! Each stream has a full path (`snowflake`, `uuidv7`, `msgid`), which may raise, and the two that
//! are column defaults have a bare fast path (`snowflake_fast`, `uuidv7_fast`, for
//! pg/fast_entry.rs) that returns None, having issued nothing, whenever the full path has more to
//! do.

use crate::gucs::{self, WorkerIdSource};
use crate::pg::errors::IdError;
use crate::pg::time::mono_ns;
use pg_idgen_core::generator::{BackwardStep, GenError, Generator, Issued};

use super::backend_generator::BackendGenerator;
use super::checks::{
    can_generate_now, check_can_generate, check_layout_accepted, to_id_error, warn_step,
};
use super::citus_group;
use super::clock::PgClock;
use super::horizon;
use super::lease_status::lease_fault_error;
use super::reservation::MarkReserver;
use super::shared::{self, Shared};
use super::stream::{PerStream, Stream, COUNT};

/// The node's Snowflake generator (its layout and worker id, fixed at start), which makes the IDs
/// of a take's counters.
pub use super::generator::node;

/// This backend's generators, one per stream, under the current reloadable clock settings.
static GENERATORS: PerStream<BackendGenerator> =
    PerStream([const { BackendGenerator::new() }; COUNT]);

/// Where this node's worker id comes from, and what it is where it is known outside a take.
pub enum NodeWorker {
    /// `idgen.worker_id`, fixed for the server's life.
    Setting(u64),
    /// The Citus group (node/citus_group.rs), or the error a Snowflake ID would raise for it.
    Citus(Result<u64, IdError>),
    /// A lease from the coordinator: the id is known only under the lease, during a take.
    Lease,
}

/// The worker id of this node's Snowflake IDs: the one place that reads
/// `idgen.worker_id_source`.
pub fn node_worker() -> NodeWorker {
    match gucs::per_row_settings().0 {
        WorkerIdSource::Setting => NodeWorker::Setting(node().worker()),
        WorkerIdSource::Citus => NodeWorker::Citus(citus_group::current()),
        WorkerIdSource::Lease => NodeWorker::Lease,
    }
}

/// What every Snowflake ID checks first: a primary, a readable mark, an accepted layout, a
/// database that holds no other system's IDs, and a worker id set where one is needed.
#[inline]
fn check_snowflake(shared: &Shared) {
    check_can_generate(shared, Some(Stream::Snowflake));
    check_layout_accepted(shared);
    super::origin_check::check(Stream::Snowflake);
    super::worker_unset::check();
}

/// True when `check_snowflake` would pass without asking PostgreSQL anything.
#[inline(always)]
fn snowflake_ready(shared: &Shared) -> bool {
    can_generate_now(shared) && shared.layout_error.is_empty() && super::worker_unset::checked()
}

/// Runs `f` with this backend's Snowflake generator, rebuilt when a reload changed the clock
/// settings.
pub fn with_snowflake_generator<R>(f: impl FnOnce(&Generator) -> R) -> R {
    with_generator(Stream::Snowflake, f)
}

/// Runs `f` with this backend's generator of `stream`, rebuilt when a reload changed the clock
/// settings.
#[inline(always)]
fn with_generator<R>(stream: Stream, f: impl FnOnce(&Generator) -> R) -> R {
    GENERATORS[stream].with(|settings| stream.generator(settings), f)
}

/// Takes `want` consecutive counters (at most a tick's worth) of the Snowflake stream, with the
/// worker id to make them IDs with: the setting, the Citus group, or in lease mode the lease that
/// was valid before and after the take.
#[inline]
pub fn snowflake(want: u64) -> (Issued, u64) {
    let shared = shared::shared();
    let st = &shared.clocks[Stream::Snowflake];
    check_snowflake(shared);
    horizon::hold(Stream::Snowflake, st);
    with_snowflake_generator(|g| {
        let run = |cap: &dyn Fn() -> u64| {
            g.take_capped(st, &PgClock, &MarkReserver(&g.layout), want, cap)
        };
        let (worker, result) = match node_worker() {
            NodeWorker::Setting(w) => (w, run(&|| u64::MAX)),
            NodeWorker::Citus(w) => (w.unwrap_or_else(|e| e.raise()), run(&|| u64::MAX)),
            // No ID later than the lease covers (core::lease::ceiling_ms): its next holder
            // starts above that, whatever this node does before its next heartbeat.
            NodeWorker::Lease => {
                let cap = || g.layout.tick_of_ms(shared.lease.ceiling_ms()).unwrap_or(0);
                match shared.lease.under(mono_ns, || run(&cap)) {
                    Ok((w, r)) => (u64::from(w), r),
                    Err(fault) => lease_fault_error(fault, &shared.lease_status).raise(),
                }
            }
        };
        (settle(result, g, Stream::Snowflake), worker)
    })
}

/// The common case of a Snowflake ID, bare: the checks already passed in this backend, the
/// generator made, no lease (whose take is capped by the lease), the Citus group known; then the
/// generator's fast path, one clock read and one compare-and-swap. None, having issued nothing,
/// for anything else.
#[inline(always)]
pub fn snowflake_fast() -> Option<i64> {
    let shared = shared::attached()?;
    if !snowflake_ready(shared) {
        return None;
    }
    let (source, settings) = gucs::per_row_settings();
    let worker = match source {
        WorkerIdSource::Setting => None,
        WorkerIdSource::Citus => Some(citus_group::cached()?),
        WorkerIdSource::Lease => return None,
    };
    let st = &shared.clocks[Stream::Snowflake];
    if !horizon::hold_fast(Stream::Snowflake, st) {
        return None;
    }
    GENERATORS[Stream::Snowflake]
        .with_made(settings, |g| {
            let (first, _) = g.take_fast(st, &PgClock, 1)?;
            Some(g.id_of_worker(first, 0, worker.unwrap_or_else(|| g.worker())))
        })
        .flatten()
}

/// Up to `want` consecutive counters of the UUIDv7 stream (at most a tick's worth).
#[inline]
pub fn uuidv7(want: u64) -> Issued {
    take_plain(Stream::Uuidv7, want)
}

/// The common case of a UUIDv7's counter, bare (as `snowflake_fast`). The caller has its random
/// bits already, so that nothing can fail once the counter is taken.
#[inline(always)]
pub fn uuidv7_fast() -> Option<u64> {
    let shared = shared::attached()?;
    let st = &shared.clocks[Stream::Uuidv7];
    if !can_generate_now(shared) || !horizon::hold_fast(Stream::Uuidv7, st) {
        return None;
    }
    GENERATORS[Stream::Uuidv7]
        .with_made(gucs::per_row_settings().1, |g| g.take_fast(st, &PgClock, 1))
        .flatten()
        .map(|(counter, _)| counter)
}

/// The counter of one message ID. No read horizon: nobody pages by message IDs.
#[inline]
pub fn msgid() -> u64 {
    take_plain(Stream::Msgid, 1).first
}

/// Up to `want` consecutive counters of a stream without a worker id or layout of its own to
/// check (message IDs, UUIDv7s): the checks every ID passes, the read horizon's hold for an
/// ordered stream, the take.
#[inline]
fn take_plain(stream: Stream, want: u64) -> Issued {
    let shared = shared::shared();
    let st = &shared.clocks[stream];
    check_can_generate(shared, Some(stream));
    super::origin_check::check(stream);
    if stream.ordered() {
        horizon::hold(stream, st);
    }
    with_generator(stream, |g| {
        let result = g.take(st, &PgClock, &MarkReserver(&g.layout), want);
        settle(result, g, stream)
    })
}

/// A reader's view of the read horizon of an ordered stream (docs/read-horizon.md): checked
/// first (a primary, a statement snapshot taken after it), then whether the stream ever set its
/// rollback flag (its IDs are then not in the order of their making), then the horizon's counter
/// (0: nothing is readable).
pub struct Horizon {
    pub counter: u64,
    pub flipped: bool,
}

/// The read horizon of `stream` for `what`, the function that reads it (for its ERRORs).
pub fn read_horizon(stream: Stream, what: &str) -> Horizon {
    horizon::check_reader(what);
    let st = &shared::shared().clocks[stream];
    let (_, flag) = st.last();
    let flipped = flag != 0
        || st
            .stats
            .flag_flips
            .load(std::sync::atomic::Ordering::Relaxed)
            > 0;
    Horizon {
        counter: horizon::horizon_of(stream, st),
        flipped,
    }
}

/// What a take ends with: the IDs; or, off the common path, the IDs after a WARNING of a clock
/// step the generator saw, or the generator's refusal raised as an ERROR.
#[inline(always)]
fn settle(
    result: Result<(Issued, Option<BackwardStep>), GenError>,
    g: &Generator,
    stream: Stream,
) -> Issued {
    match result {
        Ok((issued, None)) => issued,
        other => settle_rare(other, g, stream),
    }
}

#[cold]
#[inline(never)]
fn settle_rare(
    result: Result<(Issued, Option<BackwardStep>), GenError>,
    g: &Generator,
    stream: Stream,
) -> Issued {
    match result {
        Ok((issued, step)) => {
            if let Some(s) = step {
                warn_step(s, stream);
            }
            issued
        }
        Err(e) => to_id_error(e, g, stream).raise(),
    }
}
