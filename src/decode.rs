//! Taking Snowflake IDs apart, and mapping times to ID ranges. Decoders work everywhere,
//! standbys included, and with any named layout, not only the node's.

// pgrx needs the column tuples of TableIterator spelled out in each signature (no type alias),
// so clippy's type_complexity cannot be met here.
#![allow(clippy::type_complexity)]

use pgrx::prelude::*;

use crate::gucs;
use crate::node::layouts::{layout_named, node_layout, with_last_named};
use crate::pg::backend_local::BackendLocal;
use crate::pg::errors::{invalid, out_of_range, OrRaise};
use pg_idgen_core::layout::{Field, Layout};

use crate::pg::fast_entry::{fast_entry, Call};
use crate::pg::time::{ms_of_ts, pg_us_of_ms, ts_of_ms};
use std::sync::atomic::{AtomicI64, Ordering};

/// The columns of `id_decode`: every one NULL for a NULL ID (one row all the same, so that a
/// LATERAL join keeps the row it decodes).
type Decoded = (
    name!(id, Option<i64>),
    name!(ts, Option<TimestampWithTimeZone>),
    name!(worker_id, Option<i64>),
    name!(sequence, Option<i64>),
    name!(datacenter_id, Option<i64>),
    name!(rollback_flag, Option<i32>),
    name!(reserved, Option<i32>),
    name!(layout, Option<String>),
);

/// Times up to this (ms since 1970) decode without a warning: what the guarded path last saw the
/// clock allow, kept for the fast path (a plain static: each backend has its own).
static QUIET_UNTIL_MS: AtomicI64 = AtomicI64::new(i64::MIN);

/// The start of the statement that last warned of an ID from the future (one warning per
/// statement, not per row).
static WARNED_AT: BackendLocal<i64> = BackendLocal::new(i64::MIN);

/// An ID's time as decoded with `layout`. A time later than this node's clock can allow
/// (`idgen.max_drift` plus a minute for other nodes' clocks) means the ID was most likely made with
/// another layout: a WARNING says so, once per statement.
fn decoded_ts(id: i64, layout: &Layout, tick: u64) -> TimestampWithTimeZone {
    let ms = layout.ms_of_tick(tick);
    // Out of PostgreSQL's range is an ERROR (22003) before anything is said of it.
    let ts = ts_of_ms(ms);
    let now = crate::pg::time::now_ms();
    // Below the least the clock allows now (max_drift may be 0, and it may be lowered later):
    // the fast path never skips a warning.
    QUIET_UNTIL_MS.store(now.saturating_add(60_000), Ordering::Relaxed);
    let allowed = gucs::max_drift_ms() + 60_000;
    if ms.saturating_sub(now) > allowed {
        // SAFETY: reads this backend's statement start time.
        let statement = unsafe { pg_sys::GetCurrentStatementStartTimestamp() };
        if WARNED_AT.with(|w| std::mem::replace(w, statement)) != statement {
            pgrx::warning!(
                "ID {id} decodes with layout {} to {}, later than this node's clock allows: was it made with another layout?",
                layout.label(),
                pg_idgen_core::civil::format_utc_ms(ms)
            );
        }
    }
    ts
}

fn decode_row(id: Option<i64>, layout: &Layout) -> Decoded {
    let Some(id) = id else {
        return (None, None, None, None, None, None, None, None);
    };
    let d = layout
        .unpack(id)
        .map_err(|e| invalid(e.to_string()))
        .or_raise();
    let has = |f: Field| layout.bits(f) > 0;
    (
        Some(id),
        Some(decoded_ts(id, layout, d.tick)),
        has(Field::Worker).then_some(d.worker as i64),
        Some(d.sequence as i64),
        has(Field::Datacenter).then_some(d.datacenter as i64),
        has(Field::Rollback).then_some(d.rollback as i32),
        has(Field::Reserved).then_some(d.reserved as i32),
        Some(layout.name.clone()),
    )
}

/// Takes a Snowflake ID apart with this node's layout: time, worker id, sequence and the layout's
/// other fields. One row; all NULL for a NULL ID.
///
/// STABLE, not IMMUTABLE: the node's layout is fixed only until the next restart.
#[pg_extern(stable, parallel_safe, name = "id_decode")]
fn id_decode(
    id: Option<i64>,
) -> TableIterator<
    'static,
    (
        name!(id, Option<i64>),
        name!(ts, Option<TimestampWithTimeZone>),
        name!(worker_id, Option<i64>),
        name!(sequence, Option<i64>),
        name!(datacenter_id, Option<i64>),
        name!(rollback_flag, Option<i32>),
        name!(reserved, Option<i32>),
        name!(layout, Option<String>),
    ),
> {
    TableIterator::once(decode_row(id, node_layout()))
}

/// Takes a Snowflake ID apart with a named layout (twitter, sonyflake, instagram, ...) or a layout
/// spec.
#[pg_extern(immutable, parallel_safe, name = "id_decode")]
fn id_decode_with(
    id: Option<i64>,
    layout: Option<&str>,
) -> TableIterator<
    'static,
    (
        name!(id, Option<i64>),
        name!(ts, Option<TimestampWithTimeZone>),
        name!(worker_id, Option<i64>),
        name!(sequence, Option<i64>),
        name!(datacenter_id, Option<i64>),
        name!(rollback_flag, Option<i32>),
        name!(reserved, Option<i32>),
        name!(layout, Option<String>),
    ),
> {
    let layout = layout_named(layout).or_raise();
    TableIterator::once(decode_row(id, &layout))
}

// The time inside a Snowflake ID (start of its tick), with this node's layout.
//
// `id_timestamp(id)` runs per row in every query by time, so its common case runs bare
// (pg/fast_entry.rs), and `id_timestamp_full` under pgrx's guard for the rest (a refusal, a
// warning, a first call).
fast_entry!(
    args,
    "id_timestamp",
    r#"CREATE FUNCTION "id_timestamp"(
	"id" bigint
) RETURNS timestamp with time zone
STRICT STABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'id_timestamp_wrapper';
"#,
    pg_finfo_id_timestamp_wrapper,
    id_timestamp_wrapper,
    |call: Call| ts_fast(call.arg(0)?.value() as i64, node_layout()),
    pg_sys::Datum::from,
    id_timestamp_full_wrapper
);

#[pg_extern(stable, parallel_safe, sql = false)]
fn id_timestamp_full(id: i64) -> TimestampWithTimeZone {
    let l = node_layout();
    let d = l.unpack(id).map_err(|e| invalid(e.to_string())).or_raise();
    decoded_ts(id, l, d.tick)
}

// The time inside a Snowflake ID, with a named layout or layout spec.
//
// `id_timestamp(id, layout)` runs bare for the layout named last (parsed by the guarded path,
// `id_timestamp_with`, which every other call takes).
fast_entry!(
    args,
    "id_timestamp_with",
    r#"CREATE FUNCTION "id_timestamp"(
	"id" bigint,
	"layout" TEXT
) RETURNS timestamp with time zone
IMMUTABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'id_timestamp_with_wrapper';
"#,
    pg_finfo_id_timestamp_with_wrapper,
    id_timestamp_with_wrapper,
    |call: Call| {
        let id = call.arg(0)?.value() as i64;
        let name = call.plain_text(1)?;
        with_last_named(name, |l| ts_fast(id, l))
    },
    pg_sys::Datum::from,
    id_timestamp_with_full_wrapper
);

/// The common case of the time inside an ID, bare: an ID the layout holds, whose time this
/// backend last saw the clock allow without a warning. None sends the call to the guarded path,
/// which decides everything again (and refreshes the bound).
#[inline(always)]
fn ts_fast(id: i64, l: &Layout) -> Option<i64> {
    if id < 0 || id > l.max_id() {
        return None;
    }
    let tick = (id as u64 >> l.shift(Field::Time)) & l.max_value(Field::Time);
    let ms = l.ms_of_tick(tick);
    if ms > QUIET_UNTIL_MS.load(Ordering::Relaxed) {
        return None;
    }
    pg_us_of_ms(ms)
}

/// The time inside an ID, with a named layout.
#[pg_extern(immutable, parallel_safe, sql = false)]
fn id_timestamp_with_full(id: Option<i64>, layout: Option<&str>) -> Option<TimestampWithTimeZone> {
    let l = layout_named(layout).or_raise();
    let id = id?;
    let d = l.unpack(id).map_err(|e| invalid(e.to_string())).or_raise();
    Some(decoded_ts(id, &l, d.tick))
}

/// The worker id inside a Snowflake ID, with this node's layout; NULL for a layout without worker
/// bits.
#[pg_extern(stable, parallel_safe)]
fn id_worker_id(id: i64) -> Option<i64> {
    worker_of(id, node_layout())
}

/// The worker id inside a Snowflake ID, with a named layout or layout spec. IMMUTABLE: distributed
/// queries (Citus) push it down into every shard, in the select list, WHERE and GROUP BY.
#[pg_extern(immutable, parallel_safe, name = "id_worker_id")]
fn id_worker_id_with(id: Option<i64>, layout: Option<&str>) -> Option<i64> {
    let l = layout_named(layout).or_raise();
    worker_of(id?, &l)
}

fn worker_of(id: i64, layout: &Layout) -> Option<i64> {
    let d = layout
        .unpack(id)
        .map_err(|e| invalid(e.to_string()))
        .or_raise();
    (layout.bits(Field::Worker) > 0).then_some(d.worker as i64)
}

fn min_id_at(ts: TimestampWithTimeZone, l: &Layout) -> i64 {
    let ms = ms_of_ts(ts).or_raise();
    l.min_id_at_ms(ms)
        .map_err(|e| out_of_range(e.to_string()))
        .or_raise()
}

/// The smallest ID of an instant with this node's layout: WHERE id >= id_from_timestamp(now() -
/// interval '1 day') is an index range scan.
#[pg_extern(stable, parallel_safe)]
fn id_from_timestamp(ts: TimestampWithTimeZone) -> i64 {
    min_id_at(ts, node_layout())
}

/// The smallest ID of an instant with a named layout or layout spec.
#[pg_extern(immutable, parallel_safe, name = "id_from_timestamp")]
fn id_from_timestamp_with(ts: Option<TimestampWithTimeZone>, layout: Option<&str>) -> Option<i64> {
    let l = layout_named(layout).or_raise();
    Some(min_id_at(ts?, &l))
}

/// The IDs of the times `[from, upto)`: `lower` the smallest ID at `from`, `upper` the smallest at
/// `upto`, to the layout's tick; `FOR VALUES FROM (lower) TO (upper)` is the range partition of
/// those times.
fn range_of(since: TimestampWithTimeZone, before: TimestampWithTimeZone, l: &Layout) -> (i64, i64) {
    if ms_of_ts(before).or_raise() <= ms_of_ts(since).or_raise() {
        invalid(format!(
            "id_range: before ({before}) is not after since ({since}): the range holds no time"
        ))
        .hint("Give the start of the range first, then its end (exclusive).")
        .raise();
    }
    (min_id_at(since, l), min_id_at(before, l))
}

/// The IDs of the times [since, before) with this node's layout: lower is the smallest ID at since,
/// upper the smallest at before, so FOR VALUES FROM (lower) TO (upper) is the range partition of
/// those times.
#[pg_extern(stable, parallel_safe)]
fn id_range(
    since: TimestampWithTimeZone,
    before: TimestampWithTimeZone,
) -> TableIterator<'static, (name!(lower, i64), name!(upper, i64))> {
    TableIterator::once(range_of(since, before, node_layout()))
}

/// The IDs of the times [since, before) with a named layout or layout spec: IMMUTABLE, for
/// partition bounds and queries pruned when planned.
#[pg_extern(immutable, parallel_safe, name = "id_range")]
fn id_range_with(
    since: Option<TimestampWithTimeZone>,
    before: Option<TimestampWithTimeZone>,
    layout: Option<&str>,
) -> TableIterator<'static, (name!(lower, Option<i64>), name!(upper, Option<i64>))> {
    let l = layout_named(layout).or_raise();
    match (since, before) {
        (Some(f), Some(u)) => {
            let (lo, hi) = range_of(f, u, &l);
            TableIterator::once((Some(lo), Some(hi)))
        }
        _ => TableIterator::once((None, None)),
    }
}

fn span_of(span: Interval, l: &Layout) -> i64 {
    if span.months() != 0 {
        invalid(format!(
            "id_span: {span} has months, which are no fixed number of IDs"
        ))
        .hint(
            "Give the span in days, hours, minutes or seconds: interval '30 days', not '1 month'.",
        )
        .raise();
    }
    let ms = (span.days() as i64)
        .checked_mul(86_400_000)
        .and_then(|d| d.checked_add(span.micros() / 1000));
    let ms = match ms {
        Some(ms) if span.micros() % 1000 == 0 => ms,
        _ => invalid(format!(
            "id_span: {span} is not a whole number of milliseconds"
        ))
        .raise(),
    };
    l.id_span_ms(ms)
        .map_err(|e| invalid(format!("id_span: {e}")))
        .or_raise()
}

/// How many IDs of this node's layout a span of time covers (a day is 24 hours; no months): the
/// width of fixed-size range partitions, pg_partman's interval.
#[pg_extern(stable, parallel_safe)]
fn id_span(span: Interval) -> i64 {
    span_of(span, node_layout())
}

/// How many IDs of a named layout or layout spec a span of time covers.
#[pg_extern(immutable, parallel_safe, name = "id_span")]
fn id_span_with(span: Option<Interval>, layout: Option<&str>) -> Option<i64> {
    let l = layout_named(layout).or_raise();
    Some(span_of(span?, &l))
}
