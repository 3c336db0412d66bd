//! RongCloud's 80-bit message IDs in SQL: `msgid_next`, `msgid_decode`, `msgid_session_hash`,
//! `msgid_from_timestamp`. The time and sequence come from a second shared generator, driven by
//! the same clock, policies and durable mark as Snowflake IDs (node/).
//!
//! Message IDs are `text` in their 19-character form rather than a binary type: the form is
//! RongCloud's public one, sorts in time order as text, and passes through every driver, JSON and log
//! unchanged. The price is 20 bytes per value instead of 10 (docs/text-forms.md).

// pgrx needs the column tuples of TableIterator spelled out in each signature (no type alias).
#![allow(clippy::type_complexity)]

use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

use crate::node::take;
use crate::pg::errors::{invalid, out_of_range, quoted, required, IdError};
use crate::pg::time::{ms_of_ts, ts_of_ms};
use pg_idgen_core::msgid::{self as format, MsgId};

fn session_type_of(session_type: Option<i32>) -> u8 {
    match required("msgid_next(session_type, session_id)", "session_type", session_type) {
        t @ 0..=15 => t as u8,
        t => invalid(format!(
            "msgid_next(session_type, session_id): session_type is {t}; it must be between 0 and 15 (4 bits)"
        ))
        .raise(),
    }
}

/// 80-bit message ID (RongCloud's format) as 19 characters XXXX-XXXX-XXXX-XXXX: 42-bit ms time,
/// 12-bit sequence shared by all backends of this node, 4-bit session type (0..15), 22-bit session
/// hash. Text order (COLLATE "C") is time order. Unique per node.
#[pg_extern(volatile, parallel_restricted)]
fn msgid_next(session_type: Option<i32>, session_id: Option<&str>) -> String {
    let session_type = session_type_of(session_type);
    let session_id = required(
        "msgid_next(session_type, session_id)",
        "session_id",
        session_id,
    );
    let counter = take::msgid();
    MsgId::new(counter, session_type, format::session_hash(session_id)).to_text()
}

fn parse(msgid: &str) -> MsgId {
    MsgId::parse(msgid).unwrap_or_else(|e| {
        IdError::new(
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!("invalid message ID {}: it {e}", quoted(msgid)),
        )
        .raise()
    })
}

/// Takes a message ID apart: ts, sequence, session_type, session_hash. Accepts the 19-character
/// form or the 16 symbols without dashes.
#[pg_extern(immutable, parallel_safe)]
fn msgid_decode(
    msgid: Option<&str>,
) -> TableIterator<
    'static,
    (
        name!(ts, TimestampWithTimeZone),
        name!(sequence, i32),
        name!(session_type, i32),
        name!(session_hash, i32),
    ),
> {
    let rows: Vec<_> = msgid
        .map(parse)
        .map(|id| {
            (
                ts_of_ms(id.ms() as i64),
                id.sequence() as i32,
                id.session_type() as i32,
                id.session_hash() as i32,
            )
        })
        .into_iter()
        .collect();
    TableIterator::new(rows)
}

/// The 22-bit session hash inside message IDs: Java's String.hashCode() of the session id (UTF-16),
/// low 22 bits. Stable across versions and platforms.
#[pg_extern(immutable, parallel_safe, strict)]
fn msgid_session_hash(session_id: &str) -> i32 {
    format::session_hash(session_id) as i32
}

/// The smallest message ID of an instant: WHERE msgid >= msgid_from_timestamp(now() - interval '1
/// hour') COLLATE "C".
#[pg_extern(immutable, parallel_safe, strict)]
fn msgid_from_timestamp(ts: TimestampWithTimeZone) -> String {
    let ms = ms_of_ts(ts).unwrap_or_else(|e| e.raise());
    let max = (1i64 << format::TIME_BITS) - 1;
    if ms > max {
        out_of_range(format!(
            "{} is past the last millisecond message IDs can hold (42 bits from 1970, until 2109)",
            pg_idgen_core::civil::format_utc_ms(ms)
        ))
        .raise();
    }
    MsgId::first_of_ms(ms.max(0) as u64).to_text()
}
