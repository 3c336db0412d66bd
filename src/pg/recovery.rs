//! Whether this server is a primary, asked once per backend: recovery never starts again under a
//! running backend, and the per-row entry points check only a flag.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use pgrx::PgSqlErrorCode;

use super::errors::IdError;

/// 25006 on a standby: a generator that ran there would repeat its primary's IDs. `what` is the
/// action refused ("generate IDs"), `hint` where to do it instead.
#[inline]
pub fn refuse_on_standby(what: &str, hint: &str) {
    if !PRIMARY.load(Relaxed) {
        ask_recovery(what, hint);
    }
}

/// True when this backend has already seen recovery over: `refuse_on_standby` would pass without
/// asking the server (a per-row entry point's fast path checks only this).
#[inline(always)]
pub fn known_primary() -> bool {
    PRIMARY.load(Relaxed)
}

/// Whether the server is in recovery (a standby, or still starting up); asks the server.
pub fn in_recovery() -> bool {
    // SAFETY: RecoveryInProgress only reads the server's shared recovery state.
    unsafe { pgrx::pg_sys::RecoveryInProgress() }
}

/// Recovery never starts again under a running backend: once it is seen to be over, this process
/// need not ask again (a call into the server costs more than the rest of an ID).
static PRIMARY: AtomicBool = AtomicBool::new(false);

#[cold]
fn ask_recovery(what: &str, hint: &str) {
    // SAFETY: RecoveryInProgress only reads the server's shared recovery state.
    if !unsafe { pgrx::pg_sys::RecoveryInProgress() } {
        PRIMARY.store(true, Relaxed);
        return;
    }
    IdError::new(
        PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
        format!("cannot {what} on a standby server"),
    )
    .detail("The server is in recovery; IDs made here could repeat IDs of the primary.")
    .hint(hint)
    .raise();
}
