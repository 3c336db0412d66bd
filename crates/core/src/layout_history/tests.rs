use super::*;
use crate::civil::parse_utc_ms;
use crate::presets;

fn layout(spec: &str) -> Layout {
    Layout::parse(spec).unwrap()
}

fn ms(date: &str) -> i64 {
    parse_utc_ms(date).unwrap()
}

fn history(current: &str, start_ms: i64) -> History {
    History {
        past: Vec::new(),
        current: layout(current),
        start_ms,
    }
}

/// Checks a verdict by brute force: the smallest ID the new layout can make from `start_ms` is
/// above the largest ID each earlier layout can have made before its bound.
fn assert_above_all(h: &History, start_ms: i64) {
    let new = &h.current;
    let tick = new.tick_of_ms(start_ms).unwrap();
    let smallest = new.pack(tick, 0, 0, 0, 0);
    for p in &h.past {
        let Some(t) = p.layout.tick_of_ms(p.until_ms - 1) else {
            continue;
        };
        let l = &p.layout;
        let largest = l.pack(
            t,
            l.max_value(Field::Datacenter),
            l.max_value(Field::Worker),
            l.max_value(Field::Rollback),
            l.max_value(Field::Sequence),
        );
        assert!(
            smallest > largest,
            "{smallest} is not above {largest} of {}",
            l.canonical_spec()
        );
    }
}

#[test]
fn canonical_specs_read_back_to_the_same_layout() {
    for name in presets::names() {
        let l = layout(name);
        let back = layout(&l.canonical_spec());
        assert_eq!(back.canonical_spec(), l.canonical_spec(), "{name}");
        assert_eq!(
            (back.unit_ms, back.epoch_ms),
            (l.unit_ms, l.epoch_ms),
            "{name}"
        );
        assert_eq!(back.pack(5, 1, 2, 0, 3), l.pack(5, 1, 2, 0, 3), "{name}");
    }
}

#[test]
fn a_first_start_records_the_layout() {
    let v = on_start(
        None,
        Some(ms("2026-01-01")),
        &layout("twitter"),
        ms("2026-01-01"),
    );
    match v {
        Verdict::Same {
            start_ms: 0,
            write: Some(h),
        } => assert_eq!(h.current, layout("twitter")),
        v => panic!("{v:?}"),
    }
}

#[test]
fn the_same_layout_under_another_name_is_no_change() {
    let prev = history("pg_idgen", 42);
    let same = layout(&layout("pg_idgen").canonical_spec());
    assert_eq!(
        on_start(Some(prev), Some(ms("2026-01-01")), &same, ms("2026-01-01")),
        Verdict::Same {
            start_ms: 42,
            write: None
        }
    );
}

#[test]
fn moving_bits_between_worker_and_sequence_starts_after_the_mark() {
    let now = ms("2026-06-01T12:00:00");
    let mark = now + 1_000;
    let prev = history("pg_idgen", 0);
    let new = layout("pg_idgen worker=12 sequence=10");
    match on_start(Some(prev), Some(mark), &new, now) {
        Verdict::Changed { history, start_ms } => {
            assert!(
                start_ms >= mark && start_ms <= mark + 1,
                "{start_ms} vs {mark}"
            );
            assert_eq!(history.past.len(), 1);
            assert_eq!(history.past[0].until_ms, mark);
            assert_above_all(&history, start_ms);
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn a_later_epoch_makes_smaller_ids_and_is_refused() {
    let now = ms("2026-06-01");
    match on_start(
        Some(history("twitter", 0)),
        Some(now),
        &layout("pg_idgen"),
        now,
    ) {
        Verdict::Refused(why) => {
            assert!(why.contains("stay below IDs made before until"), "{why}")
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn an_earlier_epoch_makes_larger_ids_at_once() {
    let now = ms("2026-06-01");
    match on_start(
        Some(history("pg_idgen", 0)),
        Some(now),
        &layout("twitter"),
        now,
    ) {
        Verdict::Changed { history, start_ms } => {
            assert!(start_ms <= now);
            assert_above_all(&history, start_ms);
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn the_whole_history_counts_not_only_the_last_layout() {
    let now = ms("2026-06-01");
    let Verdict::Changed { history: h, .. } = on_start(
        Some(history("pg_idgen", 0)),
        Some(now),
        &layout("twitter"),
        now,
    ) else {
        panic!()
    };
    // Back to the first layout: its IDs would be below the twitter ones made since.
    let later = now + 3_600_000;
    assert!(matches!(
        on_start(Some(h.clone()), Some(later), &layout("pg_idgen"), later),
        Verdict::Refused(_)
    ));
    // A layout above twitter's IDs but checked against both.
    let c = layout("unit=ms epoch=2005-01-01 time=41 worker=10 sequence=12");
    match on_start(Some(h), Some(later), &c, later) {
        Verdict::Changed { history, start_ms } => {
            assert_eq!(history.past.len(), 2);
            assert_above_all(&history, start_ms);
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn different_reserved_values_never_meet_whatever_the_epochs() {
    let now = ms("2026-06-01");
    let old = "pg_idgen time=40 reserved=1 epoch=2010-01-01";
    let new = layout("pg_idgen time=40 reserved=1 reserved_value=1");
    match on_start(Some(history(old, 0)), Some(now), &new, now) {
        Verdict::Changed { start_ms, .. } => assert_eq!(start_ms, new.epoch_ms),
        v => panic!("{v:?}"),
    }
    // The same change without the reserved bit is refused.
    let old = "pg_idgen time=40 epoch=2010-01-01";
    let new = layout("pg_idgen time=40");
    assert!(matches!(
        on_start(Some(history(old, 0)), Some(now), &new, now),
        Verdict::Refused(_)
    ));
}

#[test]
fn a_layout_that_made_no_id_constrains_nothing() {
    let now = ms("2026-06-01");
    let v = on_start(Some(history("twitter", 0)), None, &layout("pg_idgen"), now);
    assert!(matches!(v, Verdict::Changed { .. }), "{v:?}");
}

#[test]
fn a_start_a_little_ahead_is_accepted_far_ahead_refused() {
    let now = ms("2026-06-01");
    // The old layout counts in seconds and the mark is 30 s ahead (a clock stepped back): the
    // new layout starts after it, which is no later than the node would start anyway.
    let prev = history("unit=s epoch=2024-01-01 time=31 worker=10 sequence=22", 0);
    let new = layout("unit=s epoch=2024-01-01 time=31 worker=12 sequence=20");
    let v = on_start(Some(prev.clone()), Some(now + 30_000), &new, now);
    assert!(matches!(v, Verdict::Changed { .. }), "{v:?}");
    // A minute unit rounds the old IDs' bound up to the end of their minute: still accepted.
    let prev_min = history("unit=min epoch=2024-01-01 time=31 worker=10 sequence=22", 0);
    let new_min = layout("unit=min epoch=2024-01-01 time=31 worker=12 sequence=20");
    let v = on_start(Some(prev_min), Some(now + 1), &new_min, now);
    assert!(matches!(v, Verdict::Changed { .. }), "{v:?}");
    // A day unit: the next day is hours ahead, refused.
    let prev_day = history("unit=day epoch=2024-01-01 time=31 worker=10 sequence=22", 0);
    let new_day = layout("unit=day epoch=2024-01-01 time=31 worker=12 sequence=20");
    let v = on_start(Some(prev_day), Some(now + 1), &new_day, now);
    assert!(matches!(v, Verdict::Refused(_)), "{v:?}");
}

#[test]
fn the_file_reads_back_and_refuses_garbage() {
    let h = History {
        past: vec![Past {
            layout: layout("pg_idgen"),
            until_ms: 1_700_000_000_123,
        }],
        current: layout("twitter"),
        start_ms: 1_700_000_000_124,
    };
    let back = History::parse(&h.render()).unwrap();
    assert_eq!(back.render(), h.render());
    assert_eq!(back.start_ms, h.start_ms);
    assert_eq!(back.past[0].until_ms, 1_700_000_000_123);
    assert!(History::parse("something else\n").is_err());
    assert!(History::parse("pg_idgen layout history v1\n").is_err());
    assert!(History::parse("pg_idgen layout history v1\ncurrent x pg_idgen\n").is_err());
    assert!(History::parse("pg_idgen layout history v1\ncurrent 0 nosuch\n").is_err());
    assert!(
        History::parse("pg_idgen layout history v1\nfuture 0 pg_idgen\ncurrent 0 pg_idgen\n")
            .is_err()
    );
}

#[test]
fn the_file_is_stored_and_loaded() {
    let dir = std::env::temp_dir().join(format!("pg_idgen_history_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    assert_eq!(History::load(&dir).unwrap(), None);
    let h = history("sonyflake", 7);
    h.store(&dir).unwrap();
    assert_eq!(History::load(&dir).unwrap().unwrap().render(), h.render());
    std::fs::write(dir.join(HISTORY_FILE), "torn").unwrap();
    assert!(History::load(&dir).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_layout_with_no_id_above_the_old_ones_says_so() {
    let now = ms("2026-06-01");
    let new = layout("unit=ms epoch=2026-01-01 time=36 worker=10 sequence=12");
    match on_start(Some(history("twitter", 0)), Some(now), &new, now) {
        Verdict::Refused(why) => assert!(why.contains("none of its IDs is above them"), "{why}"),
        v => panic!("{v:?}"),
    }
}
