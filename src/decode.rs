//! Taking Snowflake IDs apart, and mapping times to ID ranges. Decoders work everywhere,
//! standbys included, and with any named layout, not only the node's.

// pgrx needs the column tuples of TableIterator spelled out in each signature (no type alias),
// so clippy's type_complexity cannot be met here.
#![allow(clippy::type_complexity)]

use pgrx::prelude::*;

use crate::gucs;
use crate::node::generator::node;
use crate::node::layouts::{layout_named, with_last_named};
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

/// Takes an ID apart with this node's layout: one row, all NULL for a NULL ID. STABLE, not
/// IMMUTABLE: the node's layout is fixed only until the next restart.
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
    TableIterator::once(decode_row(id, &node().layout))
}

/// Takes an ID apart with a named layout (`twitter`, `sonyflake`, ...) or a layout spec.
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

// The time inside an ID (the start of its tick), with this node's layout: `id_timestamp(id)`,
// per row in every query by time, so its common case runs bare (pg/fast_entry.rs), and
// `id_timestamp_full` under pgrx's guard for the rest (a refusal, a warning, a first call).
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
    |call: Call| ts_fast(call.arg(0)?.value() as i64, &node().layout),
    pg_sys::Datum::from,
    id_timestamp_full_wrapper
);

#[pg_extern(stable, parallel_safe, sql = false)]
fn id_timestamp_full(id: i64) -> TimestampWithTimeZone {
    let l = &node().layout;
    let d = l.unpack(id).map_err(|e| invalid(e.to_string())).or_raise();
    decoded_ts(id, l, d.tick)
}

// The time inside an ID with a named layout, `id_timestamp(id, layout)`: bare for the layout named
// last (parsed by the guarded path, `id_timestamp_with`, which every other call takes).
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

/// The worker id inside an ID, with this node's layout; NULL for a layout without worker bits.
#[pg_extern(stable, parallel_safe)]
fn id_worker_id(id: i64) -> Option<i64> {
    worker_of(id, &node().layout)
}

/// The worker id inside an ID, with a named layout. IMMUTABLE, so that distributed queries (Citus)
/// can push it down into every shard, in the select list, WHERE and GROUP BY alike.
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

/// The smallest ID of an instant: `WHERE id >= id_from_timestamp(now() - interval '1 day')` is a
/// range scan of the primary key.
#[pg_extern(stable, parallel_safe)]
fn id_from_timestamp(ts: TimestampWithTimeZone) -> i64 {
    min_id_at(ts, &node().layout)
}

/// The smallest ID of an instant under a named layout.
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

/// The IDs of the times `[since, before)` under this node's layout (partition bounds).
#[pg_extern(stable, parallel_safe)]
fn id_range(
    since: TimestampWithTimeZone,
    before: TimestampWithTimeZone,
) -> TableIterator<'static, (name!(lower, i64), name!(upper, i64))> {
    TableIterator::once(range_of(since, before, &node().layout))
}

/// The IDs of the times `[since, before)` under a named layout: IMMUTABLE, for partition bounds
/// and plan-time pruning.
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

/// How many IDs of this node's layout a span of time covers: the width of range partitions of
/// that span (pg_partman's interval). A day is 24 hours.
#[pg_extern(stable, parallel_safe)]
fn id_span(span: Interval) -> i64 {
    span_of(span, &node().layout)
}

/// How many IDs of a named layout a span of time covers.
#[pg_extern(immutable, parallel_safe, name = "id_span")]
fn id_span_with(span: Option<Interval>, layout: Option<&str>) -> Option<i64> {
    let l = layout_named(layout).or_raise();
    Some(span_of(span?, &l))
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    fn text(sql: &str) -> String {
        Spi::get_one::<String>(sql).unwrap().unwrap()
    }

    /// The bare paths of `id_timestamp` (both forms) and `uuidv7_timestamp` answer as the guarded
    /// decoders do, over every preset, tick edges, both ends of each layout and random IDs; keys
    /// they do not take go to the guarded path and raise as before.
    #[pg_test]
    fn fast_decoders_agree_with_the_full_decode() {
        let disagree = Spi::get_one::<i64>(
            "SET TimeZone = 'UTC';
             WITH l AS (SELECT name FROM idgen.layouts WHERE NOT is_node_layout OR name = 'pg_idgen'),
             k AS (SELECT l.name, k.id
                     FROM l, LATERAL (SELECT idgen_internal.id_time_upper('infinity', true, l.name) AS max_id) m,
                     LATERAL (SELECT unnest(ARRAY[0, 1, m.max_id - 1, m.max_id]) AS id
                              UNION ALL SELECT (random() * m.max_id)::numeric::bigint FROM generate_series(1, 200)) k)
             SELECT count(*) FROM k
              WHERE id_timestamp(id, name) IS DISTINCT FROM (SELECT ts FROM id_decode(id, name))
                 OR (name = 'pg_idgen' AND id_timestamp(id) IS DISTINCT FROM (SELECT ts FROM id_decode(id)))",
        )
        .unwrap();
        assert_eq!(disagree, Some(0));
        let uuids = Spi::get_one::<i64>(
            "SELECT count(*) FROM (SELECT uuidv7_next() AS u FROM generate_series(1, 500)) g
              WHERE uuidv7_timestamp(u) IS DISTINCT FROM ulid_timestamp(uuid_to_ulid(u))",
        )
        .unwrap();
        assert_eq!(uuids, Some(0));
    }

    #[pg_test(error = "-1 is negative; Snowflake IDs keep the sign bit 0")]
    fn the_fast_path_leaves_a_negative_id_to_the_refusal() {
        Spi::run("SELECT id_timestamp(1::bigint << 22); SELECT id_timestamp(-1)").unwrap();
    }

    #[pg_test]
    fn id_range_is_the_partition_of_a_time_range() {
        let ok = Spi::get_one::<bool>(
            "SELECT lower = id_from_timestamp('2026-11-26 00:00+00', 'pg_idgen')
                AND upper = id_from_timestamp('2026-11-27 00:00+00', 'pg_idgen')
                AND upper - lower = id_span('1 day', 'pg_idgen')
                AND upper - lower = 86400000::bigint << 22
              FROM id_range('2026-11-26 00:00+00', '2026-11-27 00:00+00', 'pg_idgen')",
        )
        .unwrap();
        assert_eq!(ok, Some(true));
        // The node's layout (pg_idgen here): the same bounds.
        let same = Spi::get_one::<bool>(
            "SELECT (SELECT (lower, upper) FROM id_range('2026-11-26', '2026-11-27'))
                  = (SELECT (lower, upper) FROM id_range('2026-11-26', '2026-11-27', 'pg_idgen'))",
        )
        .unwrap();
        assert_eq!(same, Some(true));
    }

    #[pg_test(
        error = "id_range: before (2026-11-26 00:00:00+00) is not after since (2026-11-26 00:00:00+00): the range holds no time"
    )]
    fn id_range_refuses_an_empty_range() {
        Spi::run(
            "SET TimeZone = 'UTC'; SELECT * FROM id_range('2026-11-26', '2026-11-26', 'pg_idgen')",
        )
        .unwrap();
    }

    #[pg_test(
        error = "id_span: a span of 15 ms is not a whole number of ticks of layout sonyflake (10 ms each)"
    )]
    fn id_span_refuses_part_of_a_tick() {
        Spi::run("SELECT id_span('15 milliseconds', 'sonyflake')").unwrap();
    }

    #[pg_test(error = "id_span: 1 mon has months, which are no fixed number of IDs")]
    fn id_span_refuses_months() {
        Spi::run("SELECT id_span('1 month', 'pg_idgen')").unwrap();
    }

    #[pg_test]
    fn tweet_decodes_to_its_published_time() {
        // Tweet 1212092628029698048 was posted 2019-12-31 19:26:16.771 UTC.
        assert_eq!(
            text("SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') FROM id_decode(1212092628029698048, 'twitter')"),
            "2019-12-31 19:26:16.771"
        );
        let (dc, w) = Spi::get_two::<i64, i64>(
            "SELECT datacenter_id, worker_id FROM id_decode(1212092628029698048, 'twitter')",
        )
        .unwrap();
        assert_eq!(
            (
                (1212092628029698048i64 >> 17) & 31,
                (1212092628029698048i64 >> 12) & 31
            ),
            (dc.unwrap(), w.unwrap())
        );
    }

    #[pg_test]
    fn node_id_round_trips_through_decode() {
        let ok = Spi::get_one::<bool>(
            "WITH i AS (SELECT snowflake_next() AS id)
             SELECT d.worker_id = current_setting('idgen.worker_id')::bigint
                AND d.id = i.id
                AND id_from_timestamp(d.ts) <= i.id
                AND id_from_timestamp(d.ts + interval '1 millisecond') > i.id
             FROM i, id_decode(i.id) d",
        )
        .unwrap()
        .unwrap();
        assert!(ok);
    }

    #[pg_test(
        error = "layout \"nosuch\": unknown layout \"nosuch\"; known layouts: pg_idgen, twitter, leaf, sonyflake, instagram, uid_generator, js_safe, js_safe_10ms, js_safe_s, raindrop, westid, westid32"
    )]
    fn unknown_layout_is_an_error() {
        Spi::run("SELECT * FROM id_decode(1, 'nosuch')").unwrap();
    }

    #[pg_test(error = "-1 is negative; Snowflake IDs keep the sign bit 0")]
    fn negative_id_is_an_error() {
        Spi::run("SELECT id_timestamp(-1)").unwrap();
    }

    #[pg_test(
        error = "9007199254740992 has bits set above the 53 bits of layout js_safe (largest ID 9007199254740991)"
    )]
    fn id_outside_the_layout_is_an_error() {
        Spi::run("SELECT * FROM id_decode(9007199254740992, 'js_safe')").unwrap();
    }

    #[pg_test(error = "infinite timestamps have no ID")]
    fn infinite_timestamp_is_an_error() {
        Spi::run("SELECT id_from_timestamp('infinity'::timestamptz)").unwrap();
    }

    #[pg_test]
    fn decoders_pass_null_through() {
        assert_eq!(
            Spi::get_one::<i64>("SELECT id_from_timestamp(NULL::timestamptz, 'twitter')").unwrap(),
            None
        );
        // One row, all NULL: a LATERAL join over a NULL ID keeps its row.
        assert_eq!(
            Spi::get_one::<i64>(
                "SELECT count(*) FROM id_decode(NULL::bigint, 'twitter') d WHERE d.id IS NULL AND d.ts IS NULL"
            )
            .unwrap(),
            Some(1)
        );
        assert_eq!(
            Spi::get_one::<i64>(
                "SELECT count(*) FROM id_decode(NULL::bigint) d WHERE d.layout IS NULL"
            )
            .unwrap(),
            Some(1)
        );
    }
}
