//! One bigint read through SPI in read-only mode.
//!
//! pgrx's `Spi::get_one*` run as commands that may write (its `update`), which PostgreSQL refuses
//! in parallel mode ("cannot start commands during a parallel operation"): a generator function
//! is parallel safe, so it can run in a parallel worker or in a leader that is in parallel mode.
//! A read-only SPI call takes no new command id and works in both, as a parallel-safe PL/pgSQL
//! function's SELECT does.

use std::ffi::CString;

use pgrx::pg_sys;
use pgrx::IntoDatum;

/// A query parameter.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    Text(&'a str),
}

impl Arg<'_> {
    fn type_oid(&self) -> pg_sys::Oid {
        match self {
            Arg::Text(_) => pg_sys::TEXTOID,
        }
    }

    /// The value (a text is copied into the current memory context).
    fn datum(&self) -> pg_sys::Datum {
        match *self {
            Arg::Text(v) => v.into_datum(),
        }
        .unwrap_or(pg_sys::Datum::from(0))
    }
}

/// The first column of the first row of `sql` (a SELECT of one bigint, with `$1`, `$2`, ... bound
/// to `args`), or None when there is no row or the value is NULL. An ERROR of the query is raised
/// as usual.
pub fn one_i64(sql: &str, args: &[Arg]) -> Result<Option<i64>, String> {
    let cmd = CString::new(sql).map_err(|_| "a query text with a NUL byte".to_string())?;
    let mut argtypes: Vec<pg_sys::Oid> = args.iter().map(Arg::type_oid).collect();
    let mut values: Vec<pg_sys::Datum> = args.iter().map(Arg::datum).collect();
    let nulls = vec![b' ' as std::ffi::c_char; args.len()];
    // SAFETY: the standard SPI_connect / execute / read / SPI_finish sequence; an ERROR unwinds
    // past SPI_finish, and transaction abort cleans up the SPI stack (AtEOXact_SPI). The value is
    // a by-value int8, read before SPI_finish frees the tuple table.
    unsafe {
        if pg_sys::SPI_connect() < 0 {
            return Err("SPI_connect failed".into());
        }
        let rc = pg_sys::SPI_execute_with_args(
            cmd.as_ptr(),
            args.len() as i32,
            argtypes.as_mut_ptr(),
            values.as_mut_ptr(),
            nulls.as_ptr(),
            true,
            1,
        );
        let result = if rc != pg_sys::SPI_OK_SELECT as i32 {
            Err(format!("SPI_execute_with_args returned {rc}"))
        } else if pg_sys::SPI_processed == 0 || pg_sys::SPI_tuptable.is_null() {
            Ok(None)
        } else {
            let table = &*pg_sys::SPI_tuptable;
            let mut isnull = false;
            let d = pg_sys::SPI_getbinval(*table.vals, table.tupdesc, 1, &mut isnull);
            Ok((!isnull).then(|| d.value() as i64))
        };
        pg_sys::SPI_finish();
        result
    }
}
