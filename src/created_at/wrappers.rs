//! A key's time inside the wrappers ORMs write for "on a given day": its local time
//! (`created_at::date`, `created_at::timestamp`, `created_at AT TIME ZONE 'UTC'`, PostgreSQL 17's
//! `AT LOCAL`), that local time truncated (`(created_at AT TIME ZONE z)::date`, `date_trunc('day',
//! created_at AT TIME ZONE z)`), or the time truncated in a zone (`date_trunc('day', created_at
//! [, z])`, a timestamptz). None of them is monotone in the instant (a local time repeats where
//! the clocks fall back), so what the walk adds for a comparison of one with a constant is the
//! range of instants around it that `local_time.rs` computes from the zone's offsets when the
//! statement runs, and the comparison stays beside it; where the zone has one offset near the
//! constant, the range is exact and stands alone (`local_time::local_exact`, `session_exact`).
use pgrx::pg_sys;

use super::bounds::TimeType;
use crate::pg::nodes::{cells, is_a};

/// A wrapper of a time, as found.
pub(super) struct Wrapped {
    /// The time inside (a decoder's call or a column that is one: `key_of.rs` decides).
    pub time: *mut pg_sys::Node,
    /// The type the wrapper gives: a date or a timestamp for a local time, a timestamptz for one
    /// truncated in a zone (`date_trunc` of a timestamptz).
    pub result: TimeType,
    /// The unit truncated to (`date_trunc`'s first argument; a text constant `'day'` for
    /// `::date`), if any.
    pub unit: Option<*mut pg_sys::Node>,
    /// The zone's text (`AT TIME ZONE`'s, `date_trunc`'s third argument), if not the session's.
    pub zone: Option<*mut pg_sys::Node>,
}

/// The wrapper `e` is, if it is one.
///
/// SAFETY: `e` is an expression.
pub(super) unsafe fn unwrap(e: *mut pg_sys::Node) -> Option<Wrapped> {
    // SAFETY: a FuncExpr's args are expressions.
    unsafe {
        if !is_a(e, pg_sys::NodeTag::T_FuncExpr) {
            return None;
        }
        let f = e as *mut pg_sys::FuncExpr;
        let args: Vec<*mut pg_sys::Node> = cells((*f).args).into_iter().map(|a| a.cast()).collect();
        let local = |time, zone| Wrapped {
            time,
            result: TimeType::Timestamp,
            unit: None,
            zone,
        };
        let found = match (u32::from((*f).funcid), args.as_slice()) {
            // timestamptz::date
            (pg_sys::F_DATE_TIMESTAMPTZ, &[t]) => Wrapped {
                result: TimeType::Date,
                unit: Some(day()),
                ..local(t, None)
            },
            // timestamptz::timestamp
            (pg_sys::F_TIMESTAMP_TIMESTAMPTZ, &[t]) => local(t, None),
            // timestamptz AT TIME ZONE zone
            (pg_sys::F_TIMEZONE_TEXT_TIMESTAMPTZ, &[zone, t]) => local(t, Some(zone)),
            // timestamptz AT LOCAL
            #[cfg(not(any(feature = "pg15", feature = "pg16")))]
            (pg_sys::F_TIMEZONE_TIMESTAMPTZ, &[t]) => local(t, None),
            // date_trunc(unit, timestamptz[, zone])
            (pg_sys::F_DATE_TRUNC_TEXT_TIMESTAMPTZ, &[unit, t]) => Wrapped {
                result: TimeType::Timestamptz,
                unit: Some(unit),
                ..local(t, None)
            },
            (pg_sys::F_DATE_TRUNC_TEXT_TIMESTAMPTZ_TEXT, &[unit, t, zone]) => Wrapped {
                result: TimeType::Timestamptz,
                unit: Some(unit),
                ..local(t, Some(zone))
            },
            // a local time's ::date, or date_trunc(unit, a local time)
            (pg_sys::F_DATE_TIMESTAMP, &[l]) => Wrapped {
                result: TimeType::Date,
                unit: Some(day()),
                ..untruncated_local(l)?
            },
            (pg_sys::F_DATE_TRUNC_TEXT_TIMESTAMP, &[unit, l]) => Wrapped {
                unit: Some(unit),
                ..untruncated_local(l)?
            },
            _ => return None,
        };
        Some(found)
    }
}

/// A local time not truncated yet (`::timestamp`, `AT TIME ZONE`), which can be.
///
/// SAFETY: `e` is an expression.
unsafe fn untruncated_local(e: *mut pg_sys::Node) -> Option<Wrapped> {
    // SAFETY: as unwrap.
    let inner = unsafe { unwrap(e)? };
    (inner.result == TimeType::Timestamp && inner.unit.is_none()).then_some(inner)
}

/// The text `'day'`: `::date` is the local time truncated to its day.
fn day() -> *mut pg_sys::Node {
    text("day")
}

/// A text constant, with the collation the parser gives one.
fn text(s: &str) -> *mut pg_sys::Node {
    use pgrx::IntoDatum;
    // SAFETY: a node constructor, in the current memory context.
    unsafe {
        pg_sys::makeConst(
            pg_sys::TEXTOID,
            -1,
            pg_sys::DEFAULT_COLLATION_OID,
            -1,
            s.into_datum().expect("text"),
            false,
            false,
        )
        .cast()
    }
}
