//! `id_to_text` / `id_from_text`: fixed-width, order-preserving text forms of IDs (see
//! `core::codec` for the alphabets and why order holds).

use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

use crate::pg::errors::{invalid, IdError};
use pg_idgen_core::codec::{decode, encode, Base, DecodeError, BASES};

fn base_of(name: &str) -> Base {
    Base::parse(name).unwrap_or_else(|| {
        let known: Vec<_> = BASES.iter().map(|b| b.name()).collect();
        invalid(format!("unknown base \"{name}\""))
            .hint(format!("Use one of: {}.", known.join(", ")))
            .raise()
    })
}

/// The fixed-width text form of an ID; text order is numeric order for IDs >= 0.
#[pg_extern(immutable, parallel_safe, strict)]
fn id_to_text(id: i64, base: default!(&str, "'base62'")) -> String {
    encode(id, base_of(base))
}

/// The ID of a text form made by `id_to_text` with the same base.
#[pg_extern(immutable, parallel_safe, strict)]
fn id_from_text(txt: &str, base: default!(&str, "'base62'")) -> i64 {
    let b = base_of(base);
    decode(txt, b).unwrap_or_else(|e| {
        let code = match e {
            DecodeError::Overflow => PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            _ => PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        };
        IdError::new(code, format!("invalid {} ID \"{txt}\": it {e}", b.name()))
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

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn every_base_round_trips_generated_ids_and_keeps_their_order() {
        for base in ["base32", "crockford32", "base36", "base58", "base62", "hex"] {
            let ok = Spi::get_one::<bool>(&format!(
                "WITH i AS (SELECT id FROM snowflake_next_batch(2000) id
                            UNION ALL VALUES (0), (1), (9223372036854775807), (-1))
                 SELECT bool_and(id_from_text(id_to_text(id, '{base}'), '{base}') = id)
                    AND (SELECT bool_and(a < b) FROM (SELECT id_to_text(id, '{base}') COLLATE \"C\" AS a,
                         lead(id_to_text(id, '{base}')) OVER (ORDER BY id) COLLATE \"C\" AS b FROM i WHERE id >= 0) x
                         WHERE b IS NOT NULL)
                 FROM i"
            ))
            .unwrap();
            assert_eq!(ok, Some(true), "{base}");
        }
    }

    #[pg_test]
    fn base62_is_the_default() {
        assert_eq!(
            Spi::get_one::<String>("SELECT id_to_text(61)").unwrap(),
            Some("0000000000z".into())
        );
        assert_eq!(
            Spi::get_one::<i64>("SELECT id_from_text('0000000000z')").unwrap(),
            Some(61)
        );
    }

    #[pg_test(error = "unknown base \"base64\"")]
    fn unknown_base_is_an_error() {
        Spi::run("SELECT id_to_text(1, 'base64')").unwrap();
    }

    #[pg_test(
        error = "invalid hex ID \"fffffffffffffffff\": it is 17 characters long; it must be exactly 16"
    )]
    fn wrong_length_is_an_error() {
        Spi::run("SELECT id_from_text('fffffffffffffffff', 'hex')").unwrap();
    }
}
