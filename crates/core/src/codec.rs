//! Fixed-width, order-preserving text forms of 64-bit IDs (`id_to_text` / `id_from_text`).
//!
//! Every alphabet below is in ascending ASCII order and every form is left-padded to one width
//! per base, so for non-negative IDs byte order of the text (`COLLATE "C"`) is numeric order.
//! The width holds any 64-bit pattern, so every bigint round-trips exactly: a negative one is
//! written as its two's-complement bits and sorts after all non-negative ones.

use std::fmt;

/// RongCloud's 32 symbols: `2`-`9` and `A`-`Z` without `I` and `O`.
pub const MSG_ALPHABET: &[u8; 32] = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ";
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE36: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
const BASE58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const HEX: &[u8; 16] = b"0123456789abcdef";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    Base32,
    Crockford32,
    Base36,
    Base58,
    Base62,
    Hex,
}

pub const BASES: [Base; 6] = [
    Base::Base32,
    Base::Crockford32,
    Base::Base36,
    Base::Base58,
    Base::Base62,
    Base::Hex,
];

impl Base {
    /// By name, ignoring case; `base16` is another name for `hex`.
    pub fn parse(name: &str) -> Option<Base> {
        let name = name.trim().to_ascii_lowercase();
        BASES
            .into_iter()
            .find(|b| b.name() == name)
            .or((name == "base16").then_some(Base::Hex))
    }

    pub fn name(self) -> &'static str {
        match self {
            Base::Base32 => "base32",
            Base::Crockford32 => "crockford32",
            Base::Base36 => "base36",
            Base::Base58 => "base58",
            Base::Base62 => "base62",
            Base::Hex => "hex",
        }
    }

    pub fn alphabet(self) -> &'static [u8] {
        match self {
            Base::Base32 => MSG_ALPHABET,
            Base::Crockford32 => CROCKFORD,
            Base::Base36 => BASE36,
            Base::Base58 => BASE58,
            Base::Base62 => BASE62,
            Base::Hex => HEX,
        }
    }

    pub fn radix(self) -> u64 {
        self.alphabet().len() as u64
    }

    /// Characters of every encoded ID: the fewest that hold any 64-bit value.
    pub fn width(self) -> usize {
        let mut w = 0;
        let mut cap: u128 = 1;
        while cap <= u64::MAX as u128 {
            cap *= self.radix() as u128;
            w += 1;
        }
        w
    }

    /// The value of one character. Case is ignored where the alphabet has one case; Crockford's
    /// base32 also reads `O` as 0 and `I`, `L` as 1, as its specification asks.
    pub fn digit(self, c: u8) -> Option<u64> {
        let c = match self {
            Base::Base32 | Base::Crockford32 => c.to_ascii_uppercase(),
            Base::Base36 | Base::Hex => c.to_ascii_lowercase(),
            Base::Base58 | Base::Base62 => c,
        };
        let c = match (self, c) {
            (Base::Crockford32, b'O') => b'0',
            (Base::Crockford32, b'I' | b'L') => b'1',
            (_, c) => c,
        };
        self.alphabet()
            .iter()
            .position(|a| *a == c)
            .map(|p| p as u64)
    }
}

/// Why a text is not an ID of a base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Not the base's fixed width (in characters).
    Length { got: usize, want: usize },
    /// A character outside the alphabet, at a 1-based position.
    Char { position: usize, ch: char },
    /// A value above 2^64 - 1.
    Overflow,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Length { got, want } => {
                write!(f, "is {got} characters long; it must be exactly {want}")
            }
            DecodeError::Char { position, ch } => {
                write!(
                    f,
                    "has {ch:?} at position {position}, which is not in the alphabet"
                )
            }
            DecodeError::Overflow => write!(f, "is larger than any 64-bit ID"),
        }
    }
}

/// The fixed-width text form of an ID.
pub fn encode(id: i64, base: Base) -> String {
    let alphabet = base.alphabet();
    let radix = base.radix();
    let mut v = id as u64;
    let mut out = vec![alphabet[0]; base.width()];
    for slot in out.iter_mut().rev() {
        *slot = alphabet[(v % radix) as usize];
        v /= radix;
    }
    // The alphabets are ASCII.
    String::from_utf8(out).unwrap_or_default()
}

/// The ID of a fixed-width text form.
pub fn decode(text: &str, base: Base) -> Result<i64, DecodeError> {
    let want = base.width();
    let got = text.chars().count();
    if got != want {
        return Err(DecodeError::Length { got, want });
    }
    let mut v: u128 = 0;
    for (i, ch) in text.chars().enumerate() {
        let d = u8::try_from(ch)
            .ok()
            .and_then(|c| base.digit(c))
            .ok_or(DecodeError::Char {
                position: i + 1,
                ch,
            })?;
        v = v * base.radix() as u128 + d as u128;
    }
    u64::try_from(v)
        .map(|v| v as i64)
        .map_err(|_| DecodeError::Overflow)
}

#[cfg(test)]
mod tests;
