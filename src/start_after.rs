//! `idgen.snowflake_start_after()`: moves this node's clock streams past a time, durably, and with
//! it past every ID in this database that another database system made (docs/guarantees.md, guarantee 3,
//! across pg_upgrade and restores onto another server; node/origin_check.rs refuses until then).
//! `node_system_identifier()` names this system, for `idgen.node_origins`.

use pgrx::prelude::*;

#[pg_schema]
mod idgen {
    use pgrx::prelude::*;
    use pgrx::{PgLogLevel, PgSqlErrorCode};

    use crate::gucs;
    use crate::pg::errors::{IdError, OrRaise};
    use crate::pg::time::{ms_of_ts, now_ms, ts_of_ms};
    use pg_idgen_core::civil::format_utc_ms;

    /// Moves this node's clocks (Snowflake IDs, message IDs, UUIDv7s) past ts, durably, and returns
    /// when the next IDs start: after restoring onto a new server, moving a worker id to another
    /// machine, or setting a clock back for good. Give ts from a clock you trust: further than
    /// idgen.max_drift ahead of this node's clock, it is taken with a WARNING and the node's IDs
    /// wait until its clock is within idgen.max_drift of it; more than an hour past that, it is
    /// refused.
    ///
    /// `ts` comes from outside: a node rebuilt from a backup, or one whose clock is behind, cannot
    /// know from its own clock how far ahead the IDs it replaces went. So a `ts` further ahead of
    /// this node's clock than idgen.max_drift is taken (with a WARNING): the node's IDs then wait,
    /// or are refused, until its clock is within idgen.max_drift of it. Only a `ts` more than an
    /// hour past that, which no clock error explains, is refused as a mistake.
    #[pg_extern(volatile, parallel_unsafe)]
    fn snowflake_start_after(ts: TimestampWithTimeZone) -> TimestampWithTimeZone {
        let ms = ms_of_ts(ts).or_raise();
        let now = now_ms();
        let drift = gucs::max_drift_ms();
        if ms > now + drift + BEHIND_MS {
            crate::pg::errors::invalid(format!(
                "idgen.snowflake_start_after: {} is more than idgen.max_drift ({drift} ms) and an hour ahead of the clock",
                format_utc_ms(ms)
            ))
            .detail(format!("This node's clock reads {}.", format_utc_ms(now)))
            .hint("Give the time of the newest ID to move past (or when the node it replaces was last seen, plus that node's idgen.max_drift), from a clock you trust; fix this node's clock first if it is that far behind.")
            .raise();
        }
        let next_ms = crate::node::start_after(ms)
            .map_err(|e| {
                IdError::new(
                    PgSqlErrorCode::ERRCODE_IO_ERROR,
                    format!("could not persist the high-water mark: {e}"),
                )
            })
            .or_raise();
        if ms > now + drift {
            IdError::new(
                PgSqlErrorCode::ERRCODE_WARNING,
                format!(
                    "idgen.snowflake_start_after: {} is {} ms ahead of this node's clock, more than idgen.max_drift ({drift} ms): this node's IDs wait or are refused until its clock reaches {}",
                    format_utc_ms(ms),
                    ms - now,
                    format_utc_ms(ms - drift)
                ),
            )
            .hint("If this node's clock is behind, fix it (NTP): IDs are never made further ahead of the clock than idgen.max_drift.")
            .report(PgLogLevel::WARNING);
        }
        ts_of_ms(next_ms)
    }

    /// How far past idgen.max_drift a time may be ahead of this node's clock: a clock behind by
    /// up to this is waited out; a time further ahead is taken for a mistake.
    const BEHIND_MS: i64 = 3_600_000;

    /// This database system's identifier (system_identifier of pg_control_system()), as
    /// idgen.node_origins records it.
    #[pg_extern(stable, parallel_safe)]
    fn node_system_identifier() -> i64 {
        crate::node::system_identifier()
    }
}

extension_sql_file!(
    "../sql/install/node_origins.sql",
    name = "node_origins",
    requires = [idgen::node_system_identifier],
);
