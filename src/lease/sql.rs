//! Worker-id leases on the coordinator (the worker table of the "raindrop" configurable Snowflake,
//! and a database as the worker-id assigner):
//! the table `idgen.workers` and `idgen.worker_acquire / heartbeat / release`, for app servers
//! that run their own Snowflake library and for pg_idgen nodes in lease mode.
//!
//! The rules, each enforced in SQL below:
//! - A live lease (not released, not past `expires_at`) is never handed out, not even to the
//!   same `code`: two processes with one code would otherwise share a worker id.
//! - An expired lease is reusable only after `ttl + idgen.worker_lease_grace`, so a holder whose
//!   renewals stopped has stopped generating before anyone else starts.
//! - Whoever takes an id next is told `start_after`: every ID of the previous holders is older.
//! - A lease is committed before its holder hears of it: acquire and heartbeat refuse to run
//!   inside a transaction block, whose rollback would silently undo them.
//! - Many acquirers at once never wait for each other: rows are taken with `SKIP LOCKED`, and ids
//!   never used before are claimed under a transaction-level advisory lock per id.

use pgrx::prelude::*;

#[pg_schema]
mod idgen_internal {
    use pgrx::prelude::*;
    use pgrx::PgSqlErrorCode;

    use crate::pg::errors::IdError;

    /// Refuses a lease call inside a transaction block (a ROLLBACK would undo the lease while its
    /// holder uses it); returns this layout's largest worker id.
    ///
    /// Checks run first by `worker_acquire` and `worker_heartbeat`; returns the largest worker id
    /// of this server's layout (the default `max_id`).
    #[pg_extern(volatile, parallel_unsafe)]
    fn worker_lease_precheck(caller: &str) -> i32 {
        // SAFETY: reads the transaction state of this backend.
        if unsafe { pg_sys::IsTransactionBlock() } {
            IdError::new(
                PgSqlErrorCode::ERRCODE_ACTIVE_SQL_TRANSACTION,
                format!("idgen.{caller}() cannot run inside a transaction block"),
            )
            .detail("A lease must be committed before its holder uses it; a ROLLBACK of this transaction would undo it while the holder goes on generating.")
            .hint(format!("Call idgen.{caller}() on its own, in autocommit mode."))
            .raise();
        }
        crate::node::lease::max_worker_id().min(i32::MAX as u64) as i32
    }
}

extension_sql_file!(
    "../../sql/install/leases.sql",
    name = "workers_table",
    requires = [idgen_internal::worker_lease_precheck],
);
