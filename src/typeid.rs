//! TypeIDs in SQL (docs/text-forms.md, "TypeIDs"): `typeid_next(prefix)` over the node's UUIDv7
//! stream, `typeid_from_uuid`, `typeid_to_uuid` and `typeid_prefix`, exactly as the TypeID
//! specification writes and reads them (`pg_idgen_core::typeid`).

use pgrx::prelude::*;
use pgrx::{PgSqlErrorCode, Uuid};

use pg_idgen_core::typeid::{self, TypeIdError};
use pg_idgen_core::uuidv7;

use crate::node::take;
use crate::pg::errors::{not_null, quoted, IdError};
use crate::pg::strong_random;

/// 22P02 for a text that is no TypeID.
fn not_a_typeid(text: &str, e: TypeIdError) -> IdError {
    IdError::new(
        PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        format!("{} is not a TypeID: {e}", quoted(text)),
    )
    .hint("A TypeID is a prefix of a-z and _ (or none), _, and 26 characters of 0123456789abcdefghjkmnpqrstvwxyz, the first at most 7: user_01h455vb4pex5vsknk084sn02q.")
}

/// 22023 for a prefix a TypeID cannot have.
fn bad_prefix(prefix: &str, e: TypeIdError) -> IdError {
    IdError::new(
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        format!("{} cannot be a TypeID's prefix: {e}", quoted(prefix)),
    )
    .hint("A prefix is empty, or 1 to 63 of a-z and _ that start and end with a letter: user, api_key.")
}

fn encode(prefix: &str, bytes: &[u8; 16]) -> String {
    typeid::encode(prefix, bytes).unwrap_or_else(|e| bad_prefix(prefix, e).raise())
}

/// The TypeID of any UUID with a prefix: typeid_from_uuid('user', id).
#[pg_extern(immutable, parallel_safe, strict)]
fn typeid_from_uuid(prefix: &str, id: Uuid) -> String {
    encode(prefix, id.as_bytes())
}

/// The UUID of a TypeID, whatever its prefix; 22P02 for a text that is no TypeID.
#[pg_extern(immutable, parallel_safe, strict)]
fn typeid_to_uuid(typeid: &str) -> Uuid {
    let (_, bytes) = typeid::decode(typeid).unwrap_or_else(|e| not_a_typeid(typeid, e).raise());
    Uuid::from_bytes(bytes)
}

/// The UUID of a TypeID of the given prefix (type); 22P02 for a TypeID of another type.
#[pg_extern(immutable, parallel_safe, strict, name = "typeid_to_uuid")]
fn typeid_to_uuid_of(typeid: &str, prefix: &str) -> Uuid {
    let (found, bytes) = typeid::decode(typeid).unwrap_or_else(|e| not_a_typeid(typeid, e).raise());
    if found != prefix {
        IdError::new(
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!(
                "{} is a TypeID of type {}, not {}",
                quoted(typeid),
                quoted(found),
                quoted(prefix)
            ),
        )
        .hint("Pass the TypeID of the type the column holds, or typeid_to_uuid(text) to accept any type.")
        .raise();
    }
    Uuid::from_bytes(bytes)
}

/// A TypeID's prefix (its type); empty for none.
#[pg_extern(immutable, parallel_safe, strict)]
fn typeid_prefix(typeid: &str) -> String {
    let (prefix, _) = typeid::decode(typeid).unwrap_or_else(|e| not_a_typeid(typeid, e).raise());
    prefix.to_string()
}

/// A new TypeID (the TypeID specification 0.3.0): the prefix, _, and this node's next UUIDv7 in 26
/// characters of base 32; DEFAULT typeid_next('user').
#[pg_extern(volatile, parallel_restricted)]
fn typeid_next(prefix: Option<&str>) -> String {
    let prefix = prefix.unwrap_or_else(|| {
        not_null("typeid_next: prefix must not be NULL (give '' for none)").raise()
    });
    // The prefix first: a refused call takes nothing from the stream.
    typeid::check_prefix(prefix).unwrap_or_else(|e| bad_prefix(prefix, e).raise());
    let counter = take::uuidv7(1).first;
    encode(prefix, &uuidv7::compose(counter, strong_random::next_u64()))
}
