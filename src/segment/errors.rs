//! The ERRORs of segment mode, shared by `segment_next()`, the admin functions and the allocator's
//! answers.

use pgrx::PgSqlErrorCode;

use crate::gucs;
use crate::pg::errors::{invalid, not_ready, IdError};
use pg_idgen_core::segment::Fault;

pub fn unknown_type(name: &str) -> IdError {
    IdError::new(
        PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
        format!("business type \"{name}\" does not exist"),
    )
    .hint(
        "Create it with SELECT idgen.segment_create('<biz_type>'); a type created in an open transaction is usable once that transaction commits. If this database was restored, restore idgen.segments first (as a member of idgen_admin): a type created anew starts above the columns that default to segment_next() of it, but not above its IDs kept elsewhere.",
    )
}

/// An SPI failure reading or writing a type's row that is not a PostgreSQL ERROR (a column that
/// no longer reads as pg_idgen wrote it): reported with its cause, never as an unknown type.
pub fn unreadable_row(func: &str, name: &str, e: impl std::fmt::Display) -> IdError {
    IdError::new(
        PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
        format!("{func}: could not read or write the row of \"{name}\" in idgen.segments: {e}"),
    )
    .hint("idgen.segments must keep the columns and types pg_idgen created.")
}

/// The ERROR for a fault the cache or the allocator reported.
pub fn segment_fault_error(f: Fault, name: &str) -> IdError {
    match f {
        Fault::NotFound => unknown_type(name),
        Fault::Overflow => IdError::new(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!("business type \"{name}\" has run out of IDs: its next range would pass 9223372036854775807"),
        )
        .hint("Create a new business type, or lower its step with idgen.segment_alter if a smaller range still fits."),
        Fault::WorkerGone => not_ready(format!(
            "the allocator exited before it committed a range for \"{name}\""
        ))
        .hint("See the server log for the reason; the next call starts a new allocator."),
        Fault::BadRow => invalid(format!(
            "business type \"{name}\" has an invalid row in idgen.segments (step, delta or remainder)"
        ))
        .hint("Fix it with idgen.segment_alter, or drop and re-create the type above its old max_id."),
        Fault::RowUnreadable => IdError::new(
            PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
            format!("the allocator could not read or write the row of \"{name}\" in idgen.segments"),
        )
        .hint("The server log says why (a WARNING of the allocator); idgen.segments must keep the columns and types pg_idgen created."),
    }
}

/// A wait for the allocator that ran out of time.
pub fn timed_out(what: &str, name: &str) -> IdError {
    not_ready(format!(
        "timed out waiting for the allocator to commit {what} for \"{name}\""
    ))
    .detail(format!(
        "Waited idgen.segment_wait_timeout ({} ms).",
        gucs::segment_wait_timeout_ms()
    ))
    .hint("A long transaction may hold the type's row in idgen.segments locked (see pg_locks), or the server log says why the allocator is failing.")
}
