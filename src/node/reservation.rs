//! The reservation: how far ahead of its IDs the node's durable mark runs. Callers move it when
//! their next tick is past it (`MarkReserver`, the core's `Reserver`); the renewal worker
//! (node/renewal_worker.rs) moves it ahead of need so that callers rarely write it themselves.

use std::sync::atomic::Ordering::*;

use super::mark::store_mark;
use super::shared;
use super::stream::{PerStream, Stream};
use crate::gucs;
use crate::pg::data_dir;
use crate::pg::lwlock::LwLockGuard;
use crate::pg::time::{mono_ns, now_ms};
use pg_idgen_core::generator::{GenError, GeneratorState, Reserver};
use pg_idgen_core::layout::Layout;
use pg_idgen_core::mark::Mark;

/// Writes the mark under an LWLock so concurrent callers make one write, not one each. One mark
/// serves every time-based generator of the node (Snowflake IDs and message IDs): it only ever
/// moves up, so it bounds the time of every ID of either kind.
pub struct MarkReserver<'a>(pub &'a Layout);

impl MarkReserver<'_> {
    fn window_ticks(layout: &Layout) -> u64 {
        gucs::reserve_window_ms().div_ceil(layout.unit_ms).max(1)
    }

    /// Moves the reservation to at least `tick + window`; the caller holds no lock. The mark
    /// record is written and flushed (and the file replaced) under the reservation lock, so
    /// concurrent callers make one write; the wait for synchronous standbys comes after the lock,
    /// so every waiter stays cancellable, and the new ticks are published only once confirmed.
    /// `stop` ends that wait early (a background worker's shutdown).
    pub fn extend(
        &self,
        st: &GeneratorState,
        tick: u64,
        stop: &dyn Fn() -> Option<String>,
    ) -> Result<(), String> {
        if st.reserved_tick.load(Acquire) >= tick {
            return Ok(());
        }
        let layout = self.0;
        let shared = shared::shared();
        let new = tick + Self::window_ticks(layout);
        let lsn = {
            // SAFETY: a valid LWLock from our tranche. An ERROR from XLogInsert/XLogFlush
            // unwinds through the guard, which releases it.
            let _lock = unsafe { LwLockGuard::exclusive(shared::reserve_lock()) };
            let until = layout.ms_of_tick(new + 1);
            let mark_ms = shared.mark_ms.load(Acquire);
            // Written again after every start even when the mark covers the ticks: the file may
            // hold a clean stop's exact counters, and the standbys may never have confirmed the
            // record of the mark this server started from.
            if until > mark_ms || shared.mark_rewrite.load(Acquire) {
                // Never below the mark: the other stream's IDs may reach up to it.
                let until = until.max(mark_ms);
                // WAL first: crash recovery replays it into the file if the file write is lost,
                // and standbys replay it into theirs.
                let lsn = super::wal::log_mark(until);
                store_mark(Mark::reserved(until), &data_dir())?;
                shared.mark_ms.store(until, Release);
                shared.mark_lsn.fetch_max(lsn, AcqRel);
                shared.mark_rewrite.store(false, Release);
            }
            shared.mark_lsn.load(Acquire)
        };
        crate::pg::syncrep::wait_confirmed(lsn, stop)?;
        st.reserved_tick.fetch_max(new, AcqRel);
        Ok(())
    }
}

impl Reserver for MarkReserver<'_> {
    fn reserve(&self, st: &GeneratorState, tick: u64) -> Result<(), GenError> {
        self.extend(st, tick, &|| None).map_err(GenError::Reserve)
    }
}

/// What the reserver remembers of a stream between its rounds: its count of IDs at the last
/// round, and when (monotonic and wall-clock ms) that count last moved.
#[derive(Clone, Copy, Default)]
pub struct Seen {
    issued: u64,
    moved_mono_ms: i64,
    moved_wall_ms: i64,
}

/// Renews the reservations of every stream ahead of need, so callers rarely write the mark
/// themselves; run by the background worker. A stream is renewed while it makes IDs, and for
/// `idgen.reserve_idle` after its last one, so that the first ID after a pause finds its tick
/// reserved. Returns true if it wrote.
pub(super) fn renew_reservations(
    seen: &mut PerStream<Seen>,
    stop: &dyn Fn() -> Option<String>,
) -> Result<bool, String> {
    let shared = shared::shared();
    if shared.mark_error().is_some() {
        return Ok(false);
    }
    let mut wrote = false;
    for (stream, seen) in seen.iter_mut() {
        let s = shared.clock(stream);
        wrote |= renew_one(s.state, s.layout, s.seq_bits, seen, stop)?;
    }
    Ok(wrote)
}

fn renew_one(
    st: &GeneratorState,
    layout: &Layout,
    seq_bits: u32,
    seen: &mut Seen,
    stop: &dyn Fn() -> Option<String>,
) -> Result<bool, String> {
    let issued = st.stats.issued.load(Relaxed);
    let mono = mono_ns() / 1_000_000;
    let wall = now_ms();
    let now_ms = if issued != seen.issued {
        *seen = Seen {
            issued,
            moved_mono_ms: mono,
            moved_wall_ms: wall,
        };
        wall
    } else {
        let idle = mono - seen.moved_mono_ms;
        if issued == 0 || idle > gucs::reserve_idle_ms() {
            return Ok(false);
        }
        // Idle: ahead of the time that has really passed since the last ID, never of a wall
        // clock that jumped forward meanwhile (a durable mark that followed a passing jump would
        // start the node that far ahead after a restart). A caller whose clock did jump reserves
        // for itself, as without the reserver.
        wall.min(seen.moved_wall_ms + idle)
    };
    let Some(now) = layout.tick_of_ms(now_ms) else {
        return Ok(false);
    };
    let (last, _) = st.last();
    let tick = now.max(last >> seq_bits);
    let half = MarkReserver::window_ticks(layout) / 2;
    if tick + half <= st.reserved_tick.load(Acquire) {
        return Ok(false);
    }
    MarkReserver(layout)
        .extend(st, tick + half, stop)
        .map(|()| true)
}

/// Makes the durable mark cover `ms`, the time of an ID made outside the clock streams (an ID at
/// a past time, src/backfill/): the layout history bounds the IDs of a layout by the mark, so a
/// later change of layout starts above this ID too.
pub fn cover_ms(ms: i64) -> Result<(), String> {
    let shared = shared::shared();
    if shared.mark_ms.load(Acquire) > ms {
        return Ok(());
    }
    let snowflake = shared.clock(Stream::Snowflake);
    let tick = snowflake.layout.tick_of_ms(ms).unwrap_or(0);
    MarkReserver(snowflake.layout).extend(snowflake.state, tick, &|| None)
}

/// Moves every stream of the node past `ms` and reserves the Snowflake stream's next tick
/// durably, so the move survives a crash and reaches the standbys before this returns
/// (`idgen.snowflake_start_after`). Returns the start (ms) of the Snowflake stream's next tick.
pub fn move_past_ms(ms: i64) -> Result<i64, String> {
    let shared = shared::shared();
    for s in shared.clocks() {
        s.raise_past_ms(ms);
    }
    let snowflake = shared.clock(Stream::Snowflake);
    let (counter, _) = snowflake.state.last();
    let next_tick = (counter >> snowflake.seq_bits) + 1;
    MarkReserver(snowflake.layout).extend(snowflake.state, next_tick, &|| None)?;
    Ok(snowflake.layout.ms_of_tick(next_tick))
}
