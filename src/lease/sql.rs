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
    use pg_idgen_core::layout::Field;

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
        crate::node::generator::node()
            .layout
            .max_value(Field::Worker)
            .min(i32::MAX as u64) as i32
    }
}

extension_sql_file!(
    "../../sql/install/leases.sql",
    name = "workers_table",
    requires = [idgen_internal::worker_lease_precheck],
);

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    fn one<T: IntoDatum + FromDatum>(sql: &str) -> Option<T> {
        Spi::get_one::<T>(sql).unwrap()
    }

    /// A lease row as a holder left it, written straight into the table (the test runs inside a
    /// transaction, where worker_acquire() refuses to run).
    fn holder(worker_id: i32, state: &str) {
        let (expires, released) = match state {
            "held" => ("now() + interval '50 s'", "NULL"),
            "expired" => ("now() - interval '5 s'", "NULL"),
            _ => ("now() + interval '50 s'", "now() - interval '1 s'"),
        };
        Spi::run(&format!(
            "INSERT INTO idgen.workers (worker_id, code, lease, ttl, acquired_at, heartbeat_at, expires_at, released_at, last_ts)
             VALUES ({worker_id}, 'app-{worker_id}', 3, '60 s', now() - interval '2 min', {expires} - interval '60 s', {expires}, {released},
                     {expires} - interval '61 s')"
        ))
        .unwrap();
    }

    #[pg_test(error = "idgen.worker_acquire() cannot run inside a transaction block")]
    fn acquire_refuses_a_transaction_block() {
        Spi::run("SELECT * FROM idgen.worker_acquire('app')").unwrap();
    }

    #[pg_test(error = "idgen.worker_heartbeat() cannot run inside a transaction block")]
    fn heartbeat_refuses_a_transaction_block() {
        Spi::run("SELECT idgen.worker_heartbeat(0, 'app')").unwrap();
    }

    #[pg_test]
    fn a_released_lease_starts_after_the_holders_last_time_or_the_release() {
        holder(1, "released");
        let ok = one::<bool>(
            "SELECT idgen_internal.worker_start_after(w) = w.released_at FROM idgen.workers w WHERE worker_id = 1",
        );
        assert_eq!(ok, Some(true), "last_ts is older than the release");
        Spi::run("UPDATE idgen.workers SET last_ts = now() + interval '3 s' WHERE worker_id = 1")
            .unwrap();
        let ok = one::<bool>(
            "SELECT idgen_internal.worker_start_after(w) = w.last_ts FROM idgen.workers w WHERE worker_id = 1",
        );
        assert_eq!(ok, Some(true), "a holder clock ahead of ours is believed");
    }

    #[pg_test]
    fn an_expired_lease_starts_after_its_expiry_plus_the_grace_period() {
        holder(2, "expired");
        Spi::run("SET LOCAL idgen.worker_lease_grace = '4s'").unwrap();
        let ok = one::<bool>(
            "SELECT idgen_internal.worker_start_after(w) = w.expires_at + interval '4 s' FROM idgen.workers w WHERE worker_id = 2",
        );
        assert_eq!(ok, Some(true));
        // A holder whose last ID was ahead of its heartbeat may have gone on that far ahead
        // until the lease ran out.
        Spi::run(
            "UPDATE idgen.workers SET last_ts = heartbeat_at + interval '10 s' WHERE worker_id = 2",
        )
        .unwrap();
        let ok = one::<bool>(
            "SELECT idgen_internal.worker_start_after(w) = w.expires_at + interval '14 s' FROM idgen.workers w WHERE worker_id = 2",
        );
        assert_eq!(ok, Some(true));
        let state = one::<String>("SELECT state FROM idgen.worker_leases WHERE worker_id = 2");
        assert_eq!(state.as_deref(), Some("expired"));
    }

    #[pg_test]
    fn a_lease_expired_by_hand_is_free_only_after_its_holders_own_deadline() {
        holder(5, "held");
        Spi::run("SET LOCAL idgen.worker_lease_grace = '2s'").unwrap();
        // An operator moves expires_at back: the holder's next heartbeat fails, but until then it
        // may go on to its own deadline, its last renewal + ttl.
        Spi::run(
            "UPDATE idgen.workers SET expires_at = now() - interval '1 h' WHERE worker_id = 5",
        )
        .unwrap();
        let (free, after) = Spi::get_two::<bool, bool>(
            "SELECT idgen_internal.worker_free_at(w) = w.heartbeat_at + w.ttl + interval '2 s',
                    idgen_internal.worker_start_after(w) = w.heartbeat_at + w.ttl + interval '2 s'
               FROM idgen.workers w WHERE worker_id = 5",
        )
        .unwrap();
        assert_eq!((free, after), (Some(true), Some(true)));
        let state = one::<String>("SELECT state FROM idgen.worker_leases WHERE worker_id = 5");
        assert_eq!(state.as_deref(), Some("grace"));
    }

    #[pg_test]
    fn release_is_for_the_holder_only_and_runs_in_a_transaction() {
        holder(3, "held");
        let released =
            one::<bool>("SELECT idgen.worker_release(3, 'app-3', now() + interval '1 s', 3)");
        assert_eq!(released, Some(true));
        let (state, last_ahead) = Spi::get_two::<String, bool>(
            "SELECT state, last_ts = now() + interval '1 s' FROM idgen.worker_leases WHERE worker_id = 3",
        )
        .unwrap();
        assert_eq!(
            (state.as_deref(), last_ahead),
            (Some("released"), Some(true))
        );
        assert_eq!(
            one::<bool>("SELECT idgen.worker_release(3, 'app-3', lease => 3)"),
            Some(false)
        );
    }

    /// The code is a name anyone may read: without the lease number no one, not even a superuser,
    /// ends a live lease (an administrator reads the number in idgen.worker_leases). Heartbeats
    /// refuse a transaction block first; workers.sql checks them in autocommit.
    #[pg_test(error = "idgen.worker_release: the lease number is required")]
    fn release_without_the_lease_number_is_refused() {
        holder(6, "held");
        Spi::run("SELECT idgen.worker_release(6, 'app-6', clock_timestamp())").unwrap();
    }

    #[pg_test(error = "idgen.worker_release: worker id 4 is not leased by \"app-4\" under lease 2")]
    fn release_with_a_stale_lease_number_is_refused() {
        holder(4, "held");
        Spi::run("SELECT idgen.worker_release(4, 'app-4', lease => 2)").unwrap();
    }

    #[pg_test]
    fn a_node_with_a_worker_id_setting_reports_it() {
        let row = Spi::get_three::<String, i32, bool>(
            "SELECT source, worker_id, can_generate FROM idgen.worker_status",
        )
        .unwrap();
        assert_eq!(row, (Some("setting".into()), Some(0), Some(true)));
    }

    #[pg_test]
    fn the_table_refuses_rows_that_make_no_sense() {
        Spi::run(
            r#"DO $$
            DECLARE bad text; refused int := 0;
            BEGIN
                FOREACH bad IN ARRAY ARRAY[
                    $r$(-1, 'a', 1, '1 s', now(), now(), now())$r$,
                    $r$(1, '', 1, '1 s', now(), now(), now())$r$,
                    $r$(1, 'a', 0, '1 s', now(), now(), now())$r$,
                    $r$(1, 'a', 1, '0 s', now(), now(), now())$r$] LOOP
                    BEGIN
                        EXECUTE 'INSERT INTO idgen.workers (worker_id, code, lease, ttl, acquired_at, heartbeat_at, expires_at) VALUES ' || bad;
                    EXCEPTION WHEN check_violation THEN refused := refused + 1;
                    END;
                END LOOP;
                IF refused <> 4 THEN RAISE EXCEPTION 'only % of 4 bad rows refused', refused; END IF;
            END $$"#,
        )
        .unwrap();
    }
}
