//! One bigint read through SPI in read-only mode.
//!
//! pgrx's `Spi::get_one*` run as commands that may write (its `update`), which PostgreSQL refuses
//! in parallel mode ("cannot start commands during a parallel operation"): a generator function
//! is parallel safe, so it can run in a parallel worker or in a leader that is in parallel mode.
//! A read-only SPI call takes no new command id and works in both, as a parallel-safe PL/pgSQL
//! function's SELECT does.

use std::ffi::CString;

use pgrx::pg_sys;

/// The first column of the first row of `sql` (a SELECT of one bigint), or None when there is no
/// row or the value is NULL. An ERROR of the query is raised as usual.
pub fn one_i64(sql: &str) -> Result<Option<i64>, String> {
    let cmd = CString::new(sql).map_err(|_| "a query text with a NUL byte".to_string())?;
    // SAFETY: the standard SPI_connect / execute / read / SPI_finish sequence; an ERROR unwinds
    // past SPI_finish, and transaction abort cleans up the SPI stack (AtEOXact_SPI). The value is
    // a by-value int8, read before SPI_finish frees the tuple table.
    unsafe {
        if pg_sys::SPI_connect() < 0 {
            return Err("SPI_connect failed".into());
        }
        let rc = pg_sys::SPI_execute(cmd.as_ptr(), true, 1);
        let result = if rc != pg_sys::SPI_OK_SELECT as i32 {
            Err(format!("SPI_execute returned {rc}"))
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
