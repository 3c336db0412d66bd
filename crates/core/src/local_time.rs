//! The instants a condition on a *local* time can hold for: `created_at::date = D`,
//! `date_trunc('day', created_at) = T`, `created_at AT TIME ZONE 'Europe/Paris' < TS`, which ORMs
//! write for "on a given day". A local time is an instant plus the zone's UTC offset at it, and
//! the offset changes where the zone's clocks do (daylight saving time, a new standard time): a
//! local time can happen twice (clocks fall back), or never (they spring forward), and across
//! midnight in some zones (America/Havana's clocks fell back from 01:00 to 00:00 on 2025-11-02, so
//! that day's first local hour happened twice; PostgreSQL reads `date '2025-11-02'::timestamptz`
//! as the later midnight, and the instants of the first hour, whose `::date` is that day, fall
//! below it). So no bound here is the local value read as an instant: each one is widened by the
//! offsets the zone actually has near it, which the caller walks (`Offsets`), and is a superset:
//! the condition itself is kept beside the range, which decides each row.
//!
//! Instants and local times are microseconds since PostgreSQL's epoch (2000-01-01), as i128 so
//! that no sum overflows; the caller clamps to what a `timestamptz` can hold.

/// More than any UTC offset PostgreSQL accepts: a zone's offset is less than 168 hours either
/// way (its time zone code's limit for POSIX zone strings, `SET TIME ZONE INTERVAL`'s too;
/// abbreviations stay within 15 hours). Seconds.
pub const MAX_OFFSET_S: i64 = 168 * 3600;

const SECOND: i128 = 1_000_000;
const DAY: i128 = 86_400 * SECOND;

/// A unit `date_trunc` truncates to, by its canonical name (PostgreSQL also takes abbreviations
/// and plurals of some; those are not served: the condition is then left as it is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Microseconds,
    Milliseconds,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
}

impl Unit {
    const ALL: [(Unit, &'static str); 13] = [
        (Unit::Microseconds, "microseconds"),
        (Unit::Milliseconds, "milliseconds"),
        (Unit::Second, "second"),
        (Unit::Minute, "minute"),
        (Unit::Hour, "hour"),
        (Unit::Day, "day"),
        (Unit::Week, "week"),
        (Unit::Month, "month"),
        (Unit::Quarter, "quarter"),
        (Unit::Year, "year"),
        (Unit::Decade, "decade"),
        (Unit::Century, "century"),
        (Unit::Millennium, "millennium"),
    ];

    /// The unit of a canonical name, in any case (PostgreSQL folds the name to lower case).
    pub fn named(name: &str) -> Option<Unit> {
        Unit::ALL
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|&(u, _)| u)
    }

    /// The name `date_trunc` takes.
    pub fn name(self) -> &'static str {
        Unit::ALL
            .iter()
            .find(|(u, _)| *u == self)
            .expect("every unit")
            .1
    }

    /// The longest one unit can be, in local time (where every day has 24 hours), and shorter
    /// than any two: so that truncating `truncated + longest` gives the next unit's start.
    pub fn longest_us(self) -> i128 {
        match self {
            Unit::Microseconds => 1,
            Unit::Milliseconds => 1_000,
            Unit::Second => SECOND,
            Unit::Minute => 60 * SECOND,
            Unit::Hour => 3_600 * SECOND,
            Unit::Day => DAY,
            Unit::Week => 7 * DAY,
            Unit::Month => 31 * DAY,
            Unit::Quarter => 92 * DAY,
            Unit::Year => 366 * DAY,
            // 10, 100 and 1000 years hold at most 3, 25 and 243 leap days.
            Unit::Decade => 3_653 * DAY,
            Unit::Century => 36_525 * DAY,
            Unit::Millennium => 365_243 * DAY,
        }
    }
}

/// The least and the greatest UTC offset a zone has over a span of instants (seconds east).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offsets {
    pub min_s: i64,
    pub max_s: i64,
}

impl Offsets {
    fn min_us(self) -> i128 {
        i128::from(self.min_s) * SECOND
    }
    fn max_us(self) -> i128 {
        i128::from(self.max_s) * SECOND
    }
}

/// The span of instants whose offsets a bound of local time `l` needs: every instant whose local
/// time can be `l` is within it.
pub fn local_window(l: i128) -> (i128, i128) {
    let g = i128::from(MAX_OFFSET_S) * SECOND;
    (l - g, l + g)
}

/// The earliest instant whose local time can be at or after `a`, given the offsets over
/// `local_window(a)`: every instant before it has a local time before `a`. (Below the window an
/// instant's local time is below `a` by any offset; inside it by the window's.)
pub fn local_lower(a: i128, offsets: Offsets) -> i128 {
    a - offsets.max_us()
}

/// The latest instant whose local time can be at or before `b`, given the offsets over
/// `local_window(b)`.
pub fn local_upper(b: i128, offsets: Offsets) -> i128 {
    b - offsets.min_us()
}

/// The span of instants whose offsets the bounds of `date_trunc(unit, t) = c` need (a
/// `timestamptz` truncated in a zone: the local time truncated, read back as an instant with an
/// offset the zone has near it).
pub fn trunc_window(c: i128, unit: Unit) -> (i128, i128) {
    let g = i128::from(MAX_OFFSET_S) * SECOND;
    let reach = 4 * g + unit.longest_us();
    (c - reach, c + reach)
}

/// The earliest instant `t` whose `date_trunc(unit, t)` can be at or after `c`. With `o` the
/// zone's offsets over `trunc_window(c, unit)`, the truncation is `floor(local(t)) - o1` and
/// `local(t) = t + o2` for some offsets o1, o2 of the window, so `date_trunc >= c` gives
/// `t + max >= local(t) >= floor(local(t)) >= c + min`.
pub fn trunc_lower(c: i128, offsets: Offsets) -> i128 {
    c - (offsets.max_us() - offsets.min_us())
}

/// The latest instant `t` whose `date_trunc(unit, t)` can be at or before `c`: `floor(local(t))
/// <= c + max`, and `local(t)` is less than a unit past its floor, so `t + min <= local(t) < c +
/// max + longest`.
pub fn trunc_upper(c: i128, unit: Unit, offsets: Offsets) -> i128 {
    c + (offsets.max_us() - offsets.min_us()) + unit.longest_us()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i128 = 3_600 * SECOND;

    /// A zone of piecewise constant offsets: (from this instant on, offset in seconds).
    struct Zone(Vec<(i128, i64)>);

    impl Zone {
        fn offset_us(&self, t: i128) -> i128 {
            let o = self
                .0
                .iter()
                .rev()
                .find(|(from, _)| *from <= t)
                .map_or(self.0[0].1, |&(_, o)| o);
            i128::from(o) * SECOND
        }
        fn local(&self, t: i128) -> i128 {
            t + self.offset_us(t)
        }
        fn offsets(&self, (lo, hi): (i128, i128)) -> Offsets {
            let mut os = vec![self.offset_us(lo) / SECOND];
            os.extend(
                self.0
                    .iter()
                    .filter(|(from, _)| *from > lo && *from <= hi)
                    .map(|&(_, o)| i128::from(o)),
            );
            Offsets {
                min_s: *os.iter().min().unwrap() as i64,
                max_s: *os.iter().max().unwrap() as i64,
            }
        }
        /// An instant for a local time, as PostgreSQL reads one: the offset before a change
        /// where the local time is skipped or repeated... any of the zone's nearby offsets.
        fn instants_of(&self, l: i128) -> Vec<i128> {
            let mut out: Vec<i128> = self
                .0
                .iter()
                .map(|&(_, o)| l - i128::from(o) * SECOND)
                .collect();
            out.sort();
            out
        }
    }

    fn floor(l: i128, unit: i128) -> i128 {
        l.div_euclid(unit) * unit
    }

    fn zones() -> Vec<Zone> {
        vec![
            // Fixed offsets, the largest either way.
            Zone(vec![(i128::MIN, 0)]),
            Zone(vec![(i128::MIN, MAX_OFFSET_S - 1)]),
            Zone(vec![(i128::MIN, -(MAX_OFFSET_S - 1))]),
            // Havana 2025: -4 h, then -5 h from 05:00 UTC (01:00 local back to 00:00).
            Zone(vec![(i128::MIN, -4 * 3600), (5 * HOUR, -5 * 3600)]),
            // Spring forward at local midnight (00:00 -> 01:00), and back a day later.
            Zone(vec![
                (i128::MIN, -3 * 3600),
                (3 * HOUR, -2 * 3600),
                (3 * HOUR + DAY, -3 * 3600),
            ]),
            // A day skipped (Samoa 2011: -10 h to +14 h), and a 30-minute change (Lord Howe).
            Zone(vec![(i128::MIN, -10 * 3600), (10 * HOUR, 14 * 3600)]),
            Zone(vec![(i128::MIN, 37_800), (HOUR / 2, 39_600)]),
            // Two changes within hours of each other.
            Zone(vec![
                (i128::MIN, 3600),
                (HOUR, 7200),
                (2 * HOUR, 0),
                (3 * HOUR, 10_800),
            ]),
        ]
    }

    /// Every instant on a grid around the changes and the constants has a local time the bounds
    /// keep: an instant outside them never satisfies the condition.
    #[test]
    fn local_bounds_hold_every_instant_that_satisfies() {
        let step = 5 * 60 * SECOND;
        for z in zones() {
            for unit in [HOUR, DAY, 7 * DAY] {
                for c in (-3 * DAY..3 * DAY).step_by((7 * HOUR) as usize) {
                    let a = floor(c, unit);
                    let b = floor(c, unit) + unit - 1;
                    let lower = local_lower(a, z.offsets(local_window(a)));
                    let upper = local_upper(b, z.offsets(local_window(b)));
                    for t in (-12 * DAY..12 * DAY).step_by(step as usize) {
                        let f = floor(z.local(t), unit);
                        if f >= floor(c, unit) {
                            assert!(t >= lower, "t {t} floor {f} c {c} lower {lower}");
                        }
                        if f <= c {
                            assert!(t <= upper, "t {t} floor {f} c {c} upper {upper}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn trunc_bounds_hold_every_instant_that_satisfies() {
        let step = 5 * 60 * SECOND;
        for z in zones() {
            for (unit, len) in [(Unit::Hour, HOUR), (Unit::Day, DAY)] {
                for c in (-3 * DAY..3 * DAY).step_by((5 * HOUR) as usize) {
                    let o = z.offsets(trunc_window(c, unit));
                    let (lower, upper) = (trunc_lower(c, o), trunc_upper(c, unit, o));
                    for t in (-12 * DAY..12 * DAY).step_by(step as usize) {
                        let f = floor(z.local(t), len);
                        // The truncation read back with t's own offset or any instant of f.
                        let mut vs = vec![f - z.offset_us(t)];
                        vs.extend(z.instants_of(f));
                        for v in vs {
                            if v >= c {
                                assert!(t >= lower, "t {t} v {v} c {c} lower {lower}");
                            }
                            if v <= c {
                                assert!(t <= upper, "t {t} v {v} c {c} upper {upper}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// A control: the plain reading of the local time as an instant with one offset (what the
    /// naive range does) loses instants in Havana's repeated midnight hour.
    #[test]
    fn a_single_offset_would_lose_instants() {
        let havana = &zones()[3];
        let day = 0; // local midnight of the day whose first hour repeats
        let naive = day + 5 * HOUR; // midnight read with the later offset, -5 h
        let t = 4 * HOUR + HOUR / 2; // 04:30 UTC: 00:30 local, that day
        assert!(floor(havana.local(t), DAY) == day && t < naive);
        let lower = local_lower(day, havana.offsets(local_window(day)));
        assert!(t >= lower);
    }

    #[test]
    fn units_by_name_and_their_lengths() {
        assert_eq!(Unit::named("DAY"), Some(Unit::Day));
        assert_eq!(Unit::named("days"), None);
        for (u, n) in Unit::ALL {
            assert_eq!(u.name(), n);
            assert_eq!(Unit::named(n), Some(u));
        }
        // Truncating `start + longest` lands in the next unit: longer than one, shorter than two.
        let shortest = |u: Unit| match u {
            Unit::Month => 28 * DAY,
            Unit::Quarter => 89 * DAY,
            Unit::Year => 365 * DAY,
            Unit::Decade => 3_652 * DAY,
            Unit::Century => 36_524 * DAY,
            Unit::Millennium => 365_242 * DAY,
            u => u.longest_us(),
        };
        for (u, _) in Unit::ALL {
            assert!(u.longest_us() >= shortest(u) && u.longest_us() < 2 * shortest(u));
        }
    }
}
