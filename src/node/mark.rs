//! The durable mark's life cycle: restored at every shared-memory (re)initialisation, recorded
//! exactly at a clean stop, and moved up by every mark record replayed from the WAL.

use std::path::Path;
use std::sync::atomic::Ordering::*;

use super::generator::node;
use super::origins::system_identifier;
use super::shared::{self, Shared};
use super::stream::{PerStream, Stream};
use crate::pg::data_dir;
use crate::pg::time::now_ms;
use pg_idgen_core::civil::format_utc_ms;
use pg_idgen_core::layout::Layout;
use pg_idgen_core::layout_history::{self, History, Verdict};
use pg_idgen_core::mark::{Mark, Stopped};

/// Sets the shared state from the durable mark; runs in the postmaster at every shared-memory
/// (re)initialisation, i.e. at start and after a crash. After a clean stop the mark holds the
/// exact last counters and counting resumes right after them; otherwise (a crash) after the
/// reservation, the only bound known.
pub(super) fn restore_from_mark(shared: &Shared) {
    let g = node();
    let dir = data_dir();
    let mark = match Mark::load(&dir) {
        Ok(mark) => mark,
        Err(e) => {
            shared.set_mark_error(&format!("the durable mark could not be read: {e}"));
            pgrx::log!(
                "pg_idgen: {e}; Snowflake IDs, message IDs and UUIDv7s are disabled until the mark file is repaired"
            );
            return;
        }
    };
    // pg_upgrade without a mark, or the old system's mark copied in (node/origins.rs).
    if let Err(e) =
        super::origins::on_start(&shared.origins, &dir, mark.as_ref().map(|m| m.written_by))
    {
        shared.set_mark_error(&e);
        pgrx::log!(
            "pg_idgen: {e}; Snowflake IDs, message IDs and UUIDv7s are disabled until the file is repaired"
        );
        return;
    }
    let until = mark.as_ref().map(|m| m.reserved_until_ms);
    let stopped = mark.and_then(|m| m.stopped);
    let mut tick = until.and_then(|ms| g.layout.tick_of_ms(ms - 1));
    let mut floor = None;
    let mut same_layout = false;
    match check_layout_history(&dir, until, &g.layout) {
        // IDs must start at the tick of start_ms: count on after the tick before it.
        Ok((start_ms, changed)) => {
            shared
                .layout_start_ms
                .store(start_ms, std::sync::atomic::Ordering::Relaxed);
            floor = g.layout.tick_of_ms(start_ms).and_then(|t| t.checked_sub(1));
            tick = tick.max(floor);
            same_layout = !changed;
        }
        Err(e) => {
            shared.set_layout_error(&e);
            pgrx::warning!("pg_idgen: {e}; snowflake_next() is disabled");
        }
    }
    // The tick of a stream that holds the last reserved millisecond.
    let tick_of = |layout: &Layout| until.and_then(|ms| layout.tick_of_ms(ms - 1));
    // The exact counters are in the units of the layout they were made with: the record of
    // layouts says none changed, and the mark names the layout (the record may be missing).
    let exact = stopped
        .as_ref()
        .filter(|s| same_layout && s.layout == g.layout.canonical_spec());
    for c in shared.clocks() {
        let snowflake = c.stream == Stream::Snowflake;
        match exact.and_then(|s| s.last(c.stream.name())) {
            Some(last) => {
                c.state.restore_exact(last, c.seq_bits);
                if let Some(f) = floor.filter(|_| snowflake) {
                    c.state.raise_floor(f, c.seq_bits);
                }
            }
            // A crash, another layout, or a stop recorded before the stream existed: from the
            // reservation (Snowflake IDs also above the start of their layout).
            None if snowflake => c.state.restore(tick, c.seq_bits),
            None => c.state.restore(tick_of(c.layout), c.seq_bits),
        }
    }
    // The first ID after every start makes a reservation of its own (see MarkReserver::extend).
    for s in shared.clocks() {
        s.state.reserved_tick.store(0, SeqCst);
    }
    shared.mark_rewrite.store(true, SeqCst);
    shared.mark_ms.store(until.unwrap_or(0), SeqCst);
}

/// Writes `mark` durably, naming this system as its writer: a mark copied into another system's
/// data directory (after pg_upgrade) tells that node whose IDs it starts above (node/origins.rs).
pub(super) fn store_mark(mark: Mark, dir: &Path) -> Result<(), String> {
    mark.by(system_identifier())
        .store(dir)
        .map_err(String::from)
}

/// Writes the exact last counters into the mark at the postmaster's exit, when no process is left
/// that could make an ID, so the next start resumes at the last ID instead of the reservation: a
/// clean restart costs no availability whatever the reservation window, unit or clock policy.
/// Not when the mark could not be read or written (the state is not the node's), nor under a
/// refused layout (the Snowflake counter is in the units of a layout the node did not use).
pub(super) fn record_stop(shared: &Shared) {
    if shared.mark_error().is_some() || shared.layout_error().is_some() {
        return;
    }
    let g = node();
    let lasts = PerStream::from_fn(|s| shared.clocks[s].high_counter());
    if lasts.iter().all(|(_, &last)| last == 0) {
        return;
    }
    // The end of the last tick of any stream: still a bound of every ID in milliseconds, for a
    // start under another layout.
    let until = shared
        .clocks()
        .iter()
        .filter_map(|c| c.end_ms(lasts[c.stream]))
        .max()
        .unwrap_or(0);
    let mark = Mark {
        reserved_until_ms: until,
        stopped: Some(Stopped {
            lasts: lasts
                .iter()
                .map(|(s, &last)| (s.name().to_string(), last))
                .collect(),
            layout: g.layout.canonical_spec(),
        }),
        written_by: None,
    };
    if let Err(e) = store_mark(mark, &data_dir()) {
        pgrx::log!("pg_idgen: could not record the last IDs at shutdown ({e}); the next start resumes at the reservation");
    }
}

/// Checks the configured layout against the layouts this node made IDs with before
/// (core::layout_history), records a change durably before any ID of the new layout, and returns
/// the time the layout's IDs must start at (0: no bound), and whether the layout changed.
fn check_layout_history(
    dir: &Path,
    mark_ms: Option<i64>,
    layout: &Layout,
) -> Result<(i64, bool), String> {
    let prev = History::load(dir)?;
    match layout_history::on_start(prev, mark_ms, layout, now_ms()) {
        Verdict::Same { start_ms, write } => {
            if let Some(h) = write {
                h.store(dir)?;
            }
            Ok((start_ms, false))
        }
        Verdict::Changed { history, start_ms } => {
            let from = history.past.last().map(|p| p.layout.label());
            history.store(dir)?;
            pgrx::log!(
                "pg_idgen: idgen.layout changed from \"{}\" to \"{}\"; Snowflake IDs start at {}, above every ID of the earlier layouts",
                from.unwrap_or_default(),
                layout.label(),
                format_utc_ms(start_ms)
            );
            Ok((start_ms, true))
        }
        Verdict::Refused(why) => Err(why),
    }
}

/// A mark record replayed from the WAL (node/wal.rs). An ERROR here would stop
/// recovery, and with it the whole server: when the mark file cannot be written, the shared
/// state did move up, and generation stays off until the file is repaired and the server
/// restarted (docs/guarantees.md, guarantee 3).
pub(super) fn replay_mark(reserved_until_ms: i64) {
    if let Err(e) = apply_replayed_mark(reserved_until_ms) {
        let msg = format!("a mark replayed from the WAL could not be written: {e}");
        shared::shared().set_mark_error(&msg);
        pgrx::warning!("pg_idgen: {msg}; Snowflake IDs, message IDs and UUIDv7s are disabled until pg_idgen.mark is repaired and the server restarted");
    }
}

/// Applies a mark record replayed from the WAL (a standby, or crash recovery): the shared state
/// and the local mark file move up to it, never down. The shared state moves first, so a file
/// that cannot be written still leaves this server's own generators above the record.
pub(super) fn apply_replayed_mark(reserved_until_ms: i64) -> Result<(), String> {
    let shared = shared::shared();
    for s in shared.clocks() {
        s.raise_past_ms(reserved_until_ms - 1);
    }
    shared.mark_ms.fetch_max(reserved_until_ms, SeqCst);
    let dir = data_dir();
    let on_disk = Mark::load(&dir)?.map_or(i64::MIN, |m| m.reserved_until_ms);
    if reserved_until_ms > on_disk {
        store_mark(Mark::reserved(reserved_until_ms), &dir)?;
    }
    Ok(())
}
