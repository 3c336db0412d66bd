//! The node's clock streams: Snowflake IDs, message IDs and UUIDv7s share one durable mark, so
//! start-up, WAL replay, `idgen.snowflake_start_after` and the renewal of reservations walk over
//! all of them.

use std::sync::atomic::Ordering::*;

use super::generator::{msgid_layout, node, uuidv7_layout};
use super::shared::{self, Shared};
use pg_idgen_core::generator::GeneratorState;
use pg_idgen_core::layout::Layout;

/// One clock stream of the node. Snowflake IDs, message IDs and UUIDv7s share the durable mark:
/// start-up, WAL replay, `idgen.snowflake_start_after` and the reserver walk over all of them with
/// [`streams`].
#[derive(Clone, Copy)]
pub struct Stream<'a> {
    /// As `idgen.streams` names it.
    pub name: &'static str,
    pub state: &'a GeneratorState,
    pub layout: &'a Layout,
    pub seq_bits: u32,
}

impl Stream<'_> {
    /// Raises the stream so that its next IDs lie in ticks after the one holding `ms`.
    pub(super) fn raise_past_ms(&self, ms: i64) {
        if let Some(tick) = self.layout.tick_of_ms(ms) {
            self.state.raise_floor(tick, self.seq_bits);
        }
    }

    /// The end (ms, exclusive) of the tick of `counter`, a counter of this stream; None for 0.
    pub fn end_ms(&self, counter: u64) -> Option<i64> {
        (counter != 0).then(|| self.layout.ms_of_tick((counter >> self.seq_bits) + 1))
    }

    /// The start (ms) of the tick of the stream's last ID; None before its first.
    pub fn last_tick_ms(&self) -> Option<i64> {
        let (counter, _) = self.state.last();
        (counter != 0).then(|| self.layout.ms_of_tick(counter >> self.seq_bits))
    }

    /// The wall-clock instant (ms) the stream's reservation covers; None before the first.
    pub fn reserved_until_ms(&self) -> Option<i64> {
        let reserved = self.state.reserved_tick.load(Acquire);
        (reserved > 0).then(|| self.layout.ms_of_tick(reserved + 1))
    }
}

/// The node's clock streams: Snowflake IDs first, then message IDs, then UUIDv7s.
pub fn streams(shared: &Shared) -> [Stream<'_>; 3] {
    let g = node();
    [
        Stream {
            name: "snowflake",
            state: &shared.snowflake,
            layout: &g.layout,
            seq_bits: g.seq_bits(),
        },
        Stream {
            name: "msgid",
            state: &shared.msgid,
            layout: msgid_layout(),
            seq_bits: pg_idgen_core::msgid::SEQUENCE_BITS,
        },
        Stream {
            name: "uuidv7",
            state: &shared.uuidv7,
            layout: uuidv7_layout(),
            seq_bits: pg_idgen_core::uuid7::COUNTER_BITS,
        },
    ]
}

/// Raises the Snowflake stream so that its next IDs are later than `ms`: a new lease's
/// `start_after`.
pub fn raise_floor_to_ms(ms: i64) {
    let [snowflake, ..] = streams(shared::shared());
    snowflake.raise_past_ms(ms);
}

/// The last millisecond of the newest Snowflake ID handed out, if any: the `last_ts` a lease
/// holder reports.
pub fn last_id_ms() -> Option<i64> {
    let [snowflake, ..] = streams(shared::shared());
    snowflake
        .end_ms(snowflake.state.last().0)
        .map(|end| end - 1)
}
