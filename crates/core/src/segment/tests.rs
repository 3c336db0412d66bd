use std::collections::HashSet;

use super::*;

fn ids_of(range: Range) -> Vec<i64> {
    let mut b = Buffer::load(range);
    let mut out = Vec::new();
    while let Some((first, count)) = b.take(1) {
        assert_eq!(count, 1);
        out.push(first);
    }
    out
}

#[test]
fn tinyid_first_id_of_a_type_created_at_zero_is_one() {
    let r = plan_range(0, 1000, 1, 0).unwrap();
    assert_eq!(
        (r.first(), r.last(), r.count()),
        (Some(1), Some(1000), 1000)
    );
}

#[test]
fn odd_even_split_matches_seed_002() {
    // Two databases, delta 2: remainder 1 hands out odd IDs, remainder 0 even ones.
    let odd = ids_of(plan_range(0, 10, 2, 1).unwrap());
    let even = ids_of(plan_range(0, 10, 2, 0).unwrap());
    assert_eq!(odd, vec![1, 3, 5, 7, 9]);
    assert_eq!(even, vec![2, 4, 6, 8, 10]);
}

#[test]
fn every_id_is_in_its_range_and_residue_over_many_shapes() {
    for delta in 1..=7 {
        for remainder in 0..delta {
            for step in delta..=delta * 4 + 3 {
                for start in [0i64, 1, 2, 5, 999, 1_000_001] {
                    let r = plan_range(start, step, delta, remainder).unwrap();
                    let ids = ids_of(r);
                    // Brute force: every x in (start, start + step] with the residue.
                    let want: Vec<i64> = (start + 1..=start + step)
                        .filter(|x| x % delta == remainder)
                        .collect();
                    assert_eq!(
                        ids, want,
                        "start {start} step {step} delta {delta} rem {remainder}"
                    );
                    assert_eq!(r.count() as usize, want.len());
                    assert!(r.count() >= 1);
                }
            }
        }
    }
}

#[test]
fn consecutive_ranges_of_split_databases_never_overlap() {
    // Three databases with delta 3, each taking ranges from its own max_id with varying steps.
    let mut seen = HashSet::new();
    for remainder in 0..3 {
        let mut max_id = 0i64;
        for step in [3i64, 7, 1000, 4, 3, 250] {
            let r = plan_range(max_id, step, 3, remainder).unwrap();
            for id in ids_of(r) {
                assert_eq!(id % 3, remainder);
                assert!(seen.insert(id), "id {id} handed out twice");
            }
            max_id = r.end;
        }
    }
}

#[test]
fn ranges_at_the_top_of_bigint() {
    let r = plan_range(i64::MAX - 10, 10, 1, 0).unwrap();
    assert_eq!(r.last(), Some(i64::MAX));
    assert_eq!(ids_of(r).len(), 10);
    let r = plan_range(i64::MAX - 10, 10, 4, 3).unwrap();
    let ids = ids_of(r);
    assert!(ids.iter().all(|x| x % 4 == 3 && *x > i64::MAX - 10));
    assert_eq!(plan_range(i64::MAX - 10, 11, 1, 0), Err(Fault::Overflow));
    assert_eq!(plan_range(i64::MAX, 1, 1, 0), Err(Fault::Overflow));
    assert_eq!(first_after(i64::MAX, 1, 0), None);
}

#[test]
fn bad_settings_are_refused_with_a_reason() {
    let e = |m, s, d, r| check_type_settings(m, s, d, r).unwrap_err();
    assert_eq!(
        e(-1, 10, 1, 0),
        SettingsError::NegativeStart { start_id: -1 }
    );
    assert!(e(-1, 10, 1, 0).to_string().contains("start_id"));
    assert_eq!(e(0, 0, 1, 0), SettingsError::StepNotPositive { step: 0 });
    assert_eq!(e(0, 10, 0, 0), SettingsError::DeltaNotPositive { delta: 0 });
    assert_eq!(
        e(0, 10, 2, 2),
        SettingsError::RemainderOutOfRange {
            remainder: 2,
            delta: 2
        }
    );
    assert!(e(0, 10, 2, -1).to_string().contains("remainder"));
    assert_eq!(
        e(0, 2, 3, 0),
        SettingsError::StepBelowDelta { step: 2, delta: 3 }
    );
    assert!(e(0, 2, 3, 0).to_string().contains("below delta"));
    assert_eq!(plan_range(0, 0, 1, 0), Err(Fault::BadRow));
    assert!(check_type_settings(0, 3, 3, 2).is_ok());
}

#[test]
fn leaf_dynamic_step() {
    let min = 15 * 60 * 1000;
    // First range: the configured step.
    assert_eq!(next_step(0, 1000, 1_000_000, 5, min), 1000);
    // Lasted under the target: doubles, up to the maximum.
    assert_eq!(next_step(1000, 1000, 1_000_000, 5, min), 2000);
    assert_eq!(next_step(800_000, 1000, 1_000_000, 5, min), 1_000_000);
    assert_eq!(next_step(1_000_000, 1000, 1_000_000, 5, min), 1_000_000);
    // Between the target and twice the target: unchanged.
    assert_eq!(next_step(4000, 1000, 1_000_000, min + 1, min), 4000);
    // Over twice the target: halves, never below the configured step.
    assert_eq!(next_step(4000, 1000, 1_000_000, 2 * min + 1, min), 2000);
    assert_eq!(next_step(1500, 1000, 1_000_000, 2 * min + 1, min), 1000);
    // A configured step above the maximum wins; a lowered configured step bounds from below.
    assert_eq!(next_step(5000, 5000, 1000, 5, min), 5000);
    assert_eq!(next_step(400, 1000, 1_000_000, 3 * min, min), 1000);
    // Target 0: always the configured step.
    assert_eq!(next_step(4000, 1000, 1_000_000, 5, 0), 1000);
}

#[test]
fn rate_floor_sizes_the_range_for_the_refill_latency() {
    // 200 IDs in 24 µs (8.3M/s), refills take 1 ms, prefetch at 20%: the 80% after the
    // prefetch point must last 4 ms, i.e. 33,333 IDs, so the range needs 41,666.
    assert_eq!(rate_floor(200, 24, 1000, 20), 41_666);
    // Latency below 0.5 ms is taken as 0.5 ms; a slow caller needs no floor to speak of.
    assert_eq!(rate_floor(200, 24, 10, 20), rate_floor(200, 24, 500, 20));
    assert!(rate_floor(10, 60_000_000, 1000, 20) < 1);
    // Nothing to go by, or prefetching only when dry: no floor.
    assert_eq!(rate_floor(0, 24, 1000, 20), 0);
    assert_eq!(rate_floor(200, 0, 1000, 20), 0);
    assert_eq!(rate_floor(200, 24, 1000, 100), 0);
    assert_eq!(rate_floor(i64::MAX, 1, i64::MAX, 99), i64::MAX);
}

#[test]
fn install_remembers_where_the_rate_is_measured_from() {
    let mut s = SegmentState::default();
    s.take(1, 20);
    s.claim();
    s.install(plan_range(0, 100, 1, 0).unwrap(), 100, 1_000);
    for _ in 0..30 {
        s.take(1, 20);
    }
    assert_eq!(
        (s.issued, s.issued_at_refill, s.last_refill_us),
        (30, 0, 1_000)
    );
    s.claim();
    s.install(plan_range(100, 100, 1, 0).unwrap(), 100, 9_000);
    assert_eq!((s.issued_at_refill, s.last_refill_us), (30, 9_000));
}

fn got(t: Take) -> (i64, i64, bool) {
    match t {
        Take::Got {
            first,
            count,
            prefetch,
            ..
        } => (first, count, prefetch),
        other => panic!("expected IDs, got {other:?}"),
    }
}

#[test]
fn empty_state_asks_once_and_callers_wait() {
    let mut s = SegmentState::default();
    assert_eq!(s.take(1, 20), Take::Wait { request: true });
    assert_eq!(s.take(1, 20), Take::Wait { request: false });
    assert!(s.claim());
    assert!(!s.claim());
    assert_eq!(s.take(1, 20), Take::Wait { request: false });
    s.install(plan_range(0, 10, 1, 0).unwrap(), 10, 1);
    // The type's first range: nothing could be fetched ahead of it, so it is no dry cache.
    assert_eq!((s.refills_waited, s.refills_ahead), (0, 0));
    assert_eq!(got(s.take(1, 20)), (1, 1, false));
}

#[test]
fn a_wait_after_the_first_range_counts_as_the_cache_running_dry() {
    let mut s = SegmentState::default();
    s.take(1, 100);
    s.claim();
    s.install(plan_range(0, 2, 1, 0).unwrap(), 2, 1);
    assert_eq!(got(s.take(2, 100)), (1, 2, true));
    // The prefetch was asked for but has not come: the next caller waits for it.
    assert_eq!(s.take(1, 100), Take::Wait { request: false });
    assert!(s.claim());
    s.install(plan_range(2, 4, 1, 0).unwrap(), 2, 2);
    assert_eq!((s.refills_waited, s.refills_ahead), (1, 0));
}

#[test]
fn prefetch_fires_once_at_the_share_and_the_switch_is_seamless() {
    let mut s = SegmentState::default();
    s.take(1, 20);
    s.claim();
    s.install(plan_range(0, 10, 1, 0).unwrap(), 10, 0);
    assert_eq!(got(s.take(1, 20)), (1, 1, false));
    // The second ID makes 20% used: the caller is told to wake the worker, once.
    assert_eq!(got(s.take(1, 20)), (2, 1, true));
    assert_eq!(got(s.take(1, 20)), (3, 1, false));
    assert!(s.claim());
    s.install(plan_range(10, 20, 1, 0).unwrap(), 20, 5);
    assert_eq!((s.refills_waited, s.refills_ahead), (0, 1));
    assert_eq!(s.ids_left(), 7 + 20);
    let mut all: Vec<i64> = (4..=10).collect();
    all.extend(11..=30);
    let mut out = Vec::new();
    for _ in 0..27 {
        out.push(got(s.take(1, 20)).0);
    }
    assert_eq!(out, all);
    assert_eq!(s.issued, 30);
}

#[test]
fn batches_span_buffers_without_gaps() {
    let mut s = SegmentState::default();
    s.take(1, 50);
    s.claim();
    s.install(plan_range(0, 10, 2, 1).unwrap(), 10, 0);
    // A batch stops at the end of the current range; the rest comes from the next one.
    let (first, count, prefetch) = got(s.take(100, 50));
    assert_eq!((first, count, prefetch), (1, 5, true));
    assert_eq!(s.take(100, 50), Take::Wait { request: false });
    s.claim();
    s.install(plan_range(10, 10, 2, 1).unwrap(), 10, 0);
    assert_eq!(got(s.take(100, 50)).0, 11);
}

#[test]
fn a_fault_is_reported_once_after_the_cache_runs_dry() {
    let mut s = SegmentState::default();
    s.take(1, 20);
    s.claim();
    s.install(plan_range(0, 5, 1, 0).unwrap(), 5, 0);
    assert!(got(s.take(1, 20)).2);
    s.claim();
    s.fail(Fault::Overflow);
    // Cached IDs still go out, and no new request is made while the fault stands.
    for want in 2..=5 {
        assert_eq!(got(s.take(1, 20)), (want, 1, false));
    }
    assert_eq!(s.take(1, 20), Take::Failed(Fault::Overflow));
    // The next caller asks again.
    assert_eq!(s.take(1, 20), Take::Wait { request: true });
}

#[test]
fn an_unclaimed_request_goes_back_to_the_queue() {
    let mut s = SegmentState::default();
    s.take(1, 20);
    assert!(s.claim());
    s.unclaim();
    assert_eq!(s.refill, Refill::Requested);
    assert!(s.claim());
}

#[test]
fn installing_never_drops_cached_ids() {
    // Even an install with a full current buffer keeps it and parks the new range as next.
    let mut s = SegmentState::default();
    s.take(1, 90);
    s.claim();
    s.install(plan_range(0, 10, 1, 0).unwrap(), 10, 0);
    s.install(plan_range(10, 10, 1, 0).unwrap(), 10, 0);
    let mut out = Vec::new();
    while let Take::Got { first, count, .. } = s.take(3, 90) {
        out.extend((0..count).map(|i| first + i));
    }
    assert_eq!(out, (1..=20).collect::<Vec<_>>());
}
