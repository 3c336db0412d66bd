//! The bound functions, the key range of a time (`idgen_internal.id_time_lower(T, inclusive,
//! layout)` and its kin: what the walk adds runs these), and how a statement finds them: in this
//! database's `idgen_internal`, running this library's code, and the current role's to run.
//! Where any of that fails (no pg_idgen here, an older version without them, a schema of that
//! name someone else made, USAGE or EXECUTE revoked) nothing is added and nothing is raised.
//!
//! Each takes the time as a `timestamptz`, or as a `timestamp` or a `date` (what ORMs send for a
//! naive datetime or a day), which PostgreSQL compares with a `timestamptz` as that instant in the
//! session's TimeZone: those are STABLE, evaluated when the statement runs, so that a generic plan
//! follows `SET TimeZone`.
use std::ffi::CStr;

use pgrx::datum::{Date, Timestamp};
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::{Internal, Uuid};

use pg_idgen_core::time_bounds::{snowflake_bounds, uuidv7_bound, Instant, Side};

use super::decoders::Decoder;
use crate::node::layouts::layout_named;
use crate::pg::errors::OrRaise;
use crate::pg::nodes::{answer_selectivity, c_symbol};
use crate::pg::own_functions::{internal_schema, lookup, may, named};

/// µs from 1970 to 2000, PostgreSQL's epoch.
const PG_EPOCH_US: i128 = 946_684_800_000_000;
/// PostgreSQL's first finite timestamptz and the one after its last (datatype/timestamp.h's
/// MIN_TIMESTAMP and END_TIMESTAMP), µs since 2000.
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

/// The types a time may be compared in with a `timestamptz`, and the C symbol suffix of the bound
/// functions that take each.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum TimeType {
    Timestamptz,
    Timestamp,
    Date,
}

impl TimeType {
    /// The other side of a comparison with a `timestamptz`, if a time can be.
    pub fn of(oid: pg_sys::Oid) -> Option<TimeType> {
        match oid {
            pg_sys::TIMESTAMPTZOID => Some(TimeType::Timestamptz),
            pg_sys::TIMESTAMPOID => Some(TimeType::Timestamp),
            pg_sys::DATEOID => Some(TimeType::Date),
            _ => None,
        }
    }

    pub fn oid(self) -> pg_sys::Oid {
        match self {
            TimeType::Timestamptz => pg_sys::TIMESTAMPTZOID,
            TimeType::Timestamp => pg_sys::TIMESTAMPOID,
            TimeType::Date => pg_sys::DATEOID,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            TimeType::Timestamptz => "",
            TimeType::Timestamp => "_local",
            TimeType::Date => "_date",
        }
    }
}

pub(super) fn instant(ts: TimestampWithTimeZone) -> Instant {
    let us: i64 = ts.into();
    match us {
        i64::MIN => Instant::Before,
        i64::MAX => Instant::After,
        us => Instant::Micros(i128::from(us) + PG_EPOCH_US),
    }
}

/// The instant a `timestamp` or a `date` is compared as with a `timestamptz` (PostgreSQL's
/// timestamp_cmp_timestamptz, date_cmp_timestamptz): its time in the session's TimeZone (a date's
/// midnight), or before (after) every finite time where it is -infinity (infinity) or its time is
/// out of range. `cmp(t)` compares it with timestamptz `t` as PostgreSQL does; `cast` converts it,
/// which in range cannot fail (the comparisons convert as the cast does). The keys' times are all
/// finite.
fn compared_instant(
    infinite: Option<Instant>,
    cmp: impl Fn(i64) -> i32,
    cast: impl FnOnce() -> TimestampWithTimeZone,
) -> Instant {
    match infinite {
        Some(end) => end,
        None if cmp(MIN_TIMESTAMP) < 0 => Instant::Before,
        None if cmp(END_TIMESTAMP - 1) > 0 => Instant::After,
        None => instant(cast()),
    }
}

pub(super) fn local_instant(ts: Timestamp) -> Instant {
    let raw = ts.into_inner();
    let infinite = match raw {
        i64::MIN => Some(Instant::Before),
        i64::MAX => Some(Instant::After),
        _ => None,
    };
    // SAFETY: PostgreSQL's own comparison, which reads the session's TimeZone.
    let cmp = |t| unsafe { pg_sys::timestamp_cmp_timestamptz_internal(raw, t) };
    compared_instant(infinite, cmp, || ts.into())
}

pub(super) fn date_instant(d: Date) -> Instant {
    let raw = d.into_inner();
    let infinite = match raw {
        i32::MIN => Some(Instant::Before),
        i32::MAX => Some(Instant::After),
        _ => None,
    };
    // SAFETY: PostgreSQL's own comparison, which reads the session's TimeZone.
    let cmp = |t| unsafe { pg_sys::date_cmp_timestamptz_internal(raw, t) };
    compared_instant(infinite, cmp, || d.into())
}

fn side(lower: bool, inclusive: bool) -> Side {
    if lower {
        Side::Lower { inclusive }
    } else {
        Side::Upper { inclusive }
    }
}

fn id_bound(t: Instant, lower: bool, inclusive: bool, layout: &str) -> Option<i64> {
    let layout = layout_named(Some(layout)).or_raise();
    snowflake_bounds(&layout, t, side(lower, inclusive)).flatten()
}

fn uuid_bound(t: Instant, lower: bool, inclusive: bool) -> Option<Uuid> {
    uuidv7_bound(t, side(lower, inclusive)).map(Uuid::from_bytes)
}

/// The smallest ID of the layout whose time is at or after ts (after, if not inclusive); NULL if
/// none: what id_timestamp(id, layout) >= ts adds as id >= this (idgen.time_conditions).
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn id_time_lower(ts: TimestampWithTimeZone, inclusive: bool, layout: &str) -> Option<i64> {
    id_bound(instant(ts), true, inclusive, layout)
}

/// The largest ID of the layout whose time is at or before ts (before, if not inclusive); NULL if
/// none: what id_timestamp(id, layout) <= ts adds as id <= this.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn id_time_upper(ts: TimestampWithTimeZone, inclusive: bool, layout: &str) -> Option<i64> {
    id_bound(instant(ts), false, inclusive, layout)
}

/// The smallest UUID whose first 48 bits (a UUIDv7's millisecond) are at or after ts; NULL if none:
/// what uuidv7_timestamp(id) >= ts adds as id >= this.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn uuidv7_time_lower(ts: TimestampWithTimeZone, inclusive: bool) -> Option<Uuid> {
    uuid_bound(instant(ts), true, inclusive)
}

/// The largest UUID whose first 48 bits are at or before ts; NULL if none: what
/// uuidv7_timestamp(id) <= ts adds as id <= this.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn uuidv7_time_upper(ts: TimestampWithTimeZone, inclusive: bool) -> Option<Uuid> {
    uuid_bound(instant(ts), false, inclusive)
}

// The same, of a `timestamp` or a `date` compared as PostgreSQL compares it with a timestamptz
// (in the session's TimeZone: STABLE). Overloads of the names above.

/// id_time_lower of a timestamp without time zone, as PostgreSQL compares one with a timestamptz
/// (in the session's TimeZone): what id_timestamp(id) >= ts::timestamp adds.
#[pg_extern(
    stable,
    parallel_safe,
    strict,
    schema = "idgen_internal",
    name = "id_time_lower"
)]
fn id_time_lower_local(ts: Timestamp, inclusive: bool, layout: &str) -> Option<i64> {
    id_bound(local_instant(ts), true, inclusive, layout)
}

/// id_time_upper of a timestamp without time zone, in the session's TimeZone.
#[pg_extern(
    stable,
    parallel_safe,
    strict,
    schema = "idgen_internal",
    name = "id_time_upper"
)]
fn id_time_upper_local(ts: Timestamp, inclusive: bool, layout: &str) -> Option<i64> {
    id_bound(local_instant(ts), false, inclusive, layout)
}

/// id_time_lower of a date (its midnight in the session's TimeZone): what id_timestamp(id) >=
/// d::date adds.
#[pg_extern(
    stable,
    parallel_safe,
    strict,
    schema = "idgen_internal",
    name = "id_time_lower"
)]
fn id_time_lower_date(d: Date, inclusive: bool, layout: &str) -> Option<i64> {
    id_bound(date_instant(d), true, inclusive, layout)
}

/// id_time_upper of a date (its midnight in the session's TimeZone).
#[pg_extern(
    stable,
    parallel_safe,
    strict,
    schema = "idgen_internal",
    name = "id_time_upper"
)]
fn id_time_upper_date(d: Date, inclusive: bool, layout: &str) -> Option<i64> {
    id_bound(date_instant(d), false, inclusive, layout)
}

/// uuidv7_time_lower of a timestamp without time zone, in the session's TimeZone.
#[pg_extern(
    stable,
    parallel_safe,
    strict,
    schema = "idgen_internal",
    name = "uuidv7_time_lower"
)]
fn uuidv7_time_lower_local(ts: Timestamp, inclusive: bool) -> Option<Uuid> {
    uuid_bound(local_instant(ts), true, inclusive)
}

/// uuidv7_time_upper of a timestamp without time zone, in the session's TimeZone.
#[pg_extern(
    stable,
    parallel_safe,
    strict,
    schema = "idgen_internal",
    name = "uuidv7_time_upper"
)]
fn uuidv7_time_upper_local(ts: Timestamp, inclusive: bool) -> Option<Uuid> {
    uuid_bound(local_instant(ts), false, inclusive)
}

/// uuidv7_time_lower of a date (its midnight in the session's TimeZone).
#[pg_extern(
    stable,
    parallel_safe,
    strict,
    schema = "idgen_internal",
    name = "uuidv7_time_lower"
)]
fn uuidv7_time_lower_date(d: Date, inclusive: bool) -> Option<Uuid> {
    uuid_bound(date_instant(d), true, inclusive)
}

/// uuidv7_time_upper of a date (its midnight in the session's TimeZone).
#[pg_extern(
    stable,
    parallel_safe,
    strict,
    schema = "idgen_internal",
    name = "uuidv7_time_upper"
)]
fn uuidv7_time_upper_date(d: Date, inclusive: bool) -> Option<Uuid> {
    uuid_bound(date_instant(d), false, inclusive)
}

/// Its argument: a condition on the time kept beside the key range it implies
/// (idgen.time_conditions), estimated as true for the rows the range reads (within_range_support),
/// so that the key's statistics estimate both.
///
/// A condition kept beside the key range it implies (a local time's: `created_at::date = D`, or a
/// range that is not exact): its own value, which the walk wraps it in so that the planner
/// estimates it as true for the rows the range reads (`within_range_support`): the range's
/// estimate, from the key's statistics, stands; the condition's own (1/200 for an equality of an
/// expression, 1/3 for an inequality) would multiply it.
#[pg_extern(
    immutable,
    parallel_safe,
    schema = "idgen_internal",
    support = within_range_support
)]
fn within_range(condition: Option<bool>) -> Option<bool> {
    condition
}

/// The planner support function of within_range: a selectivity of 1.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn within_range_support(request: Internal) -> Internal {
    answer_selectivity(request, |_| 1.0)
}

/// The bound functions a statement may use, found once per statement.
#[derive(Default)]
pub(super) struct Bounds {
    /// `idgen_internal`, if it is there and the role may use it (None: not looked up yet).
    schema: Option<Option<pg_sys::Oid>>,
    /// Functions looked up so far: name, the time's type, and its OID if usable.
    found: Vec<(&'static CStr, TimeType, Option<pg_sys::Oid>)>,
    /// `within_range`, if looked up.
    within: Option<Option<pg_sys::Oid>>,
    /// `key_range_estimate`, if looked up.
    estimate: Option<Option<pg_sys::Oid>>,
    /// `min_key(uuid)` and `max_key(uuid)`, if looked up.
    aggregates: [Option<Option<pg_sys::Oid>>; 2],
}

impl Bounds {
    /// The lower and upper bound functions of `decoder` for a time of type `t`, if this role
    /// may run them.
    pub fn of(&mut self, decoder: &Decoder, t: TimeType) -> Option<(pg_sys::Oid, pg_sys::Oid)> {
        Some((
            self.key_function(decoder.lower, t, decoder.takes_layout)?,
            self.key_function(decoder.upper, t, decoder.takes_layout)?,
        ))
    }

    /// The functions that bound the instants of a local time compared with a `t` (a date or a
    /// timestamp: `time_local_lower` and `_upper`) or of a timestamptz truncated (`trunc`:
    /// `time_trunc_lower` and `_upper`, of a timestamptz, timestamp or date), as `local_time.rs`
    /// makes them.
    pub fn of_local(&mut self, trunc: bool, t: TimeType) -> Option<(pg_sys::Oid, pg_sys::Oid)> {
        let (lower, upper) = if trunc {
            (c"time_trunc_lower", c"time_trunc_upper")
        } else {
            (c"time_local_lower", c"time_local_upper")
        };
        let args = |t: TimeType| [t.oid(), pg_sys::TEXTOID, pg_sys::TEXTOID];
        Some((
            self.function(lower, t, &args(t))?,
            self.function(upper, t, &args(t))?,
        ))
    }

    /// `within_range(boolean)`, if this role may run it.
    pub fn within_range(&mut self) -> Option<pg_sys::Oid> {
        let schema = *self.schema.get_or_insert_with(internal_schema);
        *self.within.get_or_insert_with(|| {
            schema.and_then(|s| lookup(s, c"within_range", &[pg_sys::BOOLOID], ""))
        })
    }

    /// The aggregate `max_key(uuid)` (`max`) or `min_key(uuid)`, if this role may run it: one whose
    /// transition function runs this library's `uuid_larger` or `uuid_smaller`.
    pub fn key_aggregate(&mut self, max: bool) -> Option<pg_sys::Oid> {
        let schema = *self.schema.get_or_insert_with(internal_schema);
        let (name, transition) = if max {
            (c"max_key", "uuid_larger_wrapper")
        } else {
            (c"min_key", "uuid_smaller_wrapper")
        };
        *self.aggregates[max as usize].get_or_insert_with(|| {
            let oid = schema.and_then(|s| named(s, name, &[pg_sys::UUIDOID]))?;
            (transition_symbol(oid)? == transition
                && may(pg_sys::ProcedureRelationId, oid, pg_sys::ACL_EXECUTE))
            .then_some(oid)
        })
    }

    /// `key_range_estimate(uuid)`, if this role may run it.
    pub fn key_range_estimate(&mut self) -> Option<pg_sys::Oid> {
        let schema = *self.schema.get_or_insert_with(internal_schema);
        *self.estimate.get_or_insert_with(|| {
            schema.and_then(|s| lookup(s, c"key_range_estimate", &[pg_sys::UUIDOID], ""))
        })
    }

    fn key_function(
        &mut self,
        name: &'static CStr,
        t: TimeType,
        layout: bool,
    ) -> Option<pg_sys::Oid> {
        let args = [t.oid(), pg_sys::BOOLOID, pg_sys::TEXTOID];
        self.function(name, t, if layout { &args[..] } else { &args[..2] })
    }

    /// `idgen_internal.name(args)`, whose first argument is of type `t`.
    fn function(
        &mut self,
        name: &'static CStr,
        t: TimeType,
        args: &[pg_sys::Oid],
    ) -> Option<pg_sys::Oid> {
        if let Some(&(_, _, oid)) = self.found.iter().find(|(n, u, _)| *n == name && *u == t) {
            return oid;
        }
        let schema = *self.schema.get_or_insert_with(internal_schema);
        let oid = schema.and_then(|s| lookup(s, name, args, t.suffix()));
        self.found.push((name, t, oid));
        oid
    }
}

/// The C symbol of an aggregate's transition function, if `oid` is an aggregate.
fn transition_symbol(oid: pg_sys::Oid) -> Option<String> {
    // SAFETY: a syscache lookup and release, in a transaction.
    unsafe {
        let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::AGGFNOID as _, oid.into());
        if tup.is_null() {
            return None;
        }
        let form = pg_sys::GETSTRUCT(tup) as *mut pg_sys::FormData_pg_aggregate;
        let transition = (*form).aggtransfn;
        pg_sys::ReleaseSysCache(tup);
        c_symbol(transition)
    }
}
