//! The instants a condition on a local time of a key's time can hold for (`wrappers.rs` finds
//! them: `created_at::date = D`, `date_trunc('day', created_at) = T`, `created_at AT TIME ZONE
//! 'Europe/Paris' < TS`): four STABLE functions in `idgen_internal` that the walk wraps in the
//! key's bound functions, `id >= id_time_lower(time_local_lower(D, 'day', NULL), ...)`.
//! They read the zone's UTC offsets near the bound (`pg_next_dst_boundary`), so a day whose
//! clocks change gives a wider range, never a narrower one; the arithmetic, and why it is a
//! superset, is the core's (`pg_idgen_core::local_time`). The condition itself stays beside the
//! range, but where the range is exact (`local_exact`; in the session's zone `session_exact`,
//! whose bounds are computed while planning). Where anything is not as expected (a unit or zone
//! they do not know, a time near the ends of the calendar, a zone that walks too long) they give
//! the widest bound: never an error.
//!
//! `unit` is one of `date_trunc`'s canonical units, or NULL for none; `zone` a zone's text as `AT
//! TIME ZONE` takes it, or NULL for the session's TimeZone (what `::date`, `::timestamp` and
//! `date_trunc` of a timestamptz read). A NULL a user wrote there makes the condition NULL on
//! every row (its functions are strict), which any range keeps. Not strict: a NULL constant gives
//! the widest bound.
use std::ffi::CString;

use pgrx::datum::{Date, Timestamp};
use pgrx::pg_sys;
use pgrx::prelude::*;

use super::bounds::{date_instant, instant, local_instant};

use pg_idgen_core::local_time::{
    local_lower, local_upper, local_window, trunc_lower, trunc_upper, trunc_window, Offsets, Unit,
};
use pg_idgen_core::time_bounds::Instant;

/// From 1970 to 2000, PostgreSQL's epoch, in seconds and µs.
const PG_EPOCH_S: i128 = 946_684_800;
const PG_EPOCH_US: i128 = PG_EPOCH_S * 1_000_000;
/// The first finite timestamp and the one after the last (datatype/timestamp.h), µs since 2000.
const MIN_TIMESTAMP: i128 = -211_813_488_000_000_000;
const END_TIMESTAMP: i128 = 9_223_371_331_200_000_000;
/// Local times truncated here: 0001-01-01 to 200000-01-01 (a truncation or the next unit's start
/// stays inside what a timestamp holds; PostgreSQL's truncations of years BC are not served).
const FIRST_TRUNCATED: i64 = -63_082_281_600_000_000;
const LAST_TRUNCATED: i64 = 6_248_900_160_000_000_000;
/// Transitions a zone may have within one window before the bound is given up.
const MAX_TRANSITIONS: usize = 20_000;

/// The earliest instant whose local time in zone (NULL for the session's TimeZone), truncated to
/// unit (NULL for none), can be at or after c truncated; read from the zone's offsets near it, so a
/// change of the clocks widens it: what (created_at AT TIME ZONE zone) >= c adds, inside
/// id_time_lower.
///
/// The earliest instant whose local time in `zone`, truncated to `unit`, can be at or after `c`
/// truncated: what `created_at::date >= D` (`= D`, `> D`) needs, as `time_local_lower(D, 'day',
/// NULL)`.
#[pg_extern(
    stable,
    parallel_safe,
    schema = "idgen_internal",
    name = "time_local_lower"
)]
fn time_local_lower_local(
    c: Option<Timestamp>,
    unit: Option<&str>,
    zone: Option<&str>,
) -> TimestampWithTimeZone {
    given(c, unit, zone, true, |c, u, z| {
        local_bound(c.into_inner(), u, z, true)
    })
}

/// The latest instant whose local time in zone, truncated to unit, can be at or before c truncated.
#[pg_extern(
    stable,
    parallel_safe,
    schema = "idgen_internal",
    name = "time_local_upper"
)]
fn time_local_upper_local(
    c: Option<Timestamp>,
    unit: Option<&str>,
    zone: Option<&str>,
) -> TimestampWithTimeZone {
    given(c, unit, zone, false, |c, u, z| {
        local_bound(c.into_inner(), u, z, false)
    })
}

/// time_local_lower of a date (its midnight): what created_at::date >= d adds, with unit 'day'.
#[pg_extern(
    stable,
    parallel_safe,
    schema = "idgen_internal",
    name = "time_local_lower"
)]
fn time_local_lower_date(
    c: Option<Date>,
    unit: Option<&str>,
    zone: Option<&str>,
) -> TimestampWithTimeZone {
    given(c, unit, zone, true, |c, u, z| date_bound(c, u, z, true))
}

/// time_local_upper of a date (its midnight): what created_at::date <= d adds.
#[pg_extern(
    stable,
    parallel_safe,
    schema = "idgen_internal",
    name = "time_local_upper"
)]
fn time_local_upper_date(
    c: Option<Date>,
    unit: Option<&str>,
    zone: Option<&str>,
) -> TimestampWithTimeZone {
    given(c, unit, zone, false, |c, u, z| date_bound(c, u, z, false))
}

/// The earliest instant t whose date_trunc(unit, t, zone) can be at or after c (zone NULL for the
/// session's TimeZone).
#[pg_extern(stable, parallel_safe, schema = "idgen_internal")]
fn time_trunc_lower(
    c: Option<TimestampWithTimeZone>,
    unit: Option<&str>,
    zone: Option<&str>,
) -> TimestampWithTimeZone {
    given(c, unit, zone, true, |c, u, z| {
        trunc_bound(|| instant(c), u, z, true)
    })
}

/// The latest instant t whose date_trunc(unit, t, zone) can be at or before c.
#[pg_extern(stable, parallel_safe, schema = "idgen_internal")]
fn time_trunc_upper(
    c: Option<TimestampWithTimeZone>,
    unit: Option<&str>,
    zone: Option<&str>,
) -> TimestampWithTimeZone {
    given(c, unit, zone, false, |c, u, z| {
        trunc_bound(|| instant(c), u, z, false)
    })
}

// The same, of a timestamp or a date compared with the truncation (a timestamptz) as PostgreSQL
// compares them: as that wall-clock time in the session's TimeZone (`date_trunc('day',
// created_at) = $1` with a naive datetime, as Django and SQLAlchemy send one).

/// time_trunc_lower of a timestamp, compared with the truncation as PostgreSQL compares one with a
/// timestamptz (in the session's TimeZone): what date_trunc('day', created_at) >= ts::timestamp
/// adds.
#[pg_extern(
    stable,
    parallel_safe,
    schema = "idgen_internal",
    name = "time_trunc_lower"
)]
fn time_trunc_lower_local(
    c: Option<Timestamp>,
    unit: Option<&str>,
    zone: Option<&str>,
) -> TimestampWithTimeZone {
    given(c, unit, zone, true, |c, u, z| {
        trunc_bound(|| local_instant(c), u, z, true)
    })
}

/// time_trunc_upper of a timestamp, in the session's TimeZone.
#[pg_extern(
    stable,
    parallel_safe,
    schema = "idgen_internal",
    name = "time_trunc_upper"
)]
fn time_trunc_upper_local(
    c: Option<Timestamp>,
    unit: Option<&str>,
    zone: Option<&str>,
) -> TimestampWithTimeZone {
    given(c, unit, zone, false, |c, u, z| {
        trunc_bound(|| local_instant(c), u, z, false)
    })
}

/// time_trunc_lower of a date (its midnight in the session's TimeZone).
#[pg_extern(
    stable,
    parallel_safe,
    schema = "idgen_internal",
    name = "time_trunc_lower"
)]
fn time_trunc_lower_date(
    c: Option<Date>,
    unit: Option<&str>,
    zone: Option<&str>,
) -> TimestampWithTimeZone {
    given(c, unit, zone, true, |c, u, z| {
        trunc_bound(|| date_instant(c), u, z, true)
    })
}

/// time_trunc_upper of a date (its midnight in the session's TimeZone).
#[pg_extern(
    stable,
    parallel_safe,
    schema = "idgen_internal",
    name = "time_trunc_upper"
)]
fn time_trunc_upper_date(
    c: Option<Date>,
    unit: Option<&str>,
    zone: Option<&str>,
) -> TimestampWithTimeZone {
    given(c, unit, zone, false, |c, u, z| {
        trunc_bound(|| date_instant(c), u, z, false)
    })
}

/// `bound(c, unit, zone)`, or the widest bound where `c` is NULL.
fn given<'a, T>(
    c: Option<T>,
    unit: Option<&'a str>,
    zone: Option<&'a str>,
    lower: bool,
    bound: impl FnOnce(T, Option<&'a str>, Option<&'a str>) -> TimestampWithTimeZone,
) -> TimestampWithTimeZone {
    match c {
        Some(c) => bound(c, unit, zone),
        None => widest(lower),
    }
}

fn widest(lower: bool) -> TimestampWithTimeZone {
    if lower {
        TimestampWithTimeZone::negative_infinity()
    } else {
        TimestampWithTimeZone::positive_infinity()
    }
}

/// An instant as a timestamptz: its infinities past either end.
fn clamped(us: i128) -> TimestampWithTimeZone {
    if us < MIN_TIMESTAMP {
        TimestampWithTimeZone::negative_infinity()
    } else if us >= END_TIMESTAMP {
        TimestampWithTimeZone::positive_infinity()
    } else {
        TimestampWithTimeZone::try_from(us as i64).unwrap_or_else(|_| {
            // In range by the test above.
            TimestampWithTimeZone::positive_infinity()
        })
    }
}

/// `raw`: a timestamp's representation (µs since 2000, its infinities at the ends of i64).
fn local_bound(
    raw: i64,
    unit: Option<&str>,
    zone: Option<&str>,
    lower: bool,
) -> TimestampWithTimeZone {
    // A unit or zone PostgreSQL would refuse (its own call then fails on every row read): the
    // widest bound, so that the rows are read and fail as they would without the range.
    let (Some(zone), Some(unit)) = (Zone::named(zone), unit_named(unit)) else {
        return widest(lower);
    };
    // A local time at an end: every finite one is after -infinity and before infinity.
    match (raw, lower) {
        (i64::MIN, true) | (i64::MAX, false) => return widest(lower),
        (i64::MIN, false) | (i64::MAX, true) => return widest(!lower),
        _ => {}
    }
    let Some(local) = local_edge(raw, unit, lower) else {
        return widest(lower);
    };
    let Some(offsets) = zone.offsets(local_window(local)) else {
        return widest(lower);
    };
    clamped(if lower {
        local_lower(local, offsets)
    } else {
        local_upper(local, offsets)
    })
}

/// The local time a side of the range starts or ends at, for a finite `raw`: the unit's start at
/// or before it (lower), or the last microsecond before the next unit's (upper); `raw` itself
/// without a unit. None where it cannot be truncated.
fn local_edge(raw: i64, unit: Option<Unit>, lower: bool) -> Option<i128> {
    match unit {
        None => Some(i128::from(raw)),
        Some(_) if !(FIRST_TRUNCATED..LAST_TRUNCATED).contains(&raw) => None,
        Some(unit) => {
            let start = truncated(unit, raw);
            Some(if lower {
                i128::from(start)
            } else {
                i128::from(truncated(
                    unit,
                    (i128::from(start) + unit.longest_us()) as i64,
                )) - 1
            })
        }
    }
}

/// Whether the range of a local time in a zone named by a constant holds exactly the instants
/// whose local time satisfies the comparison (`lower`/`upper`: the sides it bounds, inclusive),
/// so that the range can stand in its place; decided while planning. True only where the zone's
/// offset is one and the same over the window of every side (no clock change near: then a local
/// time is the instant plus that offset), the comparison is `=`, `>=` or `<=`, and a `=` or `>=`
/// compares with the start of a unit (`date_trunc('day', ...) = '2025-01-01 12:00'` holds for no
/// instant). A zone named by a constant reads the same at planning and execution (PostgreSQL's
/// `timezone(text, timestamptz)` is IMMUTABLE); the session's (`zone` None) is the one of this
/// moment: see `session_exact`.
pub(super) fn local_exact(
    raw: i64,
    unit: Option<&str>,
    zone: Option<&str>,
    (lower, upper, inclusive): (bool, bool, bool),
) -> bool {
    let (Some(zone), Some(unit)) = (Zone::named(zone), unit_named(unit)) else {
        return false;
    };
    if !inclusive || raw == i64::MIN || raw == i64::MAX {
        return false;
    }
    if let Some(u) = unit {
        if !(FIRST_TRUNCATED..LAST_TRUNCATED).contains(&raw) || (lower && truncated(u, raw) != raw)
        {
            return false;
        }
    }
    [(lower, true), (upper, false)]
        .into_iter()
        .filter(|&(wanted, _)| wanted)
        .all(|(_, side)| {
            local_edge(raw, unit, side)
                .and_then(|edge| zone.offsets(local_window(edge)))
                .is_some_and(|o| o.min_s == o.max_s)
        })
}

/// A constant compared with a local time of the key's time in the session's TimeZone.
#[derive(Clone, Copy)]
pub(super) enum Compared {
    /// A local time (a timestamp's representation; a date as its midnight), compared with
    /// `created_at::date`, `created_at::timestamp` or `date_trunc(unit, created_at::timestamp)`.
    Local(i64),
    /// An instant (a timestamptz's, or a timestamp's or date's as PostgreSQL compares one with a
    /// timestamptz), compared with `date_trunc(unit, created_at)`.
    Truncated(Instant),
}

/// The bounds of the range of a comparison of a local time in the session's TimeZone with a
/// constant, computed now, where that range holds exactly the instants the comparison holds for
/// in the zone of this moment (`local_exact`: one offset near each side), so that the range can
/// stand in the comparison's place as constants: (lower, upper) for the sides wanted; None where
/// not exact. A plan made of them is right in this zone only: the caller tells `pg::zone_plans`,
/// which has cached plans made again when the zone changes.
pub(super) fn session_exact(
    c: Compared,
    unit: Option<&str>,
    sides: (bool, bool, bool),
) -> Option<(Option<TimestampWithTimeZone>, Option<TimestampWithTimeZone>)> {
    let raw = match c {
        Compared::Local(raw) => raw,
        // A truncation (an instant) compared with an instant: as the local times they are, where
        // the zone has one offset at that instant.
        Compared::Truncated(Instant::Micros(us)) => {
            let us = us - PG_EPOCH_US;
            let offsets = Zone::named(None)?.offsets((us, us))?;
            if offsets.min_s != offsets.max_s {
                return None;
            }
            i64::try_from(us + i128::from(offsets.min_s) * 1_000_000).ok()?
        }
        Compared::Truncated(_) => return None,
    };
    if !local_exact(raw, unit, None, sides) {
        return None;
    }
    // With one offset near each side, the instants of the local times there (`time_trunc_upper`
    // would add a unit, as it must where it only bounds what the comparison then decides).
    let bound = |lower: bool| local_bound(raw, unit, None, lower);
    let (lower, upper, _) = sides;
    let bounds = (lower.then(|| bound(true)), upper.then(|| bound(false)));
    // A side at an end of time is none a local time of a key has: not exact.
    let finite = |b: Option<TimestampWithTimeZone>| b.is_none_or(|b| b.is_finite());
    (finite(bounds.0) && finite(bounds.1)).then_some(bounds)
}

/// A date's midnight as a timestamp's representation, where a timestamp can hold it.
pub(super) fn date_midnight(days: i32) -> Option<i64> {
    let us = i128::from(days) * 86_400_000_000;
    (i128::from(FIRST_TRUNCATED)..i128::from(LAST_TRUNCATED))
        .contains(&us)
        .then_some(us as i64)
}

/// A unit by its text: NULL for none (Some(None)); None for one not served.
fn unit_named(unit: Option<&str>) -> Option<Option<Unit>> {
    match unit {
        None => Some(None),
        Some(u) => Unit::named(u).map(Some),
    }
}

/// Whether a wrapper's unit and zone, as constants, are ones the bounds serve (the walk adds
/// nothing for any other: the condition then reads and fails as it would without it).
pub(super) fn served(unit: Option<&str>, zone: Option<&str>) -> bool {
    unit.is_none_or(|u| Unit::named(u).is_some())
        && zone.is_none_or(|z| Zone::named(Some(z)).is_some())
}

/// A date as the timestamp of its midnight; its infinities as a timestamp's; a finite one no
/// timestamp can hold gives the widest bound.
fn date_bound(
    c: Date,
    unit: Option<&str>,
    zone: Option<&str>,
    lower: bool,
) -> TimestampWithTimeZone {
    let raw = match c.into_inner() {
        i32::MIN => i64::MIN,
        i32::MAX => i64::MAX,
        days => match date_midnight(days) {
            Some(raw) => raw,
            None => return widest(lower),
        },
    };
    local_bound(raw, unit, zone, lower)
}

/// `c`: the instant compared with the truncation, as PostgreSQL compares it (read only once the
/// unit and zone are known good).
fn trunc_bound(
    c: impl FnOnce() -> Instant,
    unit: Option<&str>,
    zone: Option<&str>,
    lower: bool,
) -> TimestampWithTimeZone {
    let (Some(zone), Some(unit)) = (Zone::named(zone), unit.and_then(Unit::named)) else {
        return widest(lower);
    };
    let c = match (c(), lower) {
        (Instant::Before, true) | (Instant::After, false) => return widest(lower),
        (Instant::Before, false) | (Instant::After, true) => return widest(!lower),
        (Instant::Micros(us), _) => us - PG_EPOCH_US,
    };
    let Some(offsets) = zone.offsets(trunc_window(c, unit)) else {
        return widest(lower);
    };
    clamped(if lower {
        trunc_lower(c, offsets)
    } else {
        trunc_upper(c, unit, offsets)
    })
}

/// PostgreSQL's `date_trunc(unit, t)` of a timestamp, inside the range where it cannot fail.
fn truncated(unit: Unit, t: i64) -> i64 {
    use pgrx::IntoDatum;
    let name = unit.name().into_datum();
    // SAFETY: timestamp_trunc with a canonical unit and a timestamp well inside the calendar.
    unsafe {
        pgrx::direct_function_call::<i64>(
            pg_sys::timestamp_trunc,
            &[name, Some(pg_sys::Datum::from(t))],
        )
        .unwrap_or(t)
    }
}

/// A zone whose offsets can be read.
enum Zone {
    /// An abbreviation of a fixed offset (seconds east).
    Fixed(i64),
    Tz(*const pg_sys::pg_tz),
}

impl Zone {
    /// The zone `AT TIME ZONE name` reads, as PostgreSQL resolves it (an abbreviation first, then
    /// a zone's name or POSIX string), or the session's for NULL. None for a dynamic abbreviation
    /// or a name PostgreSQL does not know ('' included: its own call then fails on every row).
    fn named(name: Option<&str>) -> Option<Zone> {
        let Some(name) = name else {
            // SAFETY: session_timezone is set in every backend once it is up.
            let tz = unsafe { pg_sys::session_timezone };
            return (!tz.is_null()).then_some(Zone::Tz(tz));
        };
        if name.is_empty() {
            return None;
        }
        // PostgreSQL reads at most TZ_STRLEN_MAX (255) bytes of it.
        if name.len() > 255 {
            return None;
        }
        let cname = CString::new(name).ok()?;
        // SAFETY: PostgreSQL's own lookups; the lowered copy is palloc'd.
        unsafe {
            let low =
                pg_sys::downcase_truncate_identifier(cname.as_ptr(), name.len() as i32, false);
            match abbreviation(low) {
                Some(Abbreviation::Fixed(east)) => Some(Zone::Fixed(east)),
                Some(Abbreviation::Dynamic) => None,
                None => {
                    let tz = pg_sys::pg_tzset(cname.as_ptr());
                    (!tz.is_null()).then_some(Zone::Tz(tz))
                }
            }
        }
    }

    /// The least and greatest offset over a span of instants (µs since 2000).
    fn offsets(&self, (from, to): (i128, i128)) -> Option<Offsets> {
        let tz = match *self {
            Zone::Fixed(east) => {
                return Some(Offsets {
                    min_s: east,
                    max_s: east,
                })
            }
            Zone::Tz(tz) => tz,
        };
        let from = i64::try_from(from.div_euclid(1_000_000) + PG_EPOCH_S).ok()?;
        let to = i64::try_from(to.div_euclid(1_000_000) + 1 + PG_EPOCH_S).ok()?;
        let mut step = next_boundary(from, tz);
        let (mut min, mut max) = (i64::MAX, i64::MIN);
        for _ in 0..MAX_TRANSITIONS {
            let Step {
                found,
                before,
                boundary,
                after,
            } = step;
            if found < 0 {
                return None;
            }
            min = min.min(before);
            max = max.max(before);
            if found == 0 || boundary > to {
                return Some(Offsets {
                    min_s: min,
                    max_s: max,
                });
            }
            min = min.min(after);
            max = max.max(after);
            step = next_boundary(boundary, tz);
            if step.found == 1 && step.boundary <= boundary {
                return None;
            }
        }
        None
    }
}

/// `pg_next_dst_boundary`'s answer: 1 where a change of offset follows `t` (`boundary`, with the
/// offsets before and after it, `before` also the one at `t`), 0 where none does (`before`).
struct Step {
    found: i32,
    before: i64,
    boundary: i64,
    after: i64,
}

fn next_boundary(t: pg_sys::pg_time_t, tz: *const pg_sys::pg_tz) -> Step {
    let (mut before, mut before_dst, mut boundary) = (0, 0, 0);
    let (mut after, mut after_dst) = (0, 0);
    // SAFETY: a zone PostgreSQL loaded, outputs to locals.
    let found = unsafe {
        pg_sys::pg_next_dst_boundary(
            &t,
            &mut before,
            &mut before_dst,
            &mut boundary,
            &mut after,
            &mut after_dst,
            tz,
        )
    };
    Step {
        found,
        before,
        boundary,
        after,
    }
}

enum Abbreviation {
    Fixed(i64),
    Dynamic,
}

/// What the abbreviation table says of a lowered zone name: None where it is not one.
///
/// SAFETY: `low` is a NUL-terminated string.
#[cfg(feature = "pg15")]
unsafe fn abbreviation(low: *mut std::ffi::c_char) -> Option<Abbreviation> {
    let (mut offset, mut tz) = (0, std::ptr::null_mut());
    // SAFETY: the caller's string; outputs to locals.
    let kind = unsafe { pg_sys::DecodeTimezoneAbbrev(0, low, &mut offset, &mut tz) } as u32;
    classify(kind, offset)
}

/// SAFETY: `low` is a NUL-terminated string.
#[cfg(not(feature = "pg15"))]
unsafe fn abbreviation(low: *mut std::ffi::c_char) -> Option<Abbreviation> {
    let (mut kind, mut offset, mut tz) = (0, 0, std::ptr::null_mut());
    let mut extra: pg_sys::DateTimeErrorExtra = unsafe { std::mem::zeroed() };
    // SAFETY: the caller's string; outputs to locals.
    let error = unsafe {
        pg_sys::DecodeTimezoneAbbrev(0, low, &mut kind, &mut offset, &mut tz, &mut extra)
    };
    if error != 0 {
        // A dynamic abbreviation whose zone cannot be loaded: PostgreSQL raises; no bound.
        return Some(Abbreviation::Dynamic);
    }
    classify(kind as u32, offset)
}

fn classify(kind: u32, offset: i32) -> Option<Abbreviation> {
    match kind {
        pg_sys::TZ | pg_sys::DTZ => Some(Abbreviation::Fixed(i64::from(offset))),
        pg_sys::DYNTZ => Some(Abbreviation::Dynamic),
        _ => None,
    }
}
