use super::*;
use crate::civil::parse_utc_ms;
use crate::presets;

#[test]
fn every_preset_is_valid_and_sums_to_its_width() {
    for name in presets::names() {
        let l = Layout::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(l.total_bits() <= 63, "{name}");
        assert_eq!(l.order[0], Field::Time, "{name}");
    }
}

#[test]
fn a_layout_is_labelled_by_its_preset_where_it_is_one() {
    assert_eq!(Layout::parse("twitter").unwrap().label(), "twitter");
    assert_eq!(
        Layout::parse("sonyflake epoch=2014-09-01").unwrap().label(),
        "sonyflake"
    );
    let custom = Layout::parse("twitter epoch=2020-01-01").unwrap();
    assert_eq!(custom.label(), custom.canonical_spec());
}

#[test]
fn a_wrapping_layout_is_described_by_its_cycle() {
    let d = Layout::parse("westid32").unwrap().describe();
    assert!(d.contains("wraps around every 35."), "{d}");
    assert!(!d.contains("years"), "{d}");
    let d = Layout::parse("twitter").unwrap().describe();
    assert!(
        d.contains("lasts until 2080-") && d.contains("69.7 years"),
        "{d}"
    );
}

#[test]
fn overrides_keep_the_preset_order() {
    let l = Layout::parse("sonyflake epoch=2020-01-01").unwrap();
    assert_eq!(
        l.order,
        vec![Field::Time, Field::Sequence, Field::Worker],
        "{l:?}"
    );
    assert_eq!(l.epoch_ms, 1_577_836_800_000);
    assert_eq!(l.name, "sonyflake (customised)");
}

#[test]
fn custom_layout_from_keys_only() {
    let l = Layout::parse("unit=s epoch=2016-05-20 time=28 worker=22 sequence=13").unwrap();
    assert_eq!(l.name, "custom");
    assert_eq!(l.unit_ms, 1000);
    assert_eq!(l.shift(Field::Time), 35);
    assert_eq!(l.shift(Field::Worker), 13);
    assert_eq!(l.per_tick(), 8192);
}

#[test]
fn rejects_layouts_that_do_not_add_up() {
    let e = Layout::parse("twitter sequence=20").unwrap_err();
    assert!(
        matches!(e, LayoutError::Invalid(_))
            && e.message().contains("71 bits")
            && e.message().contains("take 8 bits off"),
        "{e}"
    );
    assert!(Layout::parse("twitter rollback=2").is_err());
    assert!(Layout::parse("twitter reserved=6").is_err());
    assert!(Layout::parse("twitter reserved=1 reserved_value=2").is_err());
    assert!(Layout::parse("twitter order=worker,time,sequence,datacenter").is_err());
    assert!(Layout::parse("twitter order=time,sequence").is_err());
    let e = Layout::parse("nosuch").unwrap_err();
    assert!(matches!(e, LayoutError::UnknownPreset(_)), "{e:?}");
    assert!(e.message().contains("known layouts"), "{e}");
    assert!(Layout::parse("twitter bogus=1").is_err());
    assert!(Layout::parse("twitter unit=fortnight").is_err());
    assert!(Layout::parse("twitter time").is_err());
}

#[test]
fn pack_unpack_round_trip_in_every_order() {
    for spec in [
        "twitter",
        "sonyflake",
        "instagram",
        "raindrop",
        "unit=ms time=41 worker=8 rollback=1 sequence=12 reserved=1 reserved_value=1",
    ] {
        let l = Layout::parse(spec).unwrap();
        let (t, dc, w, r, s) = (
            l.max_value(Field::Time) / 3,
            l.max_value(Field::Datacenter),
            l.max_value(Field::Worker) / 2,
            l.max_value(Field::Rollback),
            l.max_value(Field::Sequence) - 1,
        );
        let id = l.pack(t, dc, w, r, s);
        let d = l.unpack(id).unwrap();
        assert_eq!(
            (
                d.tick,
                d.datacenter,
                d.worker,
                d.rollback,
                d.sequence,
                d.reserved
            ),
            (t, dc, w, r, s, l.reserved_value),
            "{spec}"
        );
    }
}

#[test]
fn instagram_blog_walk_through() {
    // Instagram's engineering post builds an ID as (ms since epoch) << (64 - 41), shard 1341
    // << (64 - 41 - 13), then 5001 % 1024 = 905 as the sequence.
    let id = (1_387_263_000i64 << 23) | (1341 << 10) | 905;
    let d = Layout::parse("instagram").unwrap().unpack(id).unwrap();
    assert_eq!((d.tick, d.worker, d.sequence), (1_387_263_000, 1341, 905));
}

#[test]
fn sonyflake_composition() {
    // sony/sonyflake: elapsed (10 ms units) << (8 + 16) | sequence << 16 | machine id.
    let (elapsed, seq, machine) = (400_000_000_000u64, 17u64, 0xBEEFu64);
    let id = (elapsed << 24 | seq << 16 | machine) as i64;
    let l = Layout::parse("sonyflake").unwrap();
    let d = l.unpack(id).unwrap();
    assert_eq!((d.tick, d.sequence, d.worker), (elapsed, seq, machine));
    assert_eq!(l.pack(elapsed, 0, machine, 0, seq), id);
    assert_eq!(l.ms_of_tick(elapsed), 1_409_529_600_000 + 4_000_000_000_000);
}

#[test]
fn uid_generator_composition() {
    // Baidu uid-generator: deltaSeconds << (22 + 13) | workerId << 13 | sequence, seconds
    // since 1463673600 (2016-05-20 00:00 +08:00).
    let id = (100_000_000i64 << 35) | (4_000_000 << 13) | 8191;
    let l = Layout::parse("uid_generator").unwrap();
    let d = l.unpack(id).unwrap();
    assert_eq!(
        (d.tick, d.worker, d.sequence),
        (100_000_000, 4_000_000, 8191)
    );
    assert_eq!(l.ms_of_tick(d.tick), (1_463_673_600 + 100_000_000) * 1000);
}

#[test]
fn unpack_refuses_ids_the_layout_cannot_make() {
    let js = Layout::parse("js_safe").unwrap();
    assert!(matches!(
        js.unpack(1 << 53),
        Err(DecodeError::TooWide { bits: 53, .. })
    ));
    assert!(matches!(
        js.unpack(-1),
        Err(DecodeError::Negative { id: -1 })
    ));
    assert!(js.unpack(js.max_id()).is_ok());
}

#[test]
fn the_javascript_safe_presets_stay_below_2_pow_53_and_can_generate_until_2090() {
    // 2026-11-23, and 2090-01-01 (both UTC).
    let (now, y2090) = (1_795_392_000_000, 3_786_912_000_000);
    for (name, workers, per_second) in [
        ("js_safe", 16, 256_000),
        ("js_safe_10ms", 64, 51_200),
        ("js_safe_s", 1024, 4_096),
    ] {
        let l = Layout::parse(name).unwrap();
        assert!(l.js_safe(), "{name}");
        assert!(l.max_id() < 1 << 53, "{name}");
        assert!(l.end_ms() > y2090, "{name} ends at {}", l.end_ms());
        assert_eq!(l.max_value(Field::Worker) + 1, workers, "{name}");
        assert_eq!(l.per_tick() * 1000 / l.unit_ms, per_second, "{name}");
        assert!(l.check_for_generation(now).is_ok(), "{name}");
    }
}

#[test]
fn min_id_at_ms_is_the_start_of_the_tick() {
    let l = Layout::parse("twitter").unwrap();
    let ms = 1_577_820_376_771; // 2019-12-31 19:26:16.771 UTC
    let id = l.min_id_at_ms(ms).unwrap();
    assert_eq!(l.unpack(id).unwrap().tick, l.tick_of_ms(ms).unwrap());
    assert_eq!(l.unpack(id).unwrap().sequence, 0);
    assert_eq!(
        l.min_id_at_ms(0).unwrap(),
        0,
        "before the epoch clamps to 0"
    );
    assert!(l.min_id_at_ms(l.end_ms() + 1).is_err());
}

#[test]
fn generation_check_says_what_would_fit() {
    let now = parse_utc_ms("2026-11-21").unwrap();
    // uid_generator's 28 bits of seconds from 2016 ran out in 2024.
    let e = Layout::parse("uid_generator")
        .unwrap()
        .check_for_generation(now)
        .unwrap_err();
    assert!(
        matches!(e, GenerationRefused::RunsOut(_))
            && e.to_string().contains("runs out on 2024-")
            && e.to_string().contains("time=31"),
        "{e}"
    );
    let e = Layout::parse("westid32")
        .unwrap()
        .check_for_generation(now)
        .unwrap_err();
    assert!(
        matches!(e, GenerationRefused::Wraps(_)) && e.to_string().contains("34.95 minutes"),
        "{e}"
    );
    let e = Layout::parse("twitter epoch=2030-01-01")
        .unwrap()
        .check_for_generation(now)
        .unwrap_err();
    assert!(
        matches!(e, GenerationRefused::EpochInFuture(_)) && e.to_string().contains("future"),
        "{e}"
    );
    Layout::parse("pg_idgen")
        .unwrap()
        .check_for_generation(now)
        .unwrap();
    Layout::parse("js_safe")
        .unwrap()
        .check_for_generation(now)
        .unwrap();
}

#[test]
fn years_match_seed_001_table() {
    // raindrop's table: 41 bits of ms last 69.7 years, 31 bits of s 68 years, 25 bits of min 63 years.
    let y = |spec: &str| Layout::parse(spec).unwrap().years();
    assert!((y("unit=ms time=41 sequence=12") - 69.7).abs() < 0.1);
    assert!((y("unit=s time=31 sequence=12") - 68.0).abs() < 0.1);
    assert!((y("unit=min time=25 sequence=12") - 63.8).abs() < 0.1);
    assert!((y("unit=day time=15 sequence=12") - 89.7).abs() < 0.1);
}

#[test]
fn a_span_of_time_is_a_fixed_number_of_ids_aligned_to_the_epoch() {
    let l = Layout::parse("pg_idgen").unwrap();
    let day = 86_400_000;
    let span = l.id_span_ms(day).unwrap();
    assert_eq!(span, day << 22);
    // Multiples of the span are the starts of UTC days (the preset's epoch is a midnight).
    let nov26 = parse_utc_ms("2026-11-26").unwrap();
    assert_eq!(l.min_id_at_ms(nov26).unwrap() % span, 0);
    assert_eq!(
        l.min_id_at_ms(nov26 + day).unwrap() - l.min_id_at_ms(nov26).unwrap(),
        span
    );
    assert!(matches!(
        l.id_span_ms(0),
        Err(SpanError::NotPositive { .. })
    ));
    let s = Layout::parse("sonyflake").unwrap();
    assert!(matches!(
        s.id_span_ms(15),
        Err(SpanError::NotWholeTicks { unit_ms: 10, .. })
    ));
    assert_eq!(s.id_span_ms(20).unwrap(), 2 << s.shift(Field::Time));
    let e = l.id_span_ms(i64::MAX / 2 / 1000 * 1000).unwrap_err();
    assert!(matches!(e, SpanError::TooLong { .. }), "{e}");
}
