//! The reserver, pg_idgen's background worker of the node: keeps the high-water mark of the node's clock streams (Snowflake
//! IDs, message IDs, UUIDv7s) reserved ahead of need, so that callers almost never wait for a
//! durable write.

use std::time::Duration;

use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::prelude::*;

use crate::pg::worker_loop::{self, Next};

pub fn register() {
    BackgroundWorkerBuilder::new("pg_idgen reserver")
        .set_type("pg_idgen")
        .set_function("pg_idgen_reserver_main")
        .set_library("pg_idgen")
        // A connection (to the shared catalogs only) makes PostgreSQL initialise the process
        // fully, WAL insertion included; a shared-memory-only worker cannot write WAL records.
        .enable_spi_access()
        // Only a primary hands out IDs; a standby starts the worker once promoted.
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(Some(Duration::from_secs(1)))
        .load();
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn pg_idgen_reserver_main(_arg: pg_sys::Datum) {
    worker_loop::attach_signals();
    // No database: like the logical replication launcher, only shared catalogs.
    BackgroundWorker::connect_worker_to_spi(None, None);
    // The first worker of the server's shared-memory lifetime: what other subsystems asked to run
    // once after each start (pg/after_start.rs).
    crate::pg::after_start::run();
    let mut seen = super::stream::PerStream::<super::reservation::Seen>::default();
    let mut complained = false;
    worker_loop::run(|| {
        let stop =
            || worker_loop::shutdown_requested().then(|| "the server is shutting down".to_string());
        match super::reservation::renew_reservations(&mut seen, &stop) {
            Ok(_) => complained = false,
            Err(e) if !complained => {
                complained = true;
                pgrx::warning!("pg_idgen: could not renew the Snowflake reservation: {e}");
            }
            Err(_) => {}
        }
        Next::After(Duration::from_millis(100))
    });
}
