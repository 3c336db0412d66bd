//! Time for every feature: the wall clock, the monotonic clock that lease deadlines use, and
//! timestamptz <-> milliseconds since 1970. One place, so that every clock agrees (a wall clock
//! before 1970 reads as negative, in every unit).

use pgrx::prelude::*;

use crate::pg::errors::{out_of_range, IdError, OrRaise};

/// Milliseconds between 1970-01-01 and PostgreSQL's epoch, 2000-01-01.
const PG_EPOCH_MS: i64 = 946_684_800_000;

/// The wall clock: seconds since 1970 and nanoseconds into that second (0 to 999,999,999, also
/// before 1970, when the seconds are negative).
fn wall() -> (i64, i64) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the struct we pass; CLOCK_REALTIME always exists. One vDSO
    // call, read on every ID: SystemTime's checked subtraction cost more than the read itself.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    (ts.tv_sec, ts.tv_nsec)
}

/// Microseconds of the wall clock since 1970 (negative before 1970).
pub fn now_us() -> i64 {
    let (s, ns) = wall();
    s * 1_000_000 + ns / 1_000
}

/// Milliseconds of the wall clock since 1970 (negative before 1970).
pub fn now_ms() -> i64 {
    let (s, ns) = wall();
    s * 1_000 + ns / 1_000_000
}

/// Nanoseconds of a monotonic clock that also counts suspended time, shared by every process of
/// the machine: lease deadlines never move with the wall clock.
pub fn mono_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the struct we pass; CLOCK_BOOTTIME exists on every Linux
    // PostgreSQL 15 supports.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// PostgreSQL's finite timestamps, in µs since 2000 (MIN_TIMESTAMP and END_TIMESTAMP of
/// datatype/timestamp.h: 4714-11-24 BC up to 294277-01-01).
const PG_FINITE_US: std::ops::Range<i64> = -211_813_488_000_000_000..9_223_371_331_200_000_000;

/// The timestamptz Datum value (µs since 2000) of a millisecond since 1970, or None outside
/// PostgreSQL's finite timestamps: for fast paths, which give up where `ts_of_ms` would raise.
#[inline(always)]
pub fn pg_us_of_ms(ms: i64) -> Option<i64> {
    ms.checked_sub(PG_EPOCH_MS)
        .and_then(|d| d.checked_mul(1000))
        .filter(|us| PG_FINITE_US.contains(us))
}

/// The timestamptz of a millisecond since 1970; 22003 outside PostgreSQL's finite timestamps.
pub fn ts_of_ms(ms: i64) -> TimestampWithTimeZone {
    let out = || {
        out_of_range(format!(
            "{ms} ms since 1970 is outside PostgreSQL's timestamp range"
        ))
    };
    // Checked, never saturated: i64::MIN and i64::MAX microseconds are PostgreSQL's -infinity
    // and infinity, which no finite ID may decode to.
    let us = ms
        .checked_sub(PG_EPOCH_MS)
        .and_then(|d| d.checked_mul(1000))
        .filter(|us| *us != i64::MIN && *us != i64::MAX)
        .ok_or_else(out)
        .or_raise();
    TimestampWithTimeZone::try_from(us)
        .ok()
        .filter(|ts| ts.is_finite())
        .ok_or_else(out)
        .or_raise()
}

/// An instant as a message shows it: UTC, to the millisecond, or "an infinite time".
pub fn shown_ts(ts: TimestampWithTimeZone) -> String {
    match ms_of_ts(ts) {
        Ok(ms) => pg_idgen_core::civil::format_utc_ms(ms),
        Err(_) => "an infinite time".to_string(),
    }
}

/// Milliseconds since 1970 of a timestamptz (rounded down); 22003 for an infinite one.
pub fn ms_of_ts(ts: TimestampWithTimeZone) -> Result<i64, IdError> {
    if !ts.is_finite() {
        return Err(out_of_range("infinite timestamps have no ID"));
    }
    let us: i64 = ts.into();
    Ok(us.div_euclid(1000) + PG_EPOCH_MS)
}
