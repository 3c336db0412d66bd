//! RFC 9562 version 7 UUIDs from a node's clock stream, and their ULID spelling.
//!
//! A UUIDv7 is 48 bits of Unix milliseconds, the version (7), 12 bits `rand_a`, the variant
//! (`10`), and 62 bits `rand_b`. pg_idgen fills them with RFC 9562 section 6.2 method 1, a
//! fixed-length dedicated counter, here 15 bits (all of `rand_a` and the top 3 bits of `rand_b`),
//! and 59 random bits:
//!
//! | bits | field |
//! |---|---|
//! | 48 | `unix_ts_ms`: milliseconds since 1970-01-01 UTC |
//! | 4  | version, 7 |
//! | 12 | counter, high 12 bits (`rand_a`) |
//! | 2  | variant, `10` |
//! | 3  | counter, low 3 bits (top of `rand_b`) |
//! | 59 | random, from a cryptographically secure source |
//!
//! Time and counter are one counter of the node's clock stream (`tick << 15 | sequence`, the
//! same machinery as Snowflake IDs, under a layout of 48 time bits from 1970 and 15 sequence
//! bits), so every UUID of a node sorts above every earlier one, byte for byte as PostgreSQL
//! compares `uuid`, whatever the random bits are. Method 1 rather than method 3 (a sub-millisecond
//! clock fraction, PostgreSQL 18's `uuidv7()`): the counter is what the node's stream already
//! orders across backends, and 32,768 per millisecond is far above what one node can make, so the
//! counter never runs out before the clock moves on.
//!
//! A ULID (<https://github.com/ulid/spec>) is 48 bits of milliseconds and 80 bits of randomness in
//! 26 characters of Crockford's base32; the bits of one of these UUIDs read as a ULID have the
//! same time and the same order, so `ulid_next()` is a UUIDv7 written as a ULID, and the two
//! spellings convert both ways without loss.

use std::fmt;

use super::codec::Base;

/// The node's UUIDv7 clock as a Snowflake layout: 48 bits of ms from 1970, 15 of counter.
pub const LAYOUT_SPEC: &str = "pg_idgen epoch=1970-01-01 time=48 worker=0 sequence=15";
pub const COUNTER_BITS: u32 = 15;
pub const RANDOM_BITS: u32 = 59;
pub const ULID_LEN: usize = 26;

const RANDOM_MASK: u64 = (1 << RANDOM_BITS) - 1;
const VARIANT: u64 = 0b10 << 62;

/// A UUIDv7 of `counter` (`ms << 15 | sequence`) and `random` (its low 59 bits are used).
pub fn compose(counter: u64, random: u64) -> [u8; 16] {
    let ms = counter >> COUNTER_BITS;
    let seq = counter & ((1 << COUNTER_BITS) - 1);
    let hi = (ms << 16) | (7 << 12) | (seq >> 3);
    let lo = VARIANT | ((seq & 0b111) << RANDOM_BITS) | (random & RANDOM_MASK);
    join(hi, lo)
}

/// The smallest UUIDv7 of a millisecond: `WHERE id >= ...` starts a range scan there.
pub fn first_of_ms(ms: u64) -> [u8; 16] {
    join((ms << 16) | (7 << 12), VARIANT)
}

fn join(hi: u64, lo: u64) -> [u8; 16] {
    ((u128::from(hi) << 64) | u128::from(lo)).to_be_bytes()
}

/// The version nibble of any UUID.
pub fn version(bytes: &[u8; 16]) -> u8 {
    bytes[6] >> 4
}

/// Whether the variant bits are RFC 9562's (`10`).
pub fn is_rfc_variant(bytes: &[u8; 16]) -> bool {
    bytes[8] >> 6 == 0b10
}

/// Why a UUID has no UUIDv7 time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotV7 {
    Version(u8),
    Variant,
}

impl fmt::Display for NotV7 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotV7::Version(v) => write!(f, "is a version {v} UUID, not version 7"),
            NotV7::Variant => write!(
                f,
                "has version 7 but not the RFC 9562 variant (10), so its bits are not a UUIDv7's"
            ),
        }
    }
}

/// The millisecond inside a UUIDv7 (any, not only this node's).
pub fn ms_of(bytes: &[u8; 16]) -> Result<u64, NotV7> {
    match version(bytes) {
        7 if is_rfc_variant(bytes) => Ok(u128::from_be_bytes(*bytes) >> 80).map(|ms| ms as u64),
        7 => Err(NotV7::Variant),
        v => Err(NotV7::Version(v)),
    }
}

/// The 26 Crockford base32 characters of 128 bits, high first (the first carries 3 bits).
pub fn to_ulid(bytes: &[u8; 16]) -> String {
    ulid_chars(bytes).iter().map(|&c| c as char).collect()
}

/// The 26 ASCII characters of [`to_ulid`], without allocating.
pub fn ulid_chars(bytes: &[u8; 16]) -> [u8; ULID_LEN] {
    let alphabet = Base::Crockford32.alphabet();
    let v = u128::from_be_bytes(*bytes);
    std::array::from_fn(|i| alphabet[((v >> (5 * (ULID_LEN - 1 - i))) & 31) as usize])
}

/// Why a text is not a ULID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UlidError {
    Length(usize),
    /// A character outside Crockford's base32, at a 1-based position.
    Char {
        position: usize,
        ch: char,
    },
    /// The first character is above 7: more than 128 bits.
    Overflow(char),
}

impl fmt::Display for UlidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UlidError::Length(n) => write!(f, "is {n} characters long; a ULID is 26"),
            UlidError::Char { position, ch } => write!(
                f,
                "has {ch:?} at position {position}, which is not in Crockford's base32 (0-9, A-Z without I, L, O, U; case ignored, O read as 0 and I, L as 1)"
            ),
            UlidError::Overflow(ch) => write!(
                f,
                "starts with {ch:?}: the first character of a ULID is 0 to 7, or it would not fit in 128 bits"
            ),
        }
    }
}

/// The 128 bits of a ULID; case is ignored, and Crockford's aliases (`O` for 0, `I` and `L` for
/// 1) are read as `id_from_text(..., 'crockford32')` reads them.
pub fn from_ulid(text: &str) -> Result<[u8; 16], UlidError> {
    let n = text.chars().count();
    if n != ULID_LEN {
        return Err(UlidError::Length(n));
    }
    let mut v: u128 = 0;
    for (i, ch) in text.chars().enumerate() {
        let d = u8::try_from(ch)
            .ok()
            .and_then(|c| Base::Crockford32.digit(c))
            .ok_or(UlidError::Char {
                position: i + 1,
                ch,
            })?;
        if i == 0 && d > 7 {
            return Err(UlidError::Overflow(ch));
        }
        v = (v << 5) | u128::from(d);
    }
    Ok(v.to_be_bytes())
}

/// The millisecond of a ULID: its first 48 bits.
pub fn ulid_ms(bytes: &[u8; 16]) -> u64 {
    (u128::from_be_bytes(*bytes) >> 80) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;

    #[test]
    fn the_layout_is_48_bits_of_ms_and_the_counter() {
        let l = Layout::parse(LAYOUT_SPEC).unwrap();
        assert_eq!(l.per_tick(), 1 << COUNTER_BITS);
        assert_eq!(l.ticks_limit(), 1 << 48);
        assert_eq!((l.epoch_ms, l.unit_ms), (0, 1));
        assert_eq!(l.tick_of_ms(1_700_000_000_123), Some(1_700_000_000_123));
    }

    #[test]
    fn fields_land_where_rfc_9562_puts_them() {
        let ms = 0x0123_4567_89ab;
        let u = compose(ms << COUNTER_BITS | 0x7fff, u64::MAX);
        // 48 bits of ms, then 7, then the counter's high 12 bits.
        assert_eq!(&u[..6], &[0x01, 0x23, 0x45, 0x67, 0x89, 0xab]);
        assert_eq!(version(&u), 7);
        assert_eq!(u16::from_be_bytes([u[6], u[7]]) & 0x0fff, 0x0fff);
        assert!(is_rfc_variant(&u));
        // variant 10, counter low bits 111, then 59 random ones.
        assert_eq!(u[8], 0b1011_1111);
        assert_eq!(ms_of(&u), Ok(ms));
        let zero = compose(ms << COUNTER_BITS, 0);
        assert_eq!(zero, first_of_ms(ms));
        assert_eq!(&zero[8..], &[0x80, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn byte_order_is_counter_order_whatever_the_random_bits() {
        let mut prev = compose(5 << COUNTER_BITS, u64::MAX);
        for c in (5 << COUNTER_BITS) + 1..(7 << COUNTER_BITS) + 3 {
            let u = compose(c, c.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::MAX);
            assert!(u > prev, "counter {c}");
            assert!(u >= first_of_ms(c >> COUNTER_BITS));
            assert!(to_ulid(&u) > to_ulid(&prev));
            prev = u;
        }
    }

    #[test]
    fn other_uuids_have_no_v7_time() {
        let v4 = *b"\x55\x0e\x84\x00\xe2\x9b\x41\xd4\xa7\x16\x44\x66\x55\x44\x00\x00";
        assert_eq!(ms_of(&v4), Err(NotV7::Version(4)));
        let mut odd = compose(1 << COUNTER_BITS, 0);
        odd[8] &= 0x3f;
        assert_eq!(ms_of(&odd), Err(NotV7::Variant));
    }

    #[test]
    fn ulid_spelling_round_trips_and_matches_the_spec_example() {
        // The spec's example: ulid(1469918176385) starts 01ARYZ6S41.
        let u = from_ulid("01ARYZ6S41TSV4RRFFQ69G5FAV").unwrap();
        assert_eq!(ulid_ms(&u), 1_469_918_176_385);
        assert_eq!(to_ulid(&u), "01ARYZ6S41TSV4RRFFQ69G5FAV");
        assert_eq!(from_ulid("01aryz6s41tsv4rrffq69g5fav"), Ok(u));
        assert_eq!(to_ulid(&[0xff; 16]), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
        assert_eq!(to_ulid(&[0; 16]), "0".repeat(26));
        let v7 = compose(1_469_918_176_385 << COUNTER_BITS | 9, 12345);
        assert_eq!(from_ulid(&to_ulid(&v7)), Ok(v7));
        assert_eq!(ulid_ms(&v7), 1_469_918_176_385);
    }

    #[test]
    fn bad_ulids_say_why() {
        assert_eq!(from_ulid("01ARZ3"), Err(UlidError::Length(6)));
        assert_eq!(
            from_ulid("01ARZ3NDEKTSV4RRFFQ69G5FAU"),
            Err(UlidError::Char {
                position: 26,
                ch: 'U'
            })
        );
        assert_eq!(
            from_ulid("81ARZ3NDEKTSV4RRFFQ69G5FAV"),
            Err(UlidError::Overflow('8'))
        );
        assert!(from_ulid("01ARZ3NDEKTSV4RRFFQ69G5FAÉ").is_err());
    }
}
