//! RongCloud's 80-bit message ID (its IM system's), high bits first:
//!
//! | bits | field |
//! |---|---|
//! | 42 | milliseconds since 1970-01-01 UTC (lasts until 2109) |
//! | 12 | sequence within the millisecond |
//! | 4  | session type (0..15: one-to-one, group, system, chat room, ...) |
//! | 22 | the low 22 bits of the session id's hash |
//!
//! written as 16 symbols of [`MSG_ALPHABET`] (5 bits each, high first) in four groups of four
//! joined by `-`: 19 characters. Time and sequence are the high bits, so text order (`COLLATE
//! "C"`) is time order. The time and sequence come from one shared generator per node, so a
//! node's message IDs are unique and increasing across its backends; the format has no worker
//! bits, so two nodes making IDs for the same session in the same millisecond can collide.
//!
//! The session hash is part of the format and never changes: Java's `String.hashCode()` over the
//! UTF-16 code units of the session id (`h = 31 * h + unit`, wrapping at 32 bits), low 22 bits.
//! It is what a Java IM service following RongCloud's design computes with `sessionId.hashCode()`.

use std::fmt;

use super::codec::MSG_ALPHABET;

pub const TIME_BITS: u32 = 42;
pub const SEQUENCE_BITS: u32 = 12;
pub const TYPE_BITS: u32 = 4;
pub const HASH_BITS: u32 = 22;
/// The node's message-ID clock as a Snowflake layout: 42 bits of ms from 1970, 12 of sequence.
pub const LAYOUT_SPEC: &str = "pg_idgen epoch=1970-01-01 time=42 worker=0 sequence=12";
pub const TEXT_LEN: usize = 19;

const HASH_MASK: u32 = (1 << HASH_BITS) - 1;

/// The low 22 bits of Java's `String.hashCode()` of the session id.
pub fn session_hash(session_id: &str) -> u32 {
    let h = session_id
        .encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32));
    h as u32 & HASH_MASK
}

/// An 80-bit message ID, held in the low 80 bits of a u128.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MsgId(u128);

/// Why a text is not a message ID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MsgIdError {
    Length(usize),
    Separator(usize),
    Char { position: usize, ch: char },
}

impl fmt::Display for MsgIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MsgIdError::Length(n) => write!(
                f,
                "is {n} characters long; a message ID is 19 (XXXX-XXXX-XXXX-XXXX) or 16 without the dashes"
            ),
            MsgIdError::Separator(p) => write!(f, "has no '-' at position {p}"),
            MsgIdError::Char { position, ch } => write!(
                f,
                "has {ch:?} at position {position}; message IDs use 2-9 and A-Z without I and O"
            ),
        }
    }
}

impl MsgId {
    /// From the generator's counter (`ms << 12 | sequence`), a session type and a session hash.
    pub fn new(counter: u64, session_type: u8, hash: u32) -> MsgId {
        debug_assert!(counter < 1 << (TIME_BITS + SEQUENCE_BITS));
        debug_assert!(session_type < 1 << TYPE_BITS);
        let v = ((counter as u128) << (TYPE_BITS + HASH_BITS))
            | ((session_type as u128 & 0xF) << HASH_BITS)
            | (hash & HASH_MASK) as u128;
        MsgId(v)
    }

    pub fn bits(self) -> u128 {
        self.0
    }

    pub fn ms(self) -> u64 {
        (self.0 >> (SEQUENCE_BITS + TYPE_BITS + HASH_BITS)) as u64
    }

    pub fn sequence(self) -> u64 {
        (self.0 >> (TYPE_BITS + HASH_BITS)) as u64 & ((1 << SEQUENCE_BITS) - 1)
    }

    pub fn session_type(self) -> u8 {
        (self.0 >> HASH_BITS) as u8 & 0xF
    }

    pub fn session_hash(self) -> u32 {
        self.0 as u32 & HASH_MASK
    }

    /// The smallest message ID of a millisecond: for range scans by time.
    pub fn first_of_ms(ms: u64) -> MsgId {
        MsgId::new(ms << SEQUENCE_BITS, 0, 0)
    }

    /// `XXXX-XXXX-XXXX-XXXX`.
    pub fn to_text(self) -> String {
        // Bytes first, one String at the end: a push per char costs a capacity check and a UTF-8
        // encoding each, and was about a third of msgid_next()'s instructions.
        let mut out = [b'-'; TEXT_LEN];
        for i in 0..16 {
            let digit = (self.0 >> (75 - 5 * i)) as usize & 31;
            out[i + i / 4] = MSG_ALPHABET[digit];
        }
        std::str::from_utf8(&out)
            .expect("the alphabet and the dash are ASCII")
            .to_owned()
    }

    /// Reads the 19-character form, or the 16 symbols without dashes; letters in either case.
    pub fn parse(text: &str) -> Result<MsgId, MsgIdError> {
        let chars: Vec<char> = text.chars().collect();
        let dashed = match chars.len() {
            19 => true,
            16 => false,
            n => return Err(MsgIdError::Length(n)),
        };
        let mut v: u128 = 0;
        for (i, &ch) in chars.iter().enumerate() {
            if dashed && i % 5 == 4 {
                if ch != '-' {
                    return Err(MsgIdError::Separator(i + 1));
                }
                continue;
            }
            let digit = u8::try_from(ch)
                .ok()
                .map(|c| c.to_ascii_uppercase())
                .and_then(|c| MSG_ALPHABET.iter().position(|a| *a == c))
                .ok_or(MsgIdError::Char {
                    position: i + 1,
                    ch,
                })?;
            v = v << 5 | digit as u128;
        }
        Ok(MsgId(v))
    }
}

#[cfg(test)]
mod tests;
