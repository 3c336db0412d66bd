//! The few libpq calls the lease keeper needs to reach its coordinator, asynchronous so that it
//! waits on its latch and socket together: a shutdown or a reload never waits for the network,
//! and every call has a deadline. dblink and postgres_fdw link libpq into the server the same way.

use std::ffi::{c_char, c_int, CStr, CString};
use std::time::Duration;

use pgrx::pg_sys;

use crate::pg::worker_loop::shutdown_requested;

#[repr(C)]
struct PGconn {
    _opaque: [u8; 0],
}
#[repr(C)]
struct PGresult {
    _opaque: [u8; 0],
}

const CONNECTION_BAD: c_int = 1;
const POLLING_READING: c_int = 1;
const POLLING_WRITING: c_int = 2;
const POLLING_OK: c_int = 3;
const PGRES_TUPLES_OK: c_int = 2;
const DIAG_SQLSTATE: c_int = b'C' as c_int;
const DIAG_MESSAGE: c_int = b'M' as c_int;
const DIAG_CONSTRAINT_NAME: c_int = b'n' as c_int;

#[link(name = "pq")]
unsafe extern "C" {
    fn PQconnectStartParams(
        keywords: *const *const c_char,
        values: *const *const c_char,
        expand_dbname: c_int,
    ) -> *mut PGconn;
    fn PQconnectPoll(conn: *mut PGconn) -> c_int;
    fn PQstatus(conn: *const PGconn) -> c_int;
    fn PQsocket(conn: *const PGconn) -> c_int;
    fn PQerrorMessage(conn: *const PGconn) -> *const c_char;
    fn PQfinish(conn: *mut PGconn);
    fn PQsendQueryParams(
        conn: *mut PGconn,
        command: *const c_char,
        n_params: c_int,
        param_types: *const pg_sys::Oid,
        param_values: *const *const c_char,
        param_lengths: *const c_int,
        param_formats: *const c_int,
        result_format: c_int,
    ) -> c_int;
    fn PQconsumeInput(conn: *mut PGconn) -> c_int;
    fn PQisBusy(conn: *mut PGconn) -> c_int;
    fn PQgetResult(conn: *mut PGconn) -> *mut PGresult;
    fn PQresultStatus(res: *const PGresult) -> c_int;
    fn PQresultErrorField(res: *const PGresult, field: c_int) -> *const c_char;
    fn PQntuples(res: *const PGresult) -> c_int;
    fn PQnfields(res: *const PGresult) -> c_int;
    fn PQgetisnull(res: *const PGresult, row: c_int, col: c_int) -> c_int;
    fn PQgetvalue(res: *const PGresult, row: c_int, col: c_int) -> *const c_char;
    fn PQclear(res: *mut PGresult);
}

/// A failed call: the coordinator's SQLSTATE when it answered with an ERROR, else None (the
/// connection or the deadline failed), and the error's CONSTRAINT field, which pg_idgen's own
/// functions use to name a condition.
#[derive(Debug, Clone)]
pub struct CallError {
    pub sqlstate: Option<String>,
    pub condition: Option<String>,
    pub message: String,
}

impl CallError {
    /// A failure on this side: no connection, a deadline, or an answer that makes no sense.
    pub fn local(message: impl Into<String>) -> CallError {
        CallError {
            sqlstate: None,
            condition: None,
            message: message.into(),
        }
    }
}

fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: libpq returns NUL-terminated strings that live as long as their owner.
        unsafe { CStr::from_ptr(p) }
            .to_string_lossy()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

static IGNORE_SHUTDOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on calls run to their deadline even though SIGTERM came: the release at shutdown.
pub fn ignore_shutdown() {
    IGNORE_SHUTDOWN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Waits for the socket (readable or writable) or the latch, at most until `deadline`.
/// Returns Err on shutdown or timeout.
fn wait(sock: c_int, writable: bool, deadline: std::time::Instant) -> Result<(), CallError> {
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    if left.is_zero() {
        return Err(CallError::local("timed out"));
    }
    let events = pg_sys::WL_LATCH_SET
        | pg_sys::WL_TIMEOUT
        | pg_sys::WL_EXIT_ON_PM_DEATH
        | if writable {
            pg_sys::WL_SOCKET_WRITEABLE
        } else {
            pg_sys::WL_SOCKET_READABLE
        };
    // SAFETY: MyLatch is this process's latch; the socket belongs to a live connection.
    unsafe {
        pg_sys::WaitLatchOrSocket(
            pg_sys::MyLatch,
            events as c_int,
            sock,
            left.as_millis().clamp(1, 60_000) as std::ffi::c_long,
            pg_sys::PG_WAIT_EXTENSION,
        );
        pg_sys::ResetLatch(pg_sys::MyLatch);
    }
    if shutdown_requested() && !IGNORE_SHUTDOWN.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(CallError::local("shutting down"));
    }
    Ok(())
}

/// One connection to the coordinator.
pub struct Conn(*mut PGconn);

impl Drop for Conn {
    fn drop(&mut self) {
        // SAFETY: a connection from PQconnectStartParams, finished once.
        unsafe { PQfinish(self.0) }
    }
}

impl Conn {
    /// Connects with a libpq connection string (or URI) within `timeout`.
    pub fn connect(conninfo: &str, timeout: Duration) -> Result<Conn, CallError> {
        let ci = CString::new(conninfo)
            .map_err(|_| CallError::local("the connection string contains a NUL byte"))?;
        let keys = [
            c"dbname".as_ptr(),
            c"fallback_application_name".as_ptr(),
            std::ptr::null(),
        ];
        let vals = [
            ci.as_ptr(),
            c"pg_idgen lease keeper".as_ptr(),
            std::ptr::null(),
        ];
        // SAFETY: NULL-terminated arrays of NUL-terminated strings that outlive the call.
        let raw = unsafe { PQconnectStartParams(keys.as_ptr(), vals.as_ptr(), 1) };
        if raw.is_null() {
            return Err(CallError::local("out of memory"));
        }
        let conn = Conn(raw);
        let deadline = std::time::Instant::now() + timeout;
        // SAFETY: a live connection; the poll loop is libpq's documented way to connect.
        unsafe {
            if PQstatus(raw) == CONNECTION_BAD {
                return Err(CallError::local(text(PQerrorMessage(raw))));
            }
            let mut poll = POLLING_WRITING;
            loop {
                match poll {
                    POLLING_OK => break,
                    POLLING_READING | POLLING_WRITING => {
                        wait(PQsocket(raw), poll == POLLING_WRITING, deadline)
                            .map_err(|e| CallError::local(format!("connecting: {}", e.message)))?
                    }
                    _ => return Err(CallError::local(text(PQerrorMessage(raw)))),
                }
                poll = PQconnectPoll(raw);
            }
        }
        Ok(conn)
    }

    /// Runs one query with text parameters and returns the first row's columns as text (None
    /// for NULL), within `timeout`. After an error other than the coordinator's own ERROR the
    /// connection should be dropped.
    pub fn query_row(
        &self,
        sql: &str,
        params: &[Option<String>],
        timeout: Duration,
    ) -> Result<Vec<Option<String>>, CallError> {
        let deadline = std::time::Instant::now() + timeout;
        let sql = CString::new(sql).expect("our SQL has no NUL");
        let owned: Vec<Option<CString>> = params
            .iter()
            .map(|p| {
                p.as_ref()
                    .map(|s| CString::new(s.as_str()).unwrap_or_default())
            })
            .collect();
        let ptrs: Vec<*const c_char> = owned
            .iter()
            .map(|p| p.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()))
            .collect();
        // SAFETY: every pointer is valid for the call; results are cleared exactly once.
        unsafe {
            if PQsendQueryParams(
                self.0,
                sql.as_ptr(),
                ptrs.len() as c_int,
                std::ptr::null(),
                ptrs.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
            ) == 0
            {
                return Err(CallError::local(text(PQerrorMessage(self.0))));
            }
            let mut row: Option<Result<Vec<Option<String>>, CallError>> = None;
            loop {
                while PQisBusy(self.0) != 0 {
                    wait(PQsocket(self.0), false, deadline)?;
                    if PQconsumeInput(self.0) == 0 {
                        return Err(CallError::local(text(PQerrorMessage(self.0))));
                    }
                }
                let res = PQgetResult(self.0);
                if res.is_null() {
                    break;
                }
                if row.is_none() {
                    row = Some(if PQresultStatus(res) == PGRES_TUPLES_OK {
                        if PQntuples(res) < 1 {
                            Err(CallError::local("the coordinator returned no row"))
                        } else {
                            Ok((0..PQnfields(res))
                                .map(|c| {
                                    (PQgetisnull(res, 0, c) == 0)
                                        .then(|| text(PQgetvalue(res, 0, c)))
                                })
                                .collect())
                        }
                    } else {
                        let state = text(PQresultErrorField(res, DIAG_SQLSTATE));
                        let msg = text(PQresultErrorField(res, DIAG_MESSAGE));
                        let condition = text(PQresultErrorField(res, DIAG_CONSTRAINT_NAME));
                        Err(CallError {
                            sqlstate: (!state.is_empty()).then_some(state),
                            condition: (!condition.is_empty()).then_some(condition),
                            message: if msg.is_empty() {
                                text(PQerrorMessage(self.0))
                            } else {
                                msg
                            },
                        })
                    });
                }
                PQclear(res);
            }
            row.unwrap_or_else(|| Err(CallError::local("the coordinator returned nothing")))
        }
    }
}
