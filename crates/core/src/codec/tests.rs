use super::*;

/// A small deterministic generator (SplitMix64), so failures reproduce.
fn randoms(seed: u64, n: usize) -> Vec<i64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as i64
        })
        .collect()
}

#[test]
fn widths_hold_any_64_bit_value() {
    let widths: Vec<_> = BASES.iter().map(|b| (b.name(), b.width())).collect();
    assert_eq!(
        widths,
        vec![
            ("base32", 13),
            ("crockford32", 13),
            ("base36", 13),
            ("base58", 11),
            ("base62", 11),
            ("hex", 16)
        ]
    );
}

#[test]
fn alphabets_are_in_ascending_byte_order_and_distinct() {
    for b in BASES {
        let a = b.alphabet();
        assert!(a.windows(2).all(|w| w[0] < w[1]), "{}", b.name());
        assert_eq!(a.len() as u64, b.radix());
    }
    assert!(!MSG_ALPHABET.contains(&b'I') && !MSG_ALPHABET.contains(&b'O'));
    assert!(!MSG_ALPHABET.contains(&b'0') && !MSG_ALPHABET.contains(&b'1'));
}

#[test]
fn edge_values_round_trip() {
    for b in BASES {
        for id in [
            0,
            1,
            2,
            31,
            32,
            1 << 40,
            i64::MAX - 1,
            i64::MAX,
            -1,
            i64::MIN,
        ] {
            let t = encode(id, b);
            assert_eq!(t.len(), b.width(), "{} {id}", b.name());
            assert_eq!(decode(&t, b), Ok(id), "{} {id} {t}", b.name());
        }
    }
    assert_eq!(encode(0, Base::Hex), "0000000000000000");
    assert_eq!(encode(i64::MAX, Base::Hex), "7fffffffffffffff");
    assert_eq!(encode(0, Base::Base32), "2222222222222");
    assert_eq!(encode(1, Base::Base58), "11111111112");
    assert_eq!(encode(61, Base::Base62), "0000000000z");
}

#[test]
fn random_values_round_trip_in_every_base() {
    for b in BASES {
        for id in randoms(7, 20_000) {
            assert_eq!(decode(&encode(id, b), b), Ok(id));
        }
    }
}

#[test]
fn text_order_is_numeric_order_for_non_negative_ids() {
    for b in BASES {
        let ids: Vec<i64> = randoms(11, 20_001)
            .into_iter()
            .map(|x| x & i64::MAX)
            .collect();
        for pair in ids.windows(2) {
            let (x, y) = (pair[0], pair[1]);
            assert_eq!(
                x.cmp(&y),
                encode(x, b).cmp(&encode(y, b)),
                "{} {x} {y}",
                b.name()
            );
        }
        // Neighbours too, where one carry changes many digits.
        for x in [0i64, 57, 61, 1 << 35, i64::MAX - 1] {
            assert!(encode(x, b) < encode(x + 1, b));
        }
    }
}

#[test]
fn bad_text_is_refused_with_a_reason() {
    assert_eq!(
        decode("abc", Base::Hex),
        Err(DecodeError::Length { got: 3, want: 16 })
    );
    assert_eq!(
        decode("000000000000000g", Base::Hex),
        Err(DecodeError::Char {
            position: 16,
            ch: 'g'
        })
    );
    // 0, 1, I and O are not in the message-ID alphabet (they are easily misread).
    assert!(matches!(
        decode("2222222222220", Base::Base32),
        Err(DecodeError::Char { position: 13, .. })
    ));
    assert!(matches!(
        decode("22222222222é2", Base::Base32),
        Err(DecodeError::Char { ch: 'é', .. })
    ));
    // The widths hold more than 64 bits: the excess is an overflow, not a wrap.
    assert_eq!(
        decode("ZZZZZZZZZZZZZ", Base::Base32),
        Err(DecodeError::Overflow)
    );
    assert_eq!(
        decode("zzzzzzzzzzz", Base::Base62),
        Err(DecodeError::Overflow)
    );
    assert_eq!(
        decode("zzzzzzzzzzzzz", Base::Base36),
        Err(DecodeError::Overflow)
    );
    assert_eq!(
        decode("zzzzzzzzzzz", Base::Base58),
        Err(DecodeError::Overflow)
    );
    // Exactly 2^64 - 1 is the largest that decodes (to -1).
    assert_eq!(decode("ffffffffffffffff", Base::Hex), Ok(-1));
}

#[test]
fn case_and_crockford_aliases() {
    let id = 0x1234_5678_9abc_def0;
    assert_eq!(
        decode(&encode(id, Base::Hex).to_uppercase(), Base::Hex),
        Ok(id)
    );
    assert_eq!(
        decode(&encode(id, Base::Base36).to_uppercase(), Base::Base36),
        Ok(id)
    );
    assert_eq!(
        decode(&encode(id, Base::Base32).to_lowercase(), Base::Base32),
        Ok(id)
    );
    assert_eq!(decode("000000000000O", Base::Crockford32), Ok(0));
    assert_eq!(decode("000000000000l", Base::Crockford32), Ok(1));
    assert_eq!(decode("000000000000I", Base::Crockford32), Ok(1));
    // base62 and base58 are case-sensitive: 'a' and 'A' are different digits.
    assert_ne!(
        decode("0000000000a", Base::Base62),
        decode("0000000000A", Base::Base62)
    );
}

#[test]
fn names() {
    assert_eq!(Base::parse("BASE62"), Some(Base::Base62));
    assert_eq!(Base::parse("base16"), Some(Base::Hex));
    assert_eq!(Base::parse(" hex "), Some(Base::Hex));
    assert_eq!(Base::parse("base64"), None);
}
