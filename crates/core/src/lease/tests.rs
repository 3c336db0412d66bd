use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

use super::*;

#[test]
fn no_lease_means_no_ids() {
    let cell = LeaseCell::default();
    assert_eq!(cell.under(|| 0, || 1), Err(LeaseFault::NotLeased));
    assert_eq!(cell.current(0), None);
}

#[test]
fn a_granted_lease_is_valid_until_its_deadline_and_not_after() {
    let cell = LeaseCell::default();
    cell.grant(7, 1_000, i64::MAX);
    assert_eq!(cell.under(|| 999, || "id"), Ok((7, "id")));
    assert_eq!(
        cell.under(|| 1_000, || "id"),
        Err(LeaseFault::Lapsed { worker_id: 7 })
    );
}

#[test]
fn a_lease_that_lapses_during_take_rejects_the_result() {
    let cell = LeaseCell::default();
    cell.grant(3, 1_000, i64::MAX);
    let now = AtomicI64::new(500);
    let r = cell.under(
        || now.load(SeqCst),
        || {
            // The keeper stalls and the deadline passes while the counter is taken.
            now.store(1_000, SeqCst);
            42
        },
    );
    assert_eq!(r, Err(LeaseFault::Lapsed { worker_id: 3 }));
}

#[test]
fn a_lease_replaced_during_take_rejects_the_result_even_with_the_same_worker_id() {
    let cell = LeaseCell::default();
    cell.grant(3, 1_000, i64::MAX);
    let r = cell.under(
        || 0,
        || {
            cell.revoke();
            cell.grant(3, 9_000, i64::MAX);
        },
    );
    assert_eq!(r, Err(LeaseFault::Lapsed { worker_id: 3 }));
    assert!(cell.under(|| 0, || ()).is_ok());
}

#[test]
fn renewal_extends_only_the_lease_it_names() {
    let cell = LeaseCell::default();
    let old = cell.grant(1, 100, i64::MAX);
    assert!(cell.extend(old, 200, i64::MAX));
    assert_eq!(cell.under(|| 150, || ()), Ok((1, ())));
    cell.revoke();
    let new = cell.grant(2, 300, i64::MAX);
    assert_ne!(old, new);
    assert!(
        !cell.extend(old, 10_000, i64::MAX),
        "a stale renewal must not extend"
    );
    assert_eq!(cell.valid_until_ns(), 300);
}

#[test]
fn revoke_reports_the_worker_id_once() {
    let cell = LeaseCell::default();
    cell.grant(12, 100, i64::MAX);
    assert_eq!(cell.revoke(), Some(12));
    assert_eq!(cell.revoke(), None);
    assert_eq!(cell.under(|| 0, || ()), Err(LeaseFault::NotLeased));
}

/// The property the release's `last_ts` rests on: once `revoke` returns, the counter read
/// afterwards bounds every counter accepted under the revoked lease, however the takers
/// interleave with it.
#[test]
fn after_revoke_the_counter_bounds_every_accepted_id() {
    for round in 0..20 {
        let cell = Arc::new(LeaseCell::default());
        let counter = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        cell.grant(5, i64::MAX, i64::MAX);
        let takers: Vec<_> = (0..4)
            .map(|_| {
                let (cell, counter, stop) = (cell.clone(), counter.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut accepted = HashMap::<u32, Vec<u64>>::new();
                    while !stop.load(SeqCst) {
                        if let Ok((w, c)) = cell.under(|| 0, || counter.fetch_add(1, SeqCst) + 1) {
                            accepted.entry(w).or_default().push(c);
                        }
                    }
                    accepted
                })
            })
            .collect();
        // Let the takers run under the first lease for a while (however slow they are to start).
        let start = counter.load(SeqCst);
        while counter.load(SeqCst) < start + 100 + round * 50 {
            std::thread::yield_now();
        }
        assert_eq!(cell.revoke(), Some(5));
        let bound = counter.load(SeqCst);
        // A second holder starts after the bound.
        cell.grant(6, i64::MAX, i64::MAX);
        let granted = counter.load(SeqCst);
        while counter.load(SeqCst) < granted + 100 {
            std::thread::yield_now();
        }
        stop.store(true, SeqCst);
        let mut under_5 = 0;
        for t in takers {
            let accepted = t.join().unwrap();
            for c in accepted.get(&5).into_iter().flatten() {
                assert!(
                    *c <= bound,
                    "counter {c} accepted under a revoked lease (bound {bound})"
                );
                under_5 += 1;
            }
            for c in accepted.get(&6).into_iter().flatten() {
                assert!(
                    *c > bound,
                    "counter {c} of the new lease is not above {bound}"
                );
            }
        }
        assert!(under_5 > 0, "the takers never ran under the first lease");
    }
}

#[test]
fn renewal_cadence_leaves_room_for_two_failures() {
    assert_eq!(renew_every_ms(30_000), 10_000);
    assert_eq!(renew_every_ms(1_000), 333);
    assert_eq!(renew_every_ms(10), 100);
    assert_eq!(retry_after_ms(30_000), 1_000);
    assert_eq!(retry_after_ms(2_000), 200);
    assert_eq!(retry_after_ms(100), 100);
}

/// A renewal never lowers the ceiling, and a new grant sets its own.
#[test]
fn the_ceiling_moves_with_grants_and_renewals_never_down() {
    let cell = LeaseCell::default();
    let w = cell.grant(1, 100, 5_000);
    assert_eq!(cell.ceiling_ms(), 5_000);
    assert!(cell.extend(w, 200, 7_000));
    assert!(cell.extend(w, 300, 6_000));
    assert_eq!(cell.ceiling_ms(), 7_000);
    cell.revoke();
    cell.grant(2, 400, 1_000);
    assert_eq!(cell.ceiling_ms(), 1_000);
}

/// The ceiling is what the coordinator's start_after covers, for every report, every delay of the
/// call and every offset of the holder's clock (the arithmetic of worker_start_after and
/// worker_free_at in lease.sql, written out here): it never depends on the holder's clock.
#[test]
fn the_ceiling_is_below_every_start_after_the_coordinator_can_give() {
    let (ttl, grace) = (10_000i64, 2_000i64);
    for reported in [None, Some(-50_000), Some(0), Some(39_000), Some(70_000)] {
        for heartbeat_at in [-1_000i64, 0, 800, 30_000] {
            let expires_at = heartbeat_at + ttl;
            let last_ts = reported.unwrap_or(i64::MIN / 2);
            let free_at = expires_at.max(heartbeat_at + ttl) + grace;
            let start_after = (last_ts + ttl + grace).max(free_at);
            let c = ceiling_ms(reported, expires_at, ttl as u64);
            assert!(
                c <= start_after,
                "reported {reported:?} at {heartbeat_at}: {c} > {start_after}"
            );
            // And it lets a holder with a correct clock work: at least a ttl past the call.
            assert!(c >= heartbeat_at + ttl);
        }
    }
}

#[test]
fn a_lost_lease_is_told_by_its_condition_name_whatever_the_message() {
    let reworded = "the lease of worker id 3 is gone";
    assert!(is_lost(Some("55000"), Some(LOST_CONDITION), reworded));
    // Another refusal with the same SQLSTATE is a failed call, not a lost lease.
    assert!(!is_lost(
        Some("55000"),
        Some("idgen_something_else"),
        "lease lost: but named otherwise"
    ));
    assert!(!is_lost(
        Some("55000"),
        None,
        "idgen.worker_lease_conninfo is not set"
    ));
}

#[test]
fn a_coordinator_before_0_2_5_is_understood_by_its_message() {
    assert!(is_lost(
        Some("55000"),
        None,
        "lease lost: the lease of worker id 3 was released"
    ));
    assert!(!is_lost(Some("XX000"), None, "lease lost: wrong SQLSTATE"));
    assert!(!is_lost(None, None, "lease lost: not from the coordinator"));
}
