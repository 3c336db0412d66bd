//! The node's clock streams, each with one identity: Snowflake IDs, message IDs and UUIDv7s run on
//! the same machinery (a state in the shared block, a generator per backend, one durable mark),
//! and every table kept per stream (the shared states, the refusal counters, the read horizon's
//! bounds, the reserver's memory, the rows of `idgen.streams`) is a [`PerStream`] indexed by a
//! [`Stream`]; the mark file keeps each stream's last counter under the stream's name. A new
//! stream is an arm of the enum and what the compiler then asks for.

use std::sync::atomic::Ordering::*;

use super::generator::{build, fixed_layout_generator, msgid_layout, node, uuidv7_layout};
use crate::gucs::ClockSettings;
use pg_idgen_core::generator::{ConfigError, Generator, GeneratorState};
use pg_idgen_core::layout::Layout;

/// One clock stream of the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Snowflake,
    Msgid,
    Uuidv7,
}

/// How many streams there are: counted through `Stream::next`, whose match the compiler keeps
/// complete.
pub const COUNT: usize = {
    let mut n = 1;
    let mut s = Stream::Snowflake;
    while let Some(t) = s.next() {
        s = t;
        n += 1;
    }
    n
};

impl Stream {
    /// Every stream, in the order of `idgen.streams`' rows; a stream's place is its number.
    pub const ALL: [Stream; COUNT] = {
        let mut all = [Stream::Snowflake; COUNT];
        let mut i = 1;
        while i < COUNT {
            all[i] = match all[i - 1].next() {
                Some(s) => s,
                None => panic!("Stream::next ends early"),
            };
            assert!(
                all[i] as usize == i,
                "a stream's number is its place in ALL"
            );
            i += 1;
        }
        all
    };

    /// The stream after this one in `ALL`.
    const fn next(self) -> Option<Stream> {
        match self {
            Stream::Snowflake => Some(Stream::Msgid),
            Stream::Msgid => Some(Stream::Uuidv7),
            Stream::Uuidv7 => None,
        }
    }

    /// The stream as `idgen.streams` and `idgen.refusals` name it.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Snowflake => "snowflake",
            Stream::Msgid => "msgid",
            Stream::Uuidv7 => "uuidv7",
        }
    }

    /// The IDs in a message: "Snowflake ID", "message ID", "UUIDv7".
    pub fn ids(self) -> &'static str {
        match self {
            Stream::Snowflake => "Snowflake ID",
            Stream::Msgid => "message ID",
            Stream::Uuidv7 => "UUIDv7",
        }
    }

    /// Whether readers page by the stream's IDs, so that a read horizon is kept for it (nobody
    /// compares message IDs).
    pub fn ordered(self) -> bool {
        match self {
            Stream::Snowflake | Stream::Uuidv7 => true,
            Stream::Msgid => false,
        }
    }

    /// The stream's layout: the node's Snowflake layout, fixed at server start, or the fixed
    /// layout of its format.
    pub fn layout(self) -> &'static Layout {
        match self {
            Stream::Snowflake => &node().layout,
            Stream::Msgid => msgid_layout(),
            Stream::Uuidv7 => uuidv7_layout(),
        }
    }

    /// The bits of a counter of the stream below its tick.
    pub fn seq_bits(self) -> u32 {
        match self {
            Stream::Snowflake => node().seq_bits(),
            Stream::Msgid => pg_idgen_core::msgid::SEQUENCE_BITS,
            Stream::Uuidv7 => pg_idgen_core::uuidv7::COUNTER_BITS,
        }
    }

    /// A generator of the stream under the reloadable clock settings `s`.
    pub(super) fn generator(self, s: ClockSettings) -> Result<Generator, ConfigError> {
        match self {
            Stream::Snowflake => build(node().layout.clone(), s),
            Stream::Msgid | Stream::Uuidv7 => fixed_layout_generator(self.layout(), s),
        }
    }

    /// The stream's clock among the node's `states`.
    pub fn clock(self, states: &PerStream<GeneratorState>) -> Clock<'_> {
        Clock {
            stream: self,
            state: &states[self],
            layout: self.layout(),
            seq_bits: self.seq_bits(),
        }
    }
}

/// A value for each stream, indexed by [`Stream`]; laid out as an array (shared memory holds
/// some).
#[repr(C)]
pub struct PerStream<T>(pub(super) [T; COUNT]);

impl<T> PerStream<T> {
    pub fn from_fn(mut f: impl FnMut(Stream) -> T) -> PerStream<T> {
        PerStream(std::array::from_fn(|i| f(Stream::ALL[i])))
    }

    /// Each stream with its value, in the order of `Stream::ALL`.
    pub fn iter(&self) -> impl Iterator<Item = (Stream, &T)> {
        Stream::ALL.into_iter().zip(self.0.iter())
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Stream, &mut T)> {
        Stream::ALL.into_iter().zip(self.0.iter_mut())
    }
}

impl<T> std::ops::Index<Stream> for PerStream<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, s: Stream) -> &T {
        &self.0[s as usize]
    }
}

impl<T> std::ops::IndexMut<Stream> for PerStream<T> {
    #[inline(always)]
    fn index_mut(&mut self, s: Stream) -> &mut T {
        &mut self.0[s as usize]
    }
}

impl<T: Default> Default for PerStream<T> {
    fn default() -> PerStream<T> {
        PerStream::from_fn(|_| T::default())
    }
}

/// A stream's clock: its shared state with the layout and sequence bits it counts in. Start-up,
/// WAL replay, `idgen.snowflake_start_after` and the reserver walk over all of them.
#[derive(Clone, Copy)]
pub struct Clock<'a> {
    pub stream: Stream,
    pub state: &'a GeneratorState,
    pub layout: &'a Layout,
    pub seq_bits: u32,
}

impl Clock<'_> {
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
