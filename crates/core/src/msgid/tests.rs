use super::*;
use crate::layout::{Field, Layout};

#[test]
fn session_hash_is_javas_string_hashcode_low_22_bits() {
    // "hello".hashCode() == 99162322 in Java.
    assert_eq!(session_hash("hello"), 99_162_322 & 0x3F_FFFF);
    assert_eq!(session_hash(""), 0);
    // "中" is one UTF-16 unit (U+4E2D = 20013); an emoji is two (a surrogate pair).
    assert_eq!(session_hash("中"), 20013);
    assert_eq!(session_hash("😀"), (31 * 0xD83D + 0xDE00) & 0x3F_FFFF);
    // Long strings wrap at 32 bits as Java's int does: "polygenelubricants".hashCode() is
    // Integer.MIN_VALUE, whose low 22 bits are 0.
    assert_eq!(session_hash("polygenelubricants"), 0);
}

#[test]
fn fields_sit_where_seed_000_puts_them() {
    let ms = 1_700_000_000_123u64;
    let id = MsgId::new(ms << 12 | 4095, 15, 0x3F_FFFF);
    assert_eq!(id.bits() >> 38, ms as u128);
    assert_eq!(
        (id.ms(), id.sequence(), id.session_type(), id.session_hash()),
        (ms, 4095, 15, 0x3F_FFFF)
    );
    let id = MsgId::new(ms << 12 | 7, 3, 12345);
    assert_eq!(id.bits(), (ms as u128) << 38 | 7 << 26 | 3 << 22 | 12345);
    assert!(id.bits() < 1 << 80);
}

#[test]
fn text_is_19_characters_in_four_groups() {
    let id = MsgId::new(1_700_000_000_123 << 12 | 42, 2, session_hash("group:1001"));
    let t = id.to_text();
    assert_eq!(t.len(), 19);
    let groups: Vec<_> = t.split('-').collect();
    assert_eq!(groups.len(), 4);
    assert!(groups.iter().all(|g| g.len() == 4));
    assert!(t.bytes().all(|c| c == b'-' || MSG_ALPHABET.contains(&c)));
    assert_eq!(MsgId::parse(&t), Ok(id));
    assert_eq!(MsgId::parse(&t.replace('-', "")), Ok(id));
    assert_eq!(MsgId::parse(&t.to_lowercase()), Ok(id));
    // All zero bits and all one bits.
    assert_eq!(MsgId::new(0, 0, 0).to_text(), "2222-2222-2222-2222");
    let max = MsgId::new((1 << 54) - 1, 15, 0x3F_FFFF);
    assert_eq!(max.to_text(), "ZZZZ-ZZZZ-ZZZZ-ZZZZ");
    assert_eq!(MsgId::parse("ZZZZ-ZZZZ-ZZZZ-ZZZZ"), Ok(max));
}

#[test]
fn first_symbol_holds_the_highest_five_bits() {
    // Only the top bit of the 80 set: the first symbol is alphabet[16] = 'J', the rest '2'.
    let top = MsgId::new(1 << 53, 0, 0);
    assert_eq!(top.to_text(), "J222-2222-2222-2222");
    // The lowest bit: the last symbol is alphabet[1] = '3'.
    assert_eq!(MsgId::new(0, 0, 1).to_text(), "2222-2222-2222-2223");
}

#[test]
fn text_order_is_time_order() {
    let mut prev = MsgId::new(0, 0, 0).to_text();
    let mut counter = 1u64;
    let mut x = 12345u64;
    for _ in 0..20_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        counter += 1 + (x >> 40) % 5000;
        let t = MsgId::new(counter, (x >> 10) as u8 & 15, (x >> 20) as u32).to_text();
        assert!(t > prev, "{t} <= {prev}");
        prev = t;
    }
}

#[test]
fn bad_text_is_refused_with_a_reason() {
    assert_eq!(MsgId::parse("ABC"), Err(MsgIdError::Length(3)));
    assert_eq!(
        MsgId::parse("2222_2222-2222-2222"),
        Err(MsgIdError::Separator(5))
    );
    assert!(matches!(
        MsgId::parse("2222-2222-2222-222O"),
        Err(MsgIdError::Char {
            position: 19,
            ch: 'O'
        })
    ));
    assert!(matches!(
        MsgId::parse("1222-2222-2222-2222"),
        Err(MsgIdError::Char { position: 1, .. })
    ));
    assert!(matches!(
        MsgId::parse("2222-2222-2222-222é"),
        Err(MsgIdError::Char { ch: 'é', .. })
    ));
}

#[test]
fn the_clock_layout_is_42_bits_of_ms_from_1970_and_12_of_sequence() {
    let l = Layout::parse(LAYOUT_SPEC).unwrap();
    assert_eq!((l.unit_ms, l.epoch_ms), (1, 0));
    assert_eq!(l.bits(Field::Time), TIME_BITS);
    assert_eq!(l.bits(Field::Sequence), SEQUENCE_BITS);
    assert_eq!(
        l.bits(Field::Worker)
            + l.bits(Field::Datacenter)
            + l.bits(Field::Rollback)
            + l.bits(Field::Reserved),
        0
    );
    // Lasts until 2109, as RongCloud says.
    assert!(l.years() > 139.0 && l.years() < 140.0);
}
