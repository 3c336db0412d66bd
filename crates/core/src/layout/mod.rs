//! Bit layouts of 64-bit Snowflake-style IDs: which fields, how wide, in which order, counted in
//! which time unit from which epoch.
//!
//! A layout is written as a spec string, the value of `idgen.layout`: an optional preset name
//! followed by `key=value` overrides separated by spaces, e.g. `twitter`, `twitter epoch=2024-01-01`,
//! or `unit=s epoch=2016-05-20 time=28 worker=22 sequence=13`. The sign bit is always 0 and the time
//! field is always the highest, so IDs sort by time. Bits left over above the time field are zero
//! (that is how `js_safe` stays below 2^53).
//!
//! Here the layout and its bit arithmetic; `spec` its grammar, `present` how it is shown, `check`
//! whether a node may generate with it, `errors` the errors of all of them.

mod check;
mod errors;
mod present;
mod spec;
#[cfg(test)]
mod tests;

use crate::civil::format_utc_ms;

pub use super::field::Field;
pub use errors::{DecodeError, GenerationRefused, LayoutError, PastEnd, SpanError};
pub use present::unit_name;
pub use spec::{parse_unit_ms, LayoutSpec};

pub(crate) const MS_PER_YEAR: f64 = 365.2425 * 86_400_000.0;

/// A validated layout with precomputed shifts; cheap to copy, immutable once built.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub name: String,
    pub unit_ms: u64,
    pub epoch_ms: i64,
    bits: [u8; 6],
    shift: [u8; 6],
    pub order: Vec<Field>,
    pub reserved_value: u64,
    /// The time field wraps around instead of running out (westid32's 35-minute cycle): such a
    /// layout can decode IDs but never generate them, because a wrapped time repeats IDs.
    pub wraps: bool,
}

/// The fields of one ID, as `id_decode` shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub tick: u64,
    pub datacenter: u64,
    pub worker: u64,
    pub rollback: u64,
    pub sequence: u64,
    pub reserved: u64,
}

impl Layout {
    pub fn bits(&self, f: Field) -> u32 {
        self.bits[f.index()] as u32
    }

    pub fn shift(&self, f: Field) -> u32 {
        self.shift[f.index()] as u32
    }

    pub fn max_value(&self, f: Field) -> u64 {
        (1u64 << self.bits(f)) - 1
    }

    pub fn total_bits(&self) -> u32 {
        Field::ALL.iter().map(|f| self.bits(*f)).sum()
    }

    /// IDs one node can make in one tick.
    pub fn per_tick(&self) -> u64 {
        1u64 << self.bits(Field::Sequence)
    }

    /// The first tick that no longer fits: the layout has run out at `epoch + ticks_limit * unit`.
    pub fn ticks_limit(&self) -> u64 {
        1u64 << self.bits(Field::Time)
    }

    pub fn end_ms(&self) -> i64 {
        let span = (self.ticks_limit() as i128) * (self.unit_ms as i128);
        (self.epoch_ms as i128 + span).min(i64::MAX as i128) as i64
    }

    pub fn years(&self) -> f64 {
        self.ticks_limit() as f64 * self.unit_ms as f64 / MS_PER_YEAR
    }

    pub fn js_safe(&self) -> bool {
        self.total_bits() <= 53
    }

    pub fn max_id(&self) -> i64 {
        ((1u128 << self.total_bits()) - 1) as i64
    }

    /// The tick a wall-clock time (ms since 1970) falls in, or None before the epoch.
    #[inline]
    pub fn tick_of_ms(&self, ms: i64) -> Option<u64> {
        let d = ms.checked_sub(self.epoch_ms)?;
        if d < 0 {
            return None;
        }
        Some(if self.unit_ms == 1 {
            d as u64
        } else {
            d as u64 / self.unit_ms
        })
    }

    /// The first millisecond of a tick.
    pub fn ms_of_tick(&self, tick: u64) -> i64 {
        (self.epoch_ms as i128 + tick as i128 * self.unit_ms as i128)
            .clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// Assembles an ID. Callers guarantee each part fits its field (the generator and the
    /// worker-id checks do); debug builds assert it.
    #[inline]
    pub fn pack(
        &self,
        tick: u64,
        datacenter: u64,
        worker: u64,
        rollback: u64,
        sequence: u64,
    ) -> i64 {
        debug_assert!(tick < self.ticks_limit());
        debug_assert!(sequence <= self.max_value(Field::Sequence));
        let put = |f: Field, v: u64| {
            if self.bits(f) == 0 {
                0
            } else {
                v << self.shift(f)
            }
        };
        (put(Field::Time, tick)
            | put(Field::Datacenter, datacenter)
            | put(Field::Worker, worker)
            | put(Field::Rollback, rollback)
            | put(Field::Sequence, sequence)
            | put(Field::Reserved, self.reserved_value)) as i64
    }

    /// Takes an ID apart; an ID that this layout cannot have made is an error that says why.
    pub fn unpack(&self, id: i64) -> Result<Decoded, DecodeError> {
        if id < 0 {
            return Err(DecodeError::Negative { id });
        }
        let v = id as u64;
        if self.total_bits() < 63 && v >> self.total_bits() != 0 {
            return Err(DecodeError::TooWide {
                id,
                layout: self.name.clone(),
                bits: self.total_bits(),
                max_id: self.max_id(),
            });
        }
        let get = |f: Field| {
            if self.bits(f) == 0 {
                0
            } else {
                (v >> self.shift(f)) & self.max_value(f)
            }
        };
        let d = Decoded {
            tick: get(Field::Time),
            datacenter: get(Field::Datacenter),
            worker: get(Field::Worker),
            rollback: get(Field::Rollback),
            sequence: get(Field::Sequence),
            reserved: get(Field::Reserved),
        };
        Ok(d)
    }

    /// How many IDs a span of time covers: the span in ticks, shifted to the time field. Range
    /// partitions of this width (pg_partman's interval) start at multiples of it, which are the
    /// starts of spans counted from the epoch: with an epoch at midnight UTC and a span of a day,
    /// each partition is a UTC day.
    pub fn id_span_ms(&self, span_ms: i64) -> Result<i64, SpanError> {
        if span_ms <= 0 {
            return Err(SpanError::NotPositive { span_ms });
        }
        if !(span_ms as u64).is_multiple_of(self.unit_ms) {
            return Err(SpanError::NotWholeTicks {
                span_ms,
                unit_ms: self.unit_ms,
                layout: self.name.clone(),
            });
        }
        let ticks = span_ms as u64 / self.unit_ms;
        if ticks >= self.ticks_limit() {
            return Err(SpanError::TooLong {
                span_ms,
                layout: self.name.clone(),
            });
        }
        Ok((ticks << self.shift(Field::Time)) as i64)
    }

    /// The smallest ID whose time is at or after `ms`: the lower bound of a time range scan. It
    /// is clamped to the layout's range, so `id >= id_from_ms(..)` stays meaningful at the edges.
    pub fn min_id_at_ms(&self, ms: i64) -> Result<i64, PastEnd> {
        let tick = match self.tick_of_ms(ms) {
            None => return Ok(0),
            Some(t) => t,
        };
        // A tick that starts after `ms` would leave out IDs of the tick `ms` is in; tick_of_ms
        // rounds down, so that tick is the right one.
        if tick >= self.ticks_limit() {
            return Err(PastEnd(format!(
                "{} is past the end of layout {} ({})",
                format_utc_ms(ms),
                self.name,
                format_utc_ms(self.end_ms())
            )));
        }
        Ok((tick << self.shift(Field::Time)) as i64)
    }
}
