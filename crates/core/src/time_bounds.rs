//! Key ranges implied by conditions on the time inside a key: a free `created_at`.
//!
//! `id_timestamp(id) >= T` holds only for IDs at or above the first ID of the first tick that
//! starts at or after `T`, so the planner may add `id >= lower(T)` and read the key's index (or
//! prune partitions) instead of every row. The added condition must be implied by the original for
//! every value a column can hold, not only the IDs pg_idgen made: this module is that arithmetic,
//! and its tests check it against the decoder itself over every preset.
//!
//! A bound is also exact: every key inside it that the decoder takes satisfies the condition, so
//! that the range may stand for the condition instead of beside it.
//!
//! The decoders' time is a step function of the key: with the time field on top of a layout, the
//! tick of an ID in `[0, max_id]` is `id >> shift`, its time `epoch + tick * unit`, so the time
//! never decreases as the ID grows. Keys the decoder refuses (negative, wider than the layout; a
//! UUID that is no version 7) make the original condition an ERROR, never true, so a bound may
//! leave them out. Where time is not the top field, nothing is implied ([`snowflake_bounds`] says
//! so with `None`).
//!
//! Times are microseconds since 1970 (PostgreSQL's `timestamptz` moved to that epoch), as `i128`
//! so that no instant PostgreSQL can hold overflows; its infinities are [`Instant::Before`] and
//! [`Instant::After`].

use crate::field::Field;
use crate::layout::Layout;

/// An instant of a `timestamptz`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instant {
    /// `-infinity`: before every time.
    Before,
    /// Microseconds since 1970-01-01 00:00 UTC.
    Micros(i128),
    /// `infinity`: after every time.
    After,
}

/// A side of a condition `time(key) OP t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// `>=` (inclusive) or `>`: keys at or above a bound.
    Lower { inclusive: bool },
    /// `<=` (inclusive) or `<`: keys at or below a bound.
    Upper { inclusive: bool },
}

/// The ticks `k` (times `origin + k * unit`, in µs) that satisfy `time OP t`, as the first such
/// tick for a lower side or the last for an upper one; `None` when no tick does. Ticks run from 0
/// to `limit - 1`.
fn tick_bound(t: Instant, side: Side, origin_us: i128, unit_us: i128, limit: u128) -> Option<u128> {
    let last = limit as i128 - 1;
    let k: i128 = match (t, side) {
        (Instant::Before, Side::Lower { .. }) => 0,
        (Instant::After, Side::Lower { .. }) => return None,
        (Instant::Before, Side::Upper { .. }) => return None,
        (Instant::After, Side::Upper { .. }) => last,
        (Instant::Micros(us), Side::Lower { inclusive }) => {
            let d = us - origin_us;
            // The first tick starting at or after t (inclusive), or strictly after it.
            if inclusive {
                d.div_euclid(unit_us) + i128::from(d.rem_euclid(unit_us) != 0)
            } else {
                d.div_euclid(unit_us) + 1
            }
        }
        (Instant::Micros(us), Side::Upper { inclusive }) => {
            let d = us - origin_us;
            // The last tick starting at or before t (inclusive), or strictly before it.
            if inclusive {
                d.div_euclid(unit_us)
            } else {
                d.div_euclid(unit_us) - i128::from(d.rem_euclid(unit_us) == 0)
            }
        }
    };
    match side {
        Side::Lower { .. } if k > last => None,
        Side::Lower { .. } => Some(k.max(0) as u128),
        Side::Upper { .. } if k < 0 => None,
        Side::Upper { .. } => Some(k.min(last) as u128),
    }
}

/// The key bound of `id_timestamp(id, layout) OP t` for a bigint key: for a lower side the
/// smallest key whose time satisfies it, for an upper side the largest. `Some(None)`: no key
/// does (the added condition is `key >= NULL`, which no row passes). `None`: the layout implies
/// nothing, because its time is not the top field.
pub fn snowflake_bounds(layout: &Layout, t: Instant, side: Side) -> Option<Option<i64>> {
    if !layout.time_on_top() {
        return None;
    }
    let shift = layout.shift(Field::Time);
    let unit_us = i128::from(layout.unit_ms) * 1000;
    let origin_us = i128::from(layout.epoch_ms) * 1000;
    let tick = tick_bound(
        t,
        side,
        origin_us,
        unit_us,
        u128::from(layout.ticks_limit()),
    );
    Some(tick.map(|k| match side {
        Side::Lower { .. } => (k << shift) as i64,
        Side::Upper { .. } => (((k + 1) << shift) - 1) as i64,
    }))
}

/// The key bound of `uuidv7_timestamp(id) OP t` (and of `uuid_extract_timestamp` on version 7
/// UUIDs): the 48 bits of milliseconds on top, then all zeros for a lower side (at or below every
/// UUID of that millisecond) or all ones for an upper side. `None`: no UUID satisfies it.
pub fn uuidv7_bound(t: Instant, side: Side) -> Option<[u8; 16]> {
    let ms = tick_bound(t, side, 0, 1000, 1u128 << 48)?;
    Some(match side {
        Side::Lower { .. } => (ms << 80).to_be_bytes(),
        Side::Upper { .. } => ((ms << 80) | ((1u128 << 80) - 1)).to_be_bytes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;
    use crate::uuidv7;

    const SIDES: [Side; 4] = [
        Side::Lower { inclusive: true },
        Side::Lower { inclusive: false },
        Side::Upper { inclusive: true },
        Side::Upper { inclusive: false },
    ];

    /// What the condition says of a time: the reference the bounds are checked against.
    fn holds(time_us: i128, t: Instant, side: Side) -> bool {
        match (t, side) {
            (Instant::Before, Side::Lower { .. }) | (Instant::After, Side::Upper { .. }) => true,
            (Instant::After, Side::Lower { .. }) | (Instant::Before, Side::Upper { .. }) => false,
            (Instant::Micros(us), Side::Lower { inclusive }) => {
                time_us > us || (inclusive && time_us == us)
            }
            (Instant::Micros(us), Side::Upper { inclusive }) => {
                time_us < us || (inclusive && time_us == us)
            }
        }
    }

    fn admits(bound: Option<i64>, id: i64, side: Side) -> bool {
        match (bound, side) {
            (None, _) => false,
            (Some(b), Side::Lower { .. }) => id >= b,
            (Some(b), Side::Upper { .. }) => id <= b,
        }
    }

    /// The time the decoder gives an ID, in µs; None where it refuses the ID.
    fn time_of(l: &Layout, id: i64) -> Option<i128> {
        let d = l.unpack(id).ok()?;
        Some(i128::from(l.ms_of_tick(d.tick)) * 1000)
    }

    /// IDs around the edges of the ticks near a time, and the layout's ends.
    fn ids_near(l: &Layout, us: i128) -> Vec<i64> {
        let shift = l.shift(Field::Time);
        let unit_us = i128::from(l.unit_ms) * 1000;
        let k = (us - i128::from(l.epoch_ms) * 1000).div_euclid(unit_us);
        let mut ids = vec![
            i64::MIN,
            -1,
            0,
            1,
            l.max_id() - 1,
            l.max_id(),
            l.max_id().saturating_add(1),
            i64::MAX,
        ];
        for dk in -2..=2i128 {
            let tick = k + dk;
            if tick < 0 || tick >= i128::from(l.ticks_limit()) {
                continue;
            }
            let first = (tick << shift) as i64;
            let last = (((tick + 1) << shift) - 1) as i64;
            ids.extend([
                first,
                first.saturating_add(1),
                last.saturating_sub(1),
                last,
                last.saturating_add(1),
            ]);
        }
        ids
    }

    /// Instants on, just before and just after tick edges, sub-millisecond ones, the epoch, the
    /// layout's end and PostgreSQL's ends and infinities.
    fn instants(l: &Layout) -> Vec<Instant> {
        let unit_us = i128::from(l.unit_ms) * 1000;
        let epoch_us = i128::from(l.epoch_ms) * 1000;
        let end_us = i128::from(l.end_ms()) * 1000;
        let mut out = vec![Instant::Before, Instant::After];
        for base in [
            epoch_us,
            epoch_us + 3 * unit_us,
            1_795_000_000_000_000,
            end_us - unit_us,
            end_us,
        ] {
            for d in [
                -unit_us - 1,
                -unit_us,
                -1000,
                -1,
                0,
                1,
                999,
                1000,
                unit_us - 1,
                unit_us,
                unit_us + 1,
            ] {
                out.push(Instant::Micros(base + d));
            }
        }
        // PostgreSQL's first and last instants (4713 BC, 294276 AD), in µs since 1970.
        out.extend([
            Instant::Micros(-210_866_803_200_000_000),
            Instant::Micros(9_224_318_015_999_999_999 - 946_684_800_000_000),
        ]);
        out
    }

    #[test]
    fn snowflake_bounds_are_exact_for_every_key_the_decoder_takes() {
        for name in presets::names() {
            let l = Layout::parse(name).unwrap();
            let Some(_) = snowflake_bounds(&l, Instant::Before, SIDES[0]) else {
                assert!(
                    !l.time_on_top(),
                    "{name}: bounds refused for a time-ordered layout"
                );
                continue;
            };
            for t in instants(&l) {
                let near = match t {
                    Instant::Micros(us) => us,
                    _ => i128::from(l.epoch_ms) * 1000,
                };
                for side in SIDES {
                    let bound = snowflake_bounds(&l, t, side).unwrap();
                    for id in ids_near(&l, near) {
                        let Some(time) = time_of(&l, id) else {
                            continue;
                        };
                        // Implied: every key whose time satisfies the condition passes.
                        // Exact: no other key the decoder takes does, so that the range may
                        // replace the condition (the planner hook does, idgen.time_conditions).
                        assert_eq!(
                            admits(bound, id, side),
                            holds(time, t, side),
                            "{name} {t:?} {side:?}: {id} (time {time}) and bound {bound:?}"
                        );
                    }
                    // Tight: the bound itself is a key that satisfies it (no wider than needed).
                    if let Some(b) = bound {
                        let time = time_of(&l, b).expect("a bound is a key of the layout");
                        assert!(
                            holds(time, t, side),
                            "{name} {t:?} {side:?}: bound {b} does not satisfy it"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_layout_keeps_time_on_top_so_bounds_exist() {
        // The grammar refuses another order, so None is a defence, never a path today.
        assert!(Layout::parse("pg_idgen order=worker,time,sequence").is_err());
        for name in presets::names() {
            let l = Layout::parse(name).unwrap();
            assert!(l.time_on_top(), "{name}");
            assert!(
                snowflake_bounds(&l, Instant::Micros(0), SIDES[0]).is_some(),
                "{name}"
            );
        }
    }

    #[test]
    fn uuidv7_bounds_are_exact() {
        let ms_list = [
            0u64,
            1,
            999,
            1_795_000_000_000,
            (1 << 48) - 2,
            (1 << 48) - 1,
        ];
        let mut uuids = Vec::new();
        for &ms in &ms_list {
            uuids.push(uuidv7::first_of_ms(ms));
            uuids.push(uuidv7::compose(ms << 12 | 0xfff, u64::MAX));
        }
        let mut times = vec![
            Instant::Before,
            Instant::After,
            Instant::Micros(-1),
            Instant::Micros(i128::MAX / 4),
        ];
        for &ms in &ms_list {
            for d in [-1001i128, -1000, -1, 0, 1, 999, 1000] {
                times.push(Instant::Micros(i128::from(ms) * 1000 + d));
            }
        }
        for t in times {
            for side in SIDES {
                let bound = uuidv7_bound(t, side);
                for u in &uuids {
                    let time = i128::from(uuidv7::ms_of(u).unwrap()) * 1000;
                    let admitted = match (bound, side) {
                        (None, _) => false,
                        (Some(b), Side::Lower { .. }) => u >= &b,
                        (Some(b), Side::Upper { .. }) => u <= &b,
                    };
                    if holds(time, t, side) {
                        assert!(admitted, "{t:?} {side:?}: {u:?} left out by {bound:?}");
                    } else {
                        assert!(
                            !admitted,
                            "{t:?} {side:?}: {u:?} let in by {bound:?} (not tight)"
                        );
                    }
                }
            }
        }
    }
}
