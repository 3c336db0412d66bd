//! Public IDs: keyed, reversible permutations of IDs (FF1 over AES, [`crate::ff1`]), so that
//! the database keeps its ordered keys and the world sees ciphertext.
//!
//! The domains, each an FF1 domain of radix 2 under the key:
//! - `bigint` to `bigint`: all 64 bits (two's complement), no tweak;
//! - the JavaScript-safe `bigint`s, 0 to 2^53 - 1, to themselves: 53 bits, no tweak;
//! - a UUIDv7 to a UUID with the version-4 and RFC 9562 variant bits: its 122 other bits, no
//!   tweak;
//! - text: `prefix_` (when the key has a prefix), two characters of key version, then the
//!   ciphertext of the value followed by zero bits, in lower-case Crockford base 32. A `bigint`
//!   is 64 bits and 36 zero bits (20 characters), a UUIDv7 its 122 bits and 38 zero bits (32
//!   characters). The tweak is the prefix and the version, so a string decrypts only under its
//!   own prefix and version, and the zero bits come back only from an intact string: a damaged
//!   or foreign string is refused (a random one passes with probability 2^-36), never read as
//!   another number.

use crate::ff1::{Domain, Ff1, Ff1Error};

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
/// The check bits below the value in the text forms.
const CHECK_ID: u32 = 36;
const CHECK_UUID: u32 = 38;
pub const ID_CHARS: usize = 20;
pub const UUID_CHARS: usize = 32;
pub const MAX_VERSION: u16 = 1023;
pub const MAX_PREFIX: usize = 16;
pub const JS_SAFE_MAX: i64 = (1 << 53) - 1;

/// Why a value or a string was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicIdError {
    /// The 53-bit form takes 0 to 2^53 - 1.
    NotJsSafe,
    /// Encryption takes a UUIDv7 (version 7, RFC 9562 variant).
    NotUuidV7,
    /// Decryption takes what encryption makes: version 4, RFC 9562 variant.
    NotUuidV4,
    /// A text form without the key's prefix (or with one where the key has none).
    WrongPrefix,
    /// Not the length of the form asked for.
    Length,
    /// A character outside the alphabet.
    Character,
    /// A key version no key has (or 0).
    Version,
    /// The check bits are not zero: the string was damaged, or made with another key.
    Check,
}

impl std::fmt::Display for PublicIdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PublicIdError::NotJsSafe => {
                "the JavaScript-safe form takes IDs from 0 to 9007199254740991 (2^53 - 1)"
            }
            PublicIdError::NotUuidV7 => "not a UUIDv7 (version 7, RFC 9562 variant)",
            PublicIdError::NotUuidV4 => "not an encrypted UUID (version 4, RFC 9562 variant)",
            PublicIdError::WrongPrefix => "the public ID does not have this key's prefix",
            PublicIdError::Length => "the public ID does not have the length of this form",
            PublicIdError::Character => "the public ID has a character outside its alphabet",
            PublicIdError::Version => "the public ID names no version of this key",
            PublicIdError::Check => "the public ID is damaged or was made with another key",
        })
    }
}

/// Is `prefix` a valid prefix: empty, or 1 to 16 of `a-z` and `0-9`, starting with a letter.
pub fn valid_prefix(prefix: &str) -> bool {
    prefix.is_empty()
        || (prefix.len() <= MAX_PREFIX
            && prefix.as_bytes()[0].is_ascii_lowercase()
            && prefix
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}

/// One version of a named key, with its domains ready.
#[derive(Clone)]
pub struct PublicKey {
    ff: Ff1,
    version: u16,
    prefix: String,
    d64: Domain,
    d53: Domain,
    d122: Domain,
    text_id: Domain,
    text_uuid: Domain,
}

fn text_tweak(prefix: &str, version: u16) -> Vec<u8> {
    let mut t = prefix.as_bytes().to_vec();
    t.push(0);
    t.extend_from_slice(&version.to_be_bytes());
    t
}

/// The 122 bits of a UUID other than its version and variant.
fn payload(u: u128) -> u128 {
    ((u >> 80) << 74) | (((u >> 64) & 0xfff) << 62) | (u & ((1 << 62) - 1))
}

fn with_version(p: u128, version: u128) -> u128 {
    ((p >> 74) << 80)
        | (version << 76)
        | (((p >> 62) & 0xfff) << 64)
        | (0b10 << 62)
        | (p & ((1 << 62) - 1))
}

fn uuid_version(u: u128) -> Option<u128> {
    ((u >> 62) & 0b11 == 0b10).then_some((u >> 76) & 0xf)
}

/// `chars` base-32 characters of `x`, most significant first.
fn encode(x: u128, chars: usize, out: &mut String) {
    out.extend(
        (0..chars)
            .rev()
            .map(|i| ALPHABET[((x >> (5 * i)) & 31) as usize] as char),
    );
}

fn digit(c: u8) -> Option<u128> {
    let c = c.to_ascii_lowercase();
    ALPHABET.iter().position(|&a| a == c).map(|p| p as u128)
}

/// The value of a string of base-32 characters, most significant first (at most 25 of them).
fn decode(s: &[u8]) -> Result<u128, PublicIdError> {
    s.iter().try_fold(0u128, |acc, &c| {
        Ok((acc << 5) | digit(c).ok_or(PublicIdError::Character)?)
    })
}

/// A text form taken apart: its prefix, key version and ciphertext characters. Which key's
/// version to use is the caller's lookup; [`PublicKey::text_to_id`] and
/// [`PublicKey::text_to_uuid`] then check the rest.
pub struct ParsedText<'a> {
    pub prefix: &'a str,
    pub version: u16,
    body: &'a [u8],
}

/// Splits a text form. The prefix is what stands before the last `_` (none without one).
pub fn parse_text(s: &str) -> Result<ParsedText<'_>, PublicIdError> {
    let (prefix, rest) = match s.rfind('_') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => ("", s),
    };
    let rest = rest.as_bytes();
    if rest.len() < 3 {
        return Err(PublicIdError::Length);
    }
    let version = decode(&rest[..2])? as u16;
    if version == 0 {
        return Err(PublicIdError::Version);
    }
    Ok(ParsedText {
        prefix,
        version,
        body: &rest[2..],
    })
}

impl PublicKey {
    /// `key` is 16, 24 or 32 bytes of AES key; `prefix` passed [`valid_prefix`]; `version` is 1
    /// to [`MAX_VERSION`].
    pub fn new(key: &[u8], prefix: &str, version: u16) -> Result<PublicKey, Ff1Error> {
        let ff = Ff1::new(key)?;
        let tweak = text_tweak(prefix, version);
        Ok(PublicKey {
            d64: ff.domain(2, 64, b"")?,
            d53: ff.domain(2, 53, b"")?,
            d122: ff.domain(2, 122, b"")?,
            text_id: ff.domain(2, 64 + CHECK_ID as usize, &tweak)?,
            text_uuid: ff.domain(2, 122 + CHECK_UUID as usize, &tweak)?,
            ff,
            version,
            prefix: prefix.to_string(),
        })
    }

    pub fn version(&self) -> u16 {
        self.version
    }

    /// Any `bigint` to a `bigint`: a permutation of all 2^64.
    pub fn encrypt_id(&self, x: i64) -> i64 {
        self.d64.encrypt_bits(&self.ff, x as u64 as u128) as u64 as i64
    }

    pub fn decrypt_id(&self, x: i64) -> i64 {
        self.d64.decrypt_bits(&self.ff, x as u64 as u128) as u64 as i64
    }

    /// 0 to 2^53 - 1 to itself.
    pub fn encrypt_js_safe(&self, x: i64) -> Result<i64, PublicIdError> {
        if !(0..=JS_SAFE_MAX).contains(&x) {
            return Err(PublicIdError::NotJsSafe);
        }
        Ok(self.d53.encrypt_bits(&self.ff, x as u128) as i64)
    }

    pub fn decrypt_js_safe(&self, x: i64) -> Result<i64, PublicIdError> {
        if !(0..=JS_SAFE_MAX).contains(&x) {
            return Err(PublicIdError::NotJsSafe);
        }
        Ok(self.d53.decrypt_bits(&self.ff, x as u128) as i64)
    }

    /// A UUIDv7 (as a big-endian 128-bit number) to a UUID with version 4.
    pub fn encrypt_uuid(&self, u: u128) -> Result<u128, PublicIdError> {
        if uuid_version(u) != Some(7) {
            return Err(PublicIdError::NotUuidV7);
        }
        Ok(with_version(
            self.d122.encrypt_bits(&self.ff, payload(u)),
            4,
        ))
    }

    pub fn decrypt_uuid(&self, u: u128) -> Result<u128, PublicIdError> {
        if uuid_version(u) != Some(4) {
            return Err(PublicIdError::NotUuidV4);
        }
        Ok(with_version(
            self.d122.decrypt_bits(&self.ff, payload(u)),
            7,
        ))
    }

    fn head(&self, chars: usize) -> String {
        let mut s = String::with_capacity(self.prefix.len() + 3 + chars);
        if !self.prefix.is_empty() {
            s.push_str(&self.prefix);
            s.push('_');
        }
        encode(self.version as u128, 2, &mut s);
        s
    }

    /// The text form of a `bigint`: fixed length (20 characters after prefix and version).
    pub fn id_to_text(&self, x: i64) -> String {
        let mut s = self.head(ID_CHARS);
        encode(
            self.text_id
                .encrypt_bits(&self.ff, (x as u64 as u128) << CHECK_ID),
            ID_CHARS,
            &mut s,
        );
        s
    }

    /// The text form of a UUIDv7 (32 characters after prefix and version); its 160 bits are
    /// more than one `u128`, so they go through FF1 as two halves of 80 bits.
    pub fn uuid_to_text(&self, u: u128) -> Result<String, PublicIdError> {
        if uuid_version(u) != Some(7) {
            return Err(PublicIdError::NotUuidV7);
        }
        // The 160-bit numeral string payload || 0^38: the halves are its first and last 80 bits.
        let p = payload(u);
        let (a, b) = (p >> 42, (p & ((1 << 42) - 1)) << CHECK_UUID);
        let (a, b) = self.text_uuid.encrypt_halves(&self.ff, a, b);
        let mut s = self.head(UUID_CHARS);
        encode(a, 16, &mut s);
        encode(b, 16, &mut s);
        Ok(s)
    }

    /// What can be said of a text form before the key of its version is looked up: this key's
    /// prefix (in either case, as the ciphertext), and the length and alphabet of the form
    /// (`ID_CHARS` or `UUID_CHARS` characters). A version is the same key's in every version.
    pub fn check_form(&self, parsed: &ParsedText<'_>, chars: usize) -> Result<(), PublicIdError> {
        if !parsed.prefix.eq_ignore_ascii_case(&self.prefix) {
            return Err(PublicIdError::WrongPrefix);
        }
        if parsed.body.len() != chars {
            return Err(PublicIdError::Length);
        }
        if parsed.body.iter().any(|c| digit(*c).is_none()) {
            return Err(PublicIdError::Character);
        }
        Ok(())
    }

    fn check_prefix(&self, parsed: &ParsedText<'_>) -> Result<(), PublicIdError> {
        if !parsed.prefix.eq_ignore_ascii_case(&self.prefix) {
            return Err(PublicIdError::WrongPrefix);
        }
        if parsed.version != self.version {
            return Err(PublicIdError::Version);
        }
        Ok(())
    }

    /// Back from [`PublicKey::id_to_text`]; `parsed` names this key's version.
    pub fn text_to_id(&self, parsed: &ParsedText<'_>) -> Result<i64, PublicIdError> {
        self.check_prefix(parsed)?;
        if parsed.body.len() != ID_CHARS {
            return Err(PublicIdError::Length);
        }
        let c = decode(parsed.body)?;
        let x = self.text_id.decrypt_bits(&self.ff, c);
        if x & ((1 << CHECK_ID) - 1) != 0 {
            return Err(PublicIdError::Check);
        }
        Ok((x >> CHECK_ID) as u64 as i64)
    }

    /// Back from [`PublicKey::uuid_to_text`].
    pub fn text_to_uuid(&self, parsed: &ParsedText<'_>) -> Result<u128, PublicIdError> {
        self.check_prefix(parsed)?;
        if parsed.body.len() != UUID_CHARS {
            return Err(PublicIdError::Length);
        }
        let (a, b) = (decode(&parsed.body[..16])?, decode(&parsed.body[16..])?);
        let (a, b) = self.text_uuid.decrypt_halves(&self.ff, a, b);
        if b & ((1 << CHECK_UUID) - 1) != 0 {
            return Err(PublicIdError::Check);
        }
        Ok(with_version((a << 42) | (b >> CHECK_UUID), 7))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(prefix: &str, version: u16) -> PublicKey {
        PublicKey::new(&[7u8; 32], prefix, version).unwrap()
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn uuidv7(&mut self) -> u128 {
            with_version(
                payload(((self.next() as u128) << 64) | self.next() as u128),
                7,
            )
        }
    }

    #[test]
    fn round_trips() {
        let k = key("inv", 3);
        let mut r = Rng(1);
        for _ in 0..20_000 {
            let x = r.next() as i64;
            assert_eq!(k.decrypt_id(k.encrypt_id(x)), x);
            let j = x & JS_SAFE_MAX;
            let e = k.encrypt_js_safe(j).unwrap();
            assert!((0..=JS_SAFE_MAX).contains(&e));
            assert_eq!(k.decrypt_js_safe(e).unwrap(), j);
            let u = r.uuidv7();
            let e = k.encrypt_uuid(u).unwrap();
            assert_eq!(uuid_version(e), Some(4));
            assert_eq!(k.decrypt_uuid(e).unwrap(), u);
            let t = k.id_to_text(x);
            assert!(
                t.starts_with("inv_03") && t.len() == 4 + 2 + ID_CHARS,
                "{t}"
            );
            assert_eq!(k.text_to_id(&parse_text(&t).unwrap()).unwrap(), x);
            let t = k.uuid_to_text(u).unwrap();
            assert_eq!(t.len(), 4 + 2 + UUID_CHARS);
            assert_eq!(k.text_to_uuid(&parse_text(&t).unwrap()).unwrap(), u);
        }
    }

    /// Ten million values per form (the volume tests/system/public_ids.sh used to send through
    /// SQL, five minutes there): each comes back, stays in its form's range (JavaScript-safe
    /// numbers; version 4 UUIDs; text of one length), and distinct inputs give distinct outputs.
    /// Ignored by plain `cargo test` (a minute in a debug build); the test command runs it in a
    /// release build (`--include-ignored`), on both cores.
    #[test]
    #[ignore]
    fn ten_million_round_trips_per_form() {
        const N: u64 = 10_000_000;
        let k = key("inv", 3);
        let halves: Vec<[Vec<u128>; 5]> = std::thread::scope(|s| {
            let k = &k;
            let parts: Vec<_> = (0..2u64)
                .map(|part| {
                    s.spawn(move || {
                        let mut r = Rng(0x9E37_79B9_7F4A_7C15 ^ (part + 1));
                        let mut out: [Vec<u128>; 5] = Default::default();
                        for _ in 0..N / 2 {
                            let x = r.next() as i64;
                            let e = k.encrypt_id(x);
                            assert_eq!(k.decrypt_id(e), x);
                            out[0].push(e as u64 as u128);
                            let j = x & JS_SAFE_MAX;
                            let e = k.encrypt_js_safe(j).unwrap();
                            assert!((0..=JS_SAFE_MAX).contains(&e), "{e}");
                            assert_eq!(k.decrypt_js_safe(e).unwrap(), j);
                            out[1].push(e as u128);
                            let u = r.uuidv7();
                            let e = k.encrypt_uuid(u).unwrap();
                            assert_eq!(uuid_version(e), Some(4));
                            assert_eq!((e >> 62) & 3, 2, "the RFC variant");
                            assert_eq!(k.decrypt_uuid(e).unwrap(), u);
                            out[2].push(e);
                            let t = k.id_to_text(x);
                            assert_eq!(t.len(), 4 + 2 + ID_CHARS, "{t}");
                            assert_eq!(k.text_to_id(&parse_text(&t).unwrap()).unwrap(), x);
                            let t = k.uuid_to_text(u).unwrap();
                            assert_eq!(t.len(), 4 + 2 + UUID_CHARS, "{t}");
                            assert_eq!(k.text_to_uuid(&parse_text(&t).unwrap()).unwrap(), u);
                            // Inputs, to count the distinct ones (the generator may repeat).
                            out[3].push(x as u64 as u128);
                            out[4].push(u);
                        }
                        out
                    })
                })
                .collect();
            parts.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let distinct = |i: usize| {
            let mut v: Vec<u128> = halves.iter().flat_map(|h| h[i].iter().copied()).collect();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        let (ids, uuids) = (distinct(3), distinct(4));
        assert!(ids > 9_999_000 && uuids > 9_999_000, "{ids} {uuids}");
        assert_eq!(distinct(0), ids, "distinct bigints, distinct outputs");
        assert_eq!(distinct(2), uuids, "distinct UUIDs, distinct outputs");
        // The JavaScript-safe inputs are the bigints' low 53 bits: as many distinct outputs as those.
        let js_in = {
            let mut v: Vec<u128> = halves
                .iter()
                .flat_map(|h| h[3].iter().map(|&x| x & JS_SAFE_MAX as u128))
                .collect();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        assert_eq!(distinct(1), js_in);
    }

    #[test]
    fn refusals() {
        let k = key("inv", 1);
        assert_eq!(k.encrypt_js_safe(-1), Err(PublicIdError::NotJsSafe));
        assert_eq!(
            k.encrypt_js_safe(JS_SAFE_MAX + 1),
            Err(PublicIdError::NotJsSafe)
        );
        let v4 = with_version(12345, 4);
        assert_eq!(k.encrypt_uuid(v4), Err(PublicIdError::NotUuidV7));
        assert_eq!(
            k.decrypt_uuid(with_version(12345, 7)),
            Err(PublicIdError::NotUuidV4)
        );
        assert_eq!(k.encrypt_uuid(0), Err(PublicIdError::NotUuidV7), "nil UUID");
        let t = k.id_to_text(42);
        // Another prefix, no prefix, another key's version, a changed character, a cut string.
        let other = key("usr", 1);
        assert_eq!(
            other.text_to_id(&parse_text(&t).unwrap()),
            Err(PublicIdError::WrongPrefix)
        );
        assert_eq!(
            key("", 1).text_to_id(&parse_text(&t[4..]).unwrap()),
            Err(PublicIdError::Check)
        );
        let t2 = key("inv", 2).id_to_text(42);
        assert_eq!(
            k.text_to_id(&parse_text(&t2).unwrap()),
            Err(PublicIdError::Version)
        );
        let mut damaged = t.clone().into_bytes();
        let last = damaged.len() - 1;
        damaged[last] = if damaged[last] == b'0' { b'1' } else { b'0' };
        let damaged = String::from_utf8(damaged).unwrap();
        assert_eq!(
            k.text_to_id(&parse_text(&damaged).unwrap()),
            Err(PublicIdError::Check)
        );
        assert_eq!(
            k.text_to_id(&parse_text(&t[..t.len() - 1]).unwrap()),
            Err(PublicIdError::Length)
        );
        let bang = format!("{}!", &t[..t.len() - 1]);
        assert_eq!(
            k.text_to_id(&parse_text(&bang).unwrap()),
            Err(PublicIdError::Character)
        );
        assert!(matches!(
            parse_text("inv_!1abc"),
            Err(PublicIdError::Character)
        ));
        assert!(matches!(
            parse_text("inv_00abc"),
            Err(PublicIdError::Version)
        ));
        // Upper case is the same string, prefix included.
        assert_eq!(
            k.text_to_id(&parse_text(&t.to_uppercase()).unwrap()),
            Ok(42)
        );
        // The form's shape, before any version is looked up: prefix, length, alphabet.
        let parsed = parse_text(&t).unwrap();
        assert_eq!(k.check_form(&parsed, ID_CHARS), Ok(()));
        assert_eq!(
            k.check_form(&parse_text(&t.to_uppercase()).unwrap(), ID_CHARS),
            Ok(())
        );
        assert_eq!(
            k.check_form(&parsed, UUID_CHARS),
            Err(PublicIdError::Length)
        );
        assert_eq!(
            other.check_form(&parsed, ID_CHARS),
            Err(PublicIdError::WrongPrefix)
        );
        assert_eq!(
            key("", 1).check_form(&parse_text("hello world").unwrap(), ID_CHARS),
            Err(PublicIdError::Length)
        );
        let spaced = format!("{} {}", &t[..10], &t[11..]);
        assert_eq!(
            k.check_form(&parse_text(&spaced).unwrap(), ID_CHARS),
            Err(PublicIdError::Character)
        );
        // The same key with another prefix makes other strings.
        assert_ne!(key("usr", 1).id_to_text(42)[4..], t[4..]);
    }

    /// Every damaged character of a text form is refused (one changed character changes the
    /// whole ciphertext's decryption, so the check bits catch it but for 2^-36).
    #[test]
    fn every_single_change_is_refused() {
        let k = key("", 1);
        let t = k.id_to_text(123_456_789);
        for i in 2..t.len() {
            for &c in ALPHABET {
                let mut b = t.clone().into_bytes();
                if b[i] == c {
                    continue;
                }
                b[i] = c;
                let s = String::from_utf8(b).unwrap();
                assert_eq!(
                    k.text_to_id(&parse_text(&s).unwrap()),
                    Err(PublicIdError::Check),
                    "{s}"
                );
            }
        }
    }

    #[test]
    fn prefixes() {
        assert!(
            valid_prefix("")
                && valid_prefix("inv")
                && valid_prefix("a1")
                && valid_prefix("abcdefghijklmnop")
        );
        assert!(
            !valid_prefix("1a")
                && !valid_prefix("Inv")
                && !valid_prefix("in_v")
                && !valid_prefix("abcdefghijklmnopq")
        );
    }

    /// Consecutive IDs encrypt to values in no visible order: about half of the neighbours
    /// increase (the statistical check of the SQL tests is on 1M values; this is a quick one).
    #[test]
    fn no_visible_order() {
        let k = key("", 1);
        let base = 7_000_000_000_000_000_000i64;
        let out: Vec<i64> = (0..100_000).map(|i| k.encrypt_id(base + i)).collect();
        let up = out.windows(2).filter(|w| w[1] > w[0]).count() as f64 / (out.len() - 1) as f64;
        assert!((up - 0.5).abs() < 0.01, "{up}");
    }
}
