//! TypeIDs (the TypeID specification, version 0.3.0): a type prefix, `_`, and a UUID as 26
//! characters of base 32 (`user_01h455vb4pex5vsknk084sn02q`), read and written exactly as the
//! specification says, so that every TypeID library reads ours and we read theirs.
//!
//! - The prefix: empty, or 1 to 63 of `a-z` and `_`, starting and ending with a letter. With an
//!   empty prefix the separator is left out too. A TypeID's prefix is everything before its last
//!   `_` (prefixes may hold `_`).
//! - The suffix: the 128 bits of the UUID with two zero bits in front, 26 groups of 5 bits, high
//!   first, in the alphabet `0123456789abcdefghjkmnpqrstvwxyz` (Crockford's, lower case only,
//!   none of Crockford's lenience: no upper case, no `i l o u` read as digits, no hyphens). So the
//!   first character is at most `7`.
//!
//! The same bits as a ULID's 26 characters ([`crate::uuidv7::ulid_chars`]), in lower case.

use std::fmt;

/// The suffix's length in characters.
pub const SUFFIX_LEN: usize = 26;
/// The longest prefix.
pub const PREFIX_MAX: usize = 63;
/// The longest TypeID: a prefix of 63, `_`, 26.
pub const MAX_LEN: usize = PREFIX_MAX + 1 + SUFFIX_LEN;

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// The value of each byte in the alphabet, 255 for any other.
const VALUES: [u8; 256] = {
    let mut v = [255u8; 256];
    let mut i = 0;
    while i < 32 {
        v[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    v
};

/// Why a prefix or a TypeID is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeIdError {
    /// The prefix is longer than 63 characters.
    PrefixLength(usize),
    /// The prefix holds a character other than `a-z` and `_` (1-based position).
    PrefixChar { position: usize, ch: char },
    /// The prefix starts or ends with `_`.
    PrefixUnderscore,
    /// `_` with nothing before it.
    EmptyPrefixWithSeparator,
    /// The suffix is not 26 characters long.
    SuffixLength(usize),
    /// A character outside the alphabet in the suffix (1-based position in the suffix).
    SuffixChar { position: usize, ch: char },
    /// The suffix's first character is above `7`: more than 128 bits.
    Overflow(char),
}

impl fmt::Display for TypeIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeIdError::PrefixLength(n) => {
                write!(f, "its prefix is {n} characters long; a prefix has at most 63")
            }
            TypeIdError::PrefixChar { position, ch } => write!(
                f,
                "its prefix has {ch:?} at position {position}; a prefix holds only a-z and _"
            ),
            TypeIdError::PrefixUnderscore => {
                write!(f, "its prefix starts or ends with _; a prefix starts and ends with a letter")
            }
            TypeIdError::EmptyPrefixWithSeparator => {
                write!(f, "it starts with _; without a prefix a TypeID is its 26 characters alone")
            }
            TypeIdError::SuffixLength(n) => write!(
                f,
                "its suffix (after the last _) is {n} characters long; a TypeID's suffix is 26"
            ),
            TypeIdError::SuffixChar { position, ch } => write!(
                f,
                "its suffix has {ch:?} at position {position}, which is not in the alphabet 0123456789abcdefghjkmnpqrstvwxyz (lower case)"
            ),
            TypeIdError::Overflow(ch) => write!(
                f,
                "its suffix starts with {ch:?}; the first character is at most 7 (128 bits)"
            ),
        }
    }
}

impl std::error::Error for TypeIdError {}

/// Checks a prefix against the specification.
pub fn check_prefix(prefix: &str) -> Result<(), TypeIdError> {
    let bytes = prefix.as_bytes();
    if prefix.chars().count() > PREFIX_MAX {
        return Err(TypeIdError::PrefixLength(prefix.chars().count()));
    }
    if let Some((i, ch)) = prefix
        .chars()
        .enumerate()
        .find(|(_, c)| !(c.is_ascii_lowercase() || *c == '_'))
    {
        return Err(TypeIdError::PrefixChar {
            position: i + 1,
            ch,
        });
    }
    if bytes.first() == Some(&b'_') || bytes.last() == Some(&b'_') {
        return Err(TypeIdError::PrefixUnderscore);
    }
    Ok(())
}

/// The 26 characters of a UUID's bits.
pub fn suffix(bytes: &[u8; 16]) -> [u8; SUFFIX_LEN] {
    let v = u128::from_be_bytes(*bytes);
    std::array::from_fn(|i| ALPHABET[((v >> (5 * (SUFFIX_LEN - 1 - i))) & 31) as usize])
}

/// The TypeID of a prefix (checked first) and a UUID's bits, written into `out`; its length.
pub fn encode_into(
    prefix: &str,
    bytes: &[u8; 16],
    out: &mut [u8; MAX_LEN],
) -> Result<usize, TypeIdError> {
    check_prefix(prefix)?;
    let mut n = 0;
    if !prefix.is_empty() {
        out[..prefix.len()].copy_from_slice(prefix.as_bytes());
        out[prefix.len()] = b'_';
        n = prefix.len() + 1;
    }
    out[n..n + SUFFIX_LEN].copy_from_slice(&suffix(bytes));
    Ok(n + SUFFIX_LEN)
}

/// The TypeID of a prefix and a UUID's bits.
pub fn encode(prefix: &str, bytes: &[u8; 16]) -> Result<String, TypeIdError> {
    let mut out = [0u8; MAX_LEN];
    let n = encode_into(prefix, bytes, &mut out)?;
    // Only ASCII was written.
    Ok(String::from_utf8_lossy(&out[..n]).into_owned())
}

/// A TypeID's prefix and its UUID's bits.
pub fn decode(text: &str) -> Result<(&str, [u8; 16]), TypeIdError> {
    let (prefix, suffix) = match text.rfind('_') {
        Some(0) => return Err(TypeIdError::EmptyPrefixWithSeparator),
        Some(i) => (&text[..i], &text[i + 1..]),
        None => ("", text),
    };
    check_prefix(prefix)?;
    let chars = suffix.as_bytes();
    if suffix.chars().count() != SUFFIX_LEN || chars.len() != SUFFIX_LEN {
        return Err(TypeIdError::SuffixLength(suffix.chars().count()));
    }
    let mut v: u128 = 0;
    for (i, &c) in chars.iter().enumerate() {
        let d = VALUES[c as usize];
        if d == 255 {
            return Err(TypeIdError::SuffixChar {
                position: i + 1,
                ch: c as char,
            });
        }
        if i == 0 && d > 7 {
            return Err(TypeIdError::Overflow(c as char));
        }
        v = (v << 5) | u128::from(d);
    }
    Ok((prefix, v.to_be_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuid(hex: &str) -> [u8; 16] {
        u128::from_str_radix(&hex.replace('-', ""), 16)
            .unwrap()
            .to_be_bytes()
    }

    /// The specification's valid examples (spec/valid.yml of jetify-com/typeid, version 0.3.0,
    /// written here as data): each decodes to its prefix and UUID, and encodes back.
    const VALID: &[(&str, &str, &str)] = &[
        (
            "00000000000000000000000000",
            "",
            "00000000-0000-0000-0000-000000000000",
        ),
        (
            "00000000000000000000000001",
            "",
            "00000000-0000-0000-0000-000000000001",
        ),
        (
            "0000000000000000000000000a",
            "",
            "00000000-0000-0000-0000-00000000000a",
        ),
        (
            "0000000000000000000000000g",
            "",
            "00000000-0000-0000-0000-000000000010",
        ),
        (
            "00000000000000000000000010",
            "",
            "00000000-0000-0000-0000-000000000020",
        ),
        (
            "7zzzzzzzzzzzzzzzzzzzzzzzzz",
            "",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
        ),
        (
            "prefix_0123456789abcdefghjkmnpqrs",
            "prefix",
            "0110c853-1d09-52d8-d73e-1194e95b5f19",
        ),
        (
            "prefix_01h455vb4pex5vsknk084sn02q",
            "prefix",
            "01890a5d-ac96-774b-bcce-b302099a8057",
        ),
        (
            "pre_fix_00000000000000000000000000",
            "pre_fix",
            "00000000-0000-0000-0000-000000000000",
        ),
    ];

    /// The specification's invalid examples (spec/invalid.yml, version 0.3.0): every one refused.
    const INVALID: &[&str] = &[
        "PREFIX_00000000000000000000000000",
        "12345_00000000000000000000000000",
        "pre.fix_00000000000000000000000000",
        "préfix_00000000000000000000000000",
        "  prefix_00000000000000000000000000",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl_00000000000000000000000000",
        "_00000000000000000000000000",
        "_",
        "prefix_1234567890123456789012345",
        "prefix_123456789012345678901234567",
        "prefix_1234567890123456789012345 ",
        "prefix_0123456789ABCDEFGHJKMNPQRS",
        "prefix_123456789-123456789-123456",
        "prefix_ooooooiiiiiiuuuuuuulllllll",
        "prefix_i23456789ol23456789oi23456",
        "prefix_123456789-0123456789-0123456",
        "prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz",
        "_prefix_00000000000000000000000000",
        "prefix__00000000000000000000000000",
        "",
        "prefix_",
    ];

    #[test]
    fn the_specifications_valid_examples_read_and_write() {
        for (text, prefix, hex) in VALID {
            let (p, bytes) = decode(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((p, bytes), (*prefix, uuid(hex)), "{text}");
            assert_eq!(encode(prefix, &uuid(hex)).unwrap(), *text);
        }
    }

    #[test]
    fn the_specifications_invalid_examples_are_refused() {
        for text in INVALID {
            assert!(decode(text).is_err(), "{text:?} was read");
        }
    }

    #[test]
    fn random_bits_and_prefixes_go_round() {
        let mut x: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
        let longest = "z".repeat(63);
        for i in 0..10_000u32 {
            x = x
                .wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645)
                .wrapping_add(u128::from(i));
            let prefix = ["", "a", "user", "pre_fix", longest.as_str()][(i % 5) as usize];
            let text = encode(prefix, &x.to_be_bytes()).unwrap();
            assert_eq!(decode(&text).unwrap(), (prefix, x.to_be_bytes()));
            // The same bits as a ULID's characters, in lower case.
            assert!(text.ends_with(
                &String::from_utf8(crate::uuidv7::ulid_chars(&x.to_be_bytes()).to_vec())
                    .unwrap()
                    .to_lowercase()
            ));
        }
    }

    #[test]
    fn prefixes_are_checked_when_written() {
        assert_eq!(
            check_prefix(&"a".repeat(64)),
            Err(TypeIdError::PrefixLength(64))
        );
        assert_eq!(
            check_prefix("User"),
            Err(TypeIdError::PrefixChar {
                position: 1,
                ch: 'U'
            })
        );
        assert_eq!(check_prefix("user_"), Err(TypeIdError::PrefixUnderscore));
        assert!(check_prefix("").is_ok() && check_prefix("a_b").is_ok());
    }
}
