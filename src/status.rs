//! `idgen.layouts` and `idgen.status`: what a psql user reads to see how the node makes IDs.

// pgrx needs the column tuples of TableIterator spelled out in each signature (no type alias),
// so clippy's type_complexity cannot be met here.
#![allow(clippy::type_complexity)]

use pgrx::prelude::*;

/// Behind the views: in `idgen_internal`, out of the way of `\df idgen.*`.
#[pg_schema]
mod idgen_internal {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

    use pgrx::prelude::*;

    use crate::gucs;
    use crate::node::report::{self, node, Stream};
    use crate::pg::time::{now_ms, ts_of_ms};
    use pg_idgen_core::layout::{unit_name, Field, Layout};
    use pg_idgen_core::presets;

    /// Rows of the idgen.layouts view.
    ///
    /// The named layouts, and this node's own (first).
    #[pg_extern(stable, parallel_safe)]
    fn layout_catalog() -> TableIterator<
        'static,
        (
            name!(name, String),
            name!(is_node_layout, bool),
            name!(unit, String),
            name!(epoch, TimestampWithTimeZone),
            name!(time_bits, i32),
            name!(datacenter_bits, i32),
            name!(worker_bits, i32),
            name!(rollback_bits, i32),
            name!(sequence_bits, i32),
            name!(reserved_bits, i32),
            name!(field_order, String),
            name!(ids_per_tick, i64),
            name!(ids_per_second, f64),
            name!(years, f64),
            name!(ends, Option<TimestampWithTimeZone>),
            name!(js_safe, bool),
            name!(can_generate, bool),
            name!(description, String),
        ),
    > {
        let node_layout = node().layout.clone();
        let others = presets::names()
            .map(|name| Layout::parse(name).expect("presets are valid"))
            .filter(|l| l.name != node_layout.name);
        // Built in a closure, not a helper fn, so the column types are written once (above).
        let rows: Vec<_> = std::iter::once((node_layout.clone(), true))
            .chain(others.map(|l| (l, false)))
            .map(|(l, is_node)| {
                let b = |f: Field| l.bits(f) as i32;
                (
                    l.name.clone(),
                    is_node,
                    unit_name(l.unit_ms),
                    ts_of_ms(l.epoch_ms),
                    b(Field::Time),
                    b(Field::Datacenter),
                    b(Field::Worker),
                    b(Field::Rollback),
                    b(Field::Sequence),
                    b(Field::Reserved),
                    l.order
                        .iter()
                        .map(|f| f.name())
                        .collect::<Vec<_>>()
                        .join(","),
                    l.per_tick() as i64,
                    l.per_tick() as f64 * 1000.0 / l.unit_ms as f64,
                    (l.years() * 10.0).round() / 10.0,
                    // Past PostgreSQL's timestamp range (year 294276) is as good as never.
                    (!l.wraps && l.end_ms() < 9_000_000_000_000_000).then(|| ts_of_ms(l.end_ms())),
                    l.js_safe(),
                    l.check_for_generation(now_ms()).is_ok(),
                    l.describe(),
                )
            })
            .collect();
        TableIterator::new(rows)
    }

    /// The row of the idgen.status view.
    ///
    /// This node's generator: layout, worker id, last ID, drift, durable mark, counters.
    #[pg_extern(volatile, parallel_safe)]
    fn node_status() -> TableIterator<
        'static,
        (
            name!(layout, String),
            name!(layout_spec, String),
            name!(worker_id, Option<i32>),
            name!(datacenter_id, i32),
            name!(worker_id_source, String),
            name!(clock_policy, String),
            name!(max_drift_ms, i32),
            name!(last_id, Option<i64>),
            name!(last_id_time, Option<TimestampWithTimeZone>),
            name!(wall_clock, TimestampWithTimeZone),
            name!(drift_ms, i64),
            name!(persisted_mark, Option<TimestampWithTimeZone>),
            name!(ids_issued, i64),
            name!(overflow_waits, i64),
            name!(clock_behind_waits, i64),
            name!(clock_errors, i64),
            name!(backward_steps, i64),
            name!(largest_backward_step_ms, i64),
            name!(rollback_flips, i64),
            name!(segment_cache_used, i64),
            name!(segment_cache_size, i64),
            name!(segment_evictions, i64),
            name!(problem, Option<String>),
        ),
    > {
        let g = node();
        let snowflake = report::clock(Stream::Snowflake);
        let st = snowflake.state;
        let (counter, flag) = st.last();
        let now = now_ms();
        let last_ms = snowflake.last_tick_ms();
        let (worker_id, worker_source) = crate::lease::node_worker();
        let last_id = worker_id
            .filter(|_| counter != 0)
            .map(|w| g.id_of_worker(counter, flag, w as u64));
        let settings = gucs::clock_settings();
        let policy: pg_idgen_core::generator::ClockPolicy = settings.policy.into();
        let problem = report::problem(now, settings.max_drift_ms as i64);
        let (seg_used, seg_size, seg_evictions) = crate::segment::cache_usage();
        TableIterator::once((
            g.layout.name.clone(),
            gucs::layout_spec(),
            worker_id,
            gucs::datacenter_id(),
            worker_source,
            policy.name().to_string(),
            settings.max_drift_ms,
            last_id,
            last_ms.map(ts_of_ms),
            ts_of_ms(now),
            drift_ms(last_ms, now),
            report::persisted_mark_ms().map(ts_of_ms),
            stat(&st.stats.issued),
            stat(&st.stats.overflow_waits),
            stat(&st.stats.behind_waits),
            stat(&st.stats.clock_errors),
            stat(&st.stats.backward_steps),
            stat(&st.stats.largest_backward_step_ms),
            stat(&st.stats.flag_flips),
            seg_used,
            seg_size,
            seg_evictions,
            problem,
        ))
    }

    /// A counter of a stream's statistics, as a column.
    fn stat(a: &AtomicU64) -> i64 {
        a.load(Relaxed) as i64
    }

    /// How far a stream's logical clock runs ahead of the wall clock: never negative (an idle
    /// stream's last tick simply lies in the past), 0 before its first ID.
    fn drift_ms(last_tick_ms: Option<i64>, now: i64) -> i64 {
        last_tick_ms.map_or(0, |ms| (ms - now).max(0))
    }

    /// The rows of the idgen.streams view.
    ///
    /// Each clock stream of the node, as `idgen.status` shows the Snowflake one.
    #[pg_extern(volatile, parallel_safe)]
    fn stream_status() -> TableIterator<
        'static,
        (
            name!(stream, String),
            name!(ids_per_second, f64),
            name!(last_tick_time, Option<TimestampWithTimeZone>),
            name!(drift_ms, i64),
            name!(reserved_until, Option<TimestampWithTimeZone>),
            name!(ids_issued, i64),
            name!(overflow_waits, i64),
            name!(clock_behind_waits, i64),
            name!(clock_errors, i64),
            name!(backward_steps, i64),
            name!(largest_backward_step_ms, i64),
        ),
    > {
        let now = now_ms();
        let rows: Vec<_> = report::clocks()
            .iter()
            .map(|s| {
                let st = s.state;
                let last_ms = s.last_tick_ms();
                let issued = stat(&st.stats.issued);
                (
                    s.stream.name().to_string(),
                    s.layout.per_tick() as f64 * 1000.0 / s.layout.unit_ms as f64,
                    // The restored position of a stream is no tick of an ID of this start (the
                    // drift still counts it: the stream goes on above it).
                    last_ms.filter(|_| issued > 0).map(ts_of_ms),
                    drift_ms(last_ms, now),
                    s.reserved_until_ms().map(ts_of_ms),
                    issued,
                    stat(&st.stats.overflow_waits),
                    stat(&st.stats.behind_waits),
                    stat(&st.stats.clock_errors),
                    stat(&st.stats.backward_steps),
                    stat(&st.stats.largest_backward_step_ms),
                )
            })
            .collect();
        TableIterator::new(rows)
    }

    /// The rows of the idgen.refusals view.
    ///
    /// How often each stream refused an ID since the server started, per reason: a row for
    /// every stream and every reason, zero included (`idgen.refusals`).
    #[pg_extern(volatile, parallel_safe)]
    fn refusal_counts() -> TableIterator<
        'static,
        (
            name!(stream, String),
            name!(reason, String),
            name!(refusals, i64),
        ),
    > {
        use crate::node::report::Reason;
        let rows: Vec<_> = Stream::ALL
            .iter()
            .flat_map(|s| Reason::ALL.iter().map(move |r| (*s, *r)))
            .map(|(s, r)| {
                (
                    s.name().to_string(),
                    r.name().to_string(),
                    report::refusals(s, r).min(i64::MAX as u64) as i64,
                )
            })
            .collect();
        TableIterator::new(rows)
    }

    /// The rows of the idgen.read_horizon_holders view.
    ///
    /// Who holds the read horizons back now (`idgen.read_horizon_holders`): a row per open
    /// transaction and stream, per prepared transaction and stream, and one per prepared
    /// transaction from before the start (no stream: it holds every horizon at its lowest).
    #[pg_extern(volatile, parallel_restricted)]
    fn read_horizon_holders() -> TableIterator<
        'static,
        (
            name!(kind, String),
            name!(stream, Option<String>),
            name!(pid, Option<i32>),
            name!(transaction, Option<i64>),
            name!(oldest_id, Option<String>),
            name!(oldest_id_time, Option<TimestampWithTimeZone>),
        ),
    > {
        use pg_idgen_core::horizon::EMPTY;
        let g = node();
        let mut rows = Vec::new();
        for h in report::holders() {
            let xid = h.xid.map(i64::from);
            if h.low.iter().all(|(_, &l)| l == EMPTY) {
                rows.push((h.kind.to_string(), None, h.pid, xid, None, None));
            }
            for (stream, &low) in h.low.iter() {
                if low == EMPTY {
                    continue;
                }
                let id = match stream {
                    Stream::Snowflake => g.id_of(low, 0).to_string(),
                    Stream::Uuidv7 => {
                        pgrx::Uuid::from_bytes(pg_idgen_core::uuidv7::compose(low, 0)).to_string()
                    }
                    // No read horizon is kept for message IDs: never held.
                    Stream::Msgid => continue,
                };
                let clock = report::clock(stream);
                let ms = clock.layout.ms_of_tick(low >> clock.seq_bits);
                rows.push((
                    h.kind.to_string(),
                    Some(stream.name().to_string()),
                    h.pid,
                    xid,
                    Some(id),
                    Some(ts_of_ms(ms)),
                ));
            }
        }
        TableIterator::new(rows)
    }
}

extension_sql_file!(
    "../sql/install/status_views.sql",
    name = "status_views",
    requires = [
        idgen_internal::layout_catalog,
        idgen_internal::node_status,
        idgen_internal::stream_status,
        idgen_internal::read_horizon_holders,
        idgen_internal::refusal_counts
    ],
);
