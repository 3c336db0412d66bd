//! UUIDv7 (RFC 9562) and ULIDs in SQL: `uuidv7_next`, `uuidv7_next_batch`, `ulid_next`, the
//! conversions `uuid_to_ulid` / `ulid_to_uuid`, and the decoders `uuidv7_timestamp`,
//! `ulid_timestamp`, `uuidv7_from_timestamp`. Time and counter come from a third shared
//! generator, under the same clock, policies and durable mark as Snowflake and message IDs (see
//! node/); the bits are laid out in `pg_idgen_core::uuidv7`.
//!
//! The decoders are not overloads of `id_timestamp` / `id_from_timestamp`: with a `uuid` variant
//! beside the `bigint` one, a call with an untyped parameter (node-postgres sends every parameter
//! untyped) or a quoted literal could no longer be resolved, and would break existing callers.

use pgrx::prelude::*;
use pgrx::{PgSqlErrorCode, Uuid};

use crate::node::stream::Stream;
use crate::node::take;
use crate::pg::errors::{batch_size, invalid, out_of_range, quoted, IdError};
use crate::pg::fast_entry::{fast_entry, Call};
use crate::pg::strong_random;
use crate::pg::time::{ms_of_ts, pg_us_of_ms, ts_of_ms};
use pg_idgen_core::uuidv7;

fn uuid_of(counter: u64) -> [u8; 16] {
    uuidv7::compose(counter, strong_random::next_u64())
}

/// The common case of `uuidv7_next()`, run bare (pg/fast_entry.rs): random bits in the buffer,
/// then node/take.rs's fast path. None, having issued nothing, for anything else (the random bits
/// it took are never used again).
#[inline(always)]
fn uuidv7_next_fast() -> Option<[u8; 16]> {
    let random = strong_random::try_next_u64()?;
    Some(uuidv7::compose(take::uuidv7_fast()?, random))
}

// Next UUIDv7 (RFC 9562) of this node: 48-bit Unix ms, a 15-bit counter shared by all backends
// (method 1), 59 random bits from pg_strong_random(). Strictly increasing per node across backends,
// restarts, crashes and clock steps; across nodes unique by its random bits. Use as DEFAULT
// uuidv7_next().
//
// The SQL function `uuidv7_next()`: `uuidv7_next_fast` first, `uuidv7_next_full` under pgrx's
// guard for the rest (the symbol is the one pgrx gave it in 0.2.5).
fast_entry!(
    "uuidv7_next",
    r#"CREATE FUNCTION "uuidv7_next"() RETURNS uuid
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c
AS 'MODULE_PATHNAME', 'uuidv7_next_wrapper';
"#,
    pg_finfo_uuidv7_next_wrapper,
    uuidv7_next_wrapper,
    uuidv7_next_fast,
    crate::pg::fast_entry::bytes_datum,
    uuidv7_next_full_wrapper
);

/// `uuidv7_next()` for every call its fast path leaves.
#[pg_extern(volatile, parallel_restricted, sql = false)]
fn uuidv7_next_full() -> Uuid {
    Uuid::from_bytes(uuid_of(take::uuidv7(1).first))
}

/// n UUIDv7s at once (1 to 10000000), ascending.
///
/// They are taken from the node's stream as the rows are read.
#[pg_extern(volatile, parallel_restricted)]
fn uuidv7_next_batch(n: Option<i32>) -> SetOfIterator<'static, Uuid> {
    let mut owed = batch_size("uuidv7_next_batch(n)", n) as u64;
    let per_tick = 1u64 << uuidv7::COUNTER_BITS;
    let runs = std::iter::from_fn(move || {
        (owed > 0).then(|| {
            let issued = take::uuidv7(owed.min(per_tick));
            owed -= issued.count;
            issued.first..issued.first + issued.count
        })
    });
    SetOfIterator::new(runs.flatten().map(|c| Uuid::from_bytes(uuid_of(c))))
}

// Next UUIDv7 of this node written as a ULID (26 characters of Crockford base32): the same time,
// order and guarantees; text order (COLLATE "C") is time order. ulid_to_uuid() stores it in 16
// bytes.
//
// The same fast path as `uuidv7_next()`, its answer written as text (the symbol is pgrx's of
// 0.2.5).
fast_entry!(
    "ulid_next",
    r#"CREATE FUNCTION "ulid_next"() RETURNS TEXT
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c
AS 'MODULE_PATHNAME', 'ulid_next_wrapper';
"#,
    pg_finfo_ulid_next_wrapper,
    ulid_next_wrapper,
    uuidv7_next_fast,
    |bytes| crate::pg::fast_entry::text_datum(uuidv7::ulid_chars(&bytes)),
    ulid_next_full_wrapper
);

/// `ulid_next()` for every call its fast path leaves.
#[pg_extern(volatile, parallel_restricted, sql = false)]
fn ulid_next_full() -> String {
    uuidv7::to_ulid(&uuid_of(take::uuidv7(1).first))
}

/// Any UUID's 128 bits as a ULID's 26 characters; for a UUIDv7, the same time and order.
#[pg_extern(immutable, parallel_safe, strict)]
fn uuid_to_ulid(id: Uuid) -> String {
    uuidv7::to_ulid(id.as_bytes())
}

fn parse_ulid(text: &str) -> [u8; 16] {
    uuidv7::from_ulid(text).unwrap_or_else(|e| {
        IdError::new(
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!("invalid ULID {}: it {e}", quoted(text)),
        )
        .hint("A ULID is 26 characters of Crockford's base32, e.g. 01ARYZ6S41TSV4RRFFQ69G5FAV.")
        .raise()
    })
}

/// A ULID's 128 bits as a uuid (case ignored, O read as 0 and I, L as 1); wrong length or
/// characters 22P02.
#[pg_extern(immutable, parallel_safe, strict)]
fn ulid_to_uuid(ulid: &str) -> Uuid {
    Uuid::from_bytes(parse_ulid(ulid))
}

// The millisecond inside a UUIDv7 (this node's or any other's); 22023 for a UUID of another
// version.
//
// `uuidv7_timestamp(id)` runs per row in queries by time, bare for a version 7 UUID
// (pg/fast_entry.rs), `uuidv7_timestamp_full` under pgrx's guard for the rest (the refusal of any
// other UUID).
fast_entry!(
    args,
    "uuidv7_timestamp",
    r#"CREATE FUNCTION "uuidv7_timestamp"(
	"id" uuid
) RETURNS timestamp with time zone
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'uuidv7_timestamp_wrapper';
"#,
    pg_finfo_uuidv7_timestamp_wrapper,
    uuidv7_timestamp_wrapper,
    |call: Call| {
        let p = call.arg(0)?.cast_mut_ptr::<[u8; 16]>();
        if p.is_null() {
            return None;
        }
        // SAFETY: a uuid argument points at its 16 bytes, which stay for the call.
        let bytes = unsafe { *p };
        pg_us_of_ms(uuidv7::ms_of(&bytes).ok()? as i64)
    },
    pg_sys::Datum::from,
    uuidv7_timestamp_full_wrapper
);

#[pg_extern(immutable, parallel_safe, strict, sql = false)]
fn uuidv7_timestamp_full(id: Uuid) -> TimestampWithTimeZone {
    match uuidv7::ms_of(id.as_bytes()) {
        Ok(ms) => ts_of_ms(ms as i64),
        Err(e) => IdError::new(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("uuid {id} {e}: it holds no time"),
        )
        .hint("Only version 7 UUIDs (uuidv7_next(), PostgreSQL 18's uuidv7(), other RFC 9562 generators) carry a time; for a ULID stored as uuid, use ulid_timestamp(uuid_to_ulid(id)).")
        .raise(),
    }
}

/// The millisecond inside a ULID (its first 10 characters).
#[pg_extern(immutable, parallel_safe, strict)]
fn ulid_timestamp(ulid: &str) -> TimestampWithTimeZone {
    ts_of_ms(uuidv7::ulid_ms(&parse_ulid(ulid)) as i64)
}

/// This node's read horizon of UUIDv7s (and, as uuid_to_ulid(), ULIDs): every one below it that
/// this node made belongs to a transaction that has ended. Used as idgen.read_horizon().
///
/// Its random bits are 0, so it is at or below every UUIDv7 of its counter.
#[pg_extern(volatile, parallel_restricted, schema = "idgen")]
fn read_horizon_uuid() -> Uuid {
    let counter = take::read_horizon(Stream::Uuidv7, "idgen.read_horizon_uuid()").counter;
    Uuid::from_bytes(uuidv7::compose(counter, 0))
}

/// The smallest UUIDv7 of an instant's millisecond: WHERE id >= uuidv7_from_timestamp(now() -
/// interval '1 day') is an index range scan on a uuid key.
///
/// Instants before 1970 give the first UUIDv7 of all.
#[pg_extern(immutable, parallel_safe, strict)]
fn uuidv7_from_timestamp(ts: TimestampWithTimeZone) -> Uuid {
    let ms = ms_of_ts(ts).unwrap_or_else(|e| e.raise());
    if ms >> 48 > 0 {
        out_of_range(format!(
            "{} is past the last millisecond a UUIDv7 can hold (48 bits from 1970, until the year 10889)",
            pg_idgen_core::civil::format_utc_ms(ms)
        ))
        .raise();
    }
    Uuid::from_bytes(uuidv7::first_of_ms(ms.max(0) as u64))
}

/// The UUIDv7s of the times [since, before), to the millisecond: FOR VALUES FROM (lower) TO (upper)
/// is the range partition of those times on a uuid key.
#[pg_extern(immutable, parallel_safe, strict)]
fn uuidv7_range(
    since: TimestampWithTimeZone,
    before: TimestampWithTimeZone,
) -> TableIterator<'static, (name!(lower, Uuid), name!(upper, Uuid))> {
    if ms_of_ts(before).unwrap_or_else(|e| e.raise())
        <= ms_of_ts(since).unwrap_or_else(|e| e.raise())
    {
        invalid(format!(
            "uuidv7_range: before ({before}) is not after since ({since}): the range holds no time"
        ))
        .hint("Give the start of the range first, then its end (exclusive).")
        .raise();
    }
    TableIterator::once((uuidv7_from_timestamp(since), uuidv7_from_timestamp(before)))
}
