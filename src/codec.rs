//! `id_to_text` / `id_from_text`: fixed-width, order-preserving text forms of IDs (see
//! `core::codec` for the alphabets and why order holds).

use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

use crate::pg::errors::{invalid, quoted, IdError};
use pg_idgen_core::codec::{decode, encode, Base, DecodeError, BASES};

fn base_of(name: &str) -> Base {
    Base::parse(name).unwrap_or_else(|| {
        let known: Vec<_> = BASES.iter().map(|b| b.name()).collect();
        invalid(format!("unknown base \"{name}\""))
            .hint(format!("Use one of: {}.", known.join(", ")))
            .raise()
    })
}

/// Fixed-width, order-preserving text form of an ID: base32 (2-9, A-Z without I, O), crockford32,
/// base36, base58, base62 (default) or hex. Text order is numeric order for IDs >= 0.
#[pg_extern(immutable, parallel_safe, strict)]
fn id_to_text(id: i64, base: default!(&str, "'base62'")) -> String {
    encode(id, base_of(base))
}

/// The ID of a text form made by id_to_text with the same base; wrong length or characters 22P02,
/// above 64 bits 22003.
#[pg_extern(immutable, parallel_safe, strict)]
fn id_from_text(txt: &str, base: default!(&str, "'base62'")) -> i64 {
    let b = base_of(base);
    decode(txt, b).unwrap_or_else(|e| {
        let code = match e {
            DecodeError::Overflow => PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            _ => PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        };
        IdError::new(
            code,
            format!("invalid {} ID {}: it {e}", b.name(), quoted(txt)),
        )
        .hint(format!(
            "{} IDs are {} characters of \"{}\", as id_to_text(id, '{}') writes them.",
            b.name(),
            b.width(),
            String::from_utf8_lossy(b.alphabet()),
            b.name()
        ))
        .raise()
    })
}
