//! The main loop every pg_idgen background worker runs: signals, reloads, work, sleep.

use std::time::Duration;

use pgrx::bgworkers::{BackgroundWorker, SignalWakeFlags};
use pgrx::pg_sys;

/// What a worker does after a round of work.
pub enum Next {
    /// Another round at once.
    Now,
    /// Sleep this long, or until the latch is set, then another round.
    After(Duration),
    /// Leave the loop.
    Stop,
}

/// The first thing a worker's main function does: SIGHUP and SIGTERM set flags and the latch, so
/// a sleeping worker wakes for them at once.
pub fn attach_signals() {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
}

/// Whether SIGTERM came: the server is shutting down (or the worker was told to stop). It stays
/// true once set, however often it is asked: a wait inside a round that gives up for it leaves it
/// for the loop to see. pgrx's `sigterm_received()` clears its flag when asked, so a worker that
/// asked it inside a round went on with its loop and kept a fast shutdown waiting.
pub fn shutdown_requested() -> bool {
    // SAFETY: a sig_atomic_t of this process, which the SIGTERM handler sets and nothing clears.
    unsafe { (&raw const pg_sys::ShutdownRequestPending).read_volatile() != 0 }
}

/// Runs `round` until SIGTERM, postmaster death or `Next::Stop`; before each round, reloads the
/// configuration file if SIGHUP came.
pub fn run(mut round: impl FnMut() -> Next) {
    loop {
        if shutdown_requested() {
            return;
        }
        if BackgroundWorker::sighup_received() {
            // SAFETY: reloading the configuration file is what a worker does on SIGHUP.
            unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
        }
        match round() {
            Next::Now => {}
            // wait_latch returns false on SIGTERM and on postmaster death; a SIGTERM it missed
            // (one a round's own wait saw first) is caught at the top of the loop.
            Next::After(sleep) => {
                if !BackgroundWorker::wait_latch(Some(sleep)) {
                    return;
                }
            }
            Next::Stop => return,
        }
    }
}
