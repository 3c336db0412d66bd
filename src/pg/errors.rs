//! Raising PostgreSQL errors with a SQLSTATE, a message, and a hint that says what to do.
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

/// Keeps Rust backtraces out of the errors clients see. pgrx attaches a backtrace to the DETAIL
/// of a PostgreSQL error that passed through Rust code (an SPI query's ERROR, say a table owner's
/// row-level security policy raising one) whenever `std::backtrace` captures one, which it does
/// when the server was started with RUST_BACKTRACE set. RUST_LIB_BACKTRACE=0 turns that capture
/// off and leaves panics' own reporting to RUST_BACKTRACE. Called from _PG_init, in the postmaster
/// before it starts any thread or child, so every process inherits it; an explicit
/// RUST_LIB_BACKTRACE of the operator's is kept.
pub fn keep_backtraces_out_of_errors() {
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        std::env::set_var("RUST_LIB_BACKTRACE", "0");
    }
}

/// An error on its way to the client; `raise()` reports it as an ERROR.
pub struct IdError {
    pub code: PgSqlErrorCode,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl IdError {
    pub fn new(code: PgSqlErrorCode, message: impl Into<String>) -> IdError {
        IdError {
            code,
            message: message.into(),
            detail: None,
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> IdError {
        self.hint = Some(hint.into());
        self
    }

    pub fn detail(mut self, detail: impl Into<String>) -> IdError {
        self.detail = Some(detail.into());
        self
    }

    /// Reports at ERROR level; PostgreSQL unwinds the call from here.
    #[track_caller]
    pub fn raise(self) -> ! {
        self.report(PgLogLevel::ERROR);
        unreachable!("ERROR does not return")
    }

    #[track_caller]
    pub fn report(self, level: PgLogLevel) {
        let mut r = ErrorReport::new(self.code, self.message, "pg_idgen");
        if let Some(d) = self.detail {
            r = r.set_detail(d);
        }
        if let Some(h) = self.hint {
            r = r.set_hint(h);
        }
        r.report(level);
    }
}

pub fn invalid(message: impl Into<String>) -> IdError {
    IdError::new(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, message)
}

pub fn out_of_range(message: impl Into<String>) -> IdError {
    IdError::new(PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE, message)
}

/// A caller's text as an error repeats it: in double quotes, and cut after 100 characters (a
/// megabyte of bad input makes a short message).
pub fn quoted(text: &str) -> String {
    const SHOWN: usize = 100;
    match text.char_indices().nth(SHOWN) {
        Some((i, _)) => format!("\"{}...\"", &text[..i]),
        None => format!("\"{text}\""),
    }
}

/// 22004: a NULL where a value is needed.
pub fn not_null(message: impl Into<String>) -> IdError {
    IdError::new(PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED, message)
}

/// An argument of `func` that must not be NULL: its value, or 22004 "func: arg must not be NULL".
#[track_caller]
pub fn required<T>(func: &str, arg: &str, v: Option<T>) -> T {
    v.unwrap_or_else(|| not_null(format!("{func}: {arg} must not be NULL")).raise())
}

/// The most IDs one call of a batch function returns.
pub const MAX_BATCH: i32 = 10_000_000;

/// The `n` of a batch function: 1 to `MAX_BATCH`, else 22004 (NULL) or 22023.
#[track_caller]
pub fn batch_size(func: &str, n: Option<i32>) -> i32 {
    match required(func, "n", n) {
        n if (1..=MAX_BATCH).contains(&n) => n,
        n => invalid(format!(
            "{func}: n is {n}, it must be between 1 and {MAX_BATCH}"
        ))
        .hint("Call it several times for more IDs.")
        .raise(),
    }
}

/// A failure of pgrx's own SPI layer (not an ERROR of the query, which keeps its SQLSTATE).
pub fn internal(message: impl Into<String>) -> IdError {
    IdError::new(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, message)
}

pub fn not_ready(message: impl Into<String>) -> IdError {
    IdError::new(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        message,
    )
}

/// Unwraps a result or raises its error.
pub trait OrRaise<T> {
    fn or_raise(self) -> T;
}

impl<T> OrRaise<T> for Result<T, IdError> {
    #[track_caller]
    fn or_raise(self) -> T {
        match self {
            Ok(v) => v,
            Err(e) => e.raise(),
        }
    }
}
