//! Which database system a database's IDs were made on (README guarantee 3, across pg_upgrade and
//! restores onto another server).
//!
//! The durable mark lives in the data directory, outside every database: pg_upgrade, a restore
//! onto another server and a file-level copy carry a database's tables but not the mark, and the
//! new system's clocks know nothing of the IDs made before. `idgen.node_origins` lists the system
//! identifiers (pg_control) of the systems whose IDs this database may hold: the install script
//! records the system it is installed on, pg_dump keeps the rows, pg_upgrade carries the file.
//! When a row names another system, time-based IDs (Snowflake, message IDs, UUIDv7) are refused in
//! that database until `idgen.snowflake_start_after()` has moved this node's clocks past the old
//! IDs, which then leaves only this system's row. A node that pg_upgrade filled without a mark
//! refuses them in every database first (node/origins.rs), and a system whose mark was copied in
//! is not refused.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use pgrx::prelude::*;

use pgrx::PgSqlErrorCode;

use crate::errors::{not_ready, IdError};
use crate::node::origins::system_identifier;
use crate::pg::spi_read::{one_i64, Arg};

/// This backend's database was found to hold no other system's IDs (a backend serves one
/// database; a refusal is not cached, so it ends as soon as the operator acts). A backend is one
/// process with one thread: a plain static is per backend, and costs less to read on every ID
/// than a thread-local of a shared library.
static CHECKED: AtomicBool = AtomicBool::new(false);

/// True when `check` would pass without a query: this backend's database was already found clear.
#[inline(always)]
pub fn checked() -> bool {
    CHECKED.load(Relaxed)
}

/// Refuses to make time-based IDs in a database that holds IDs of another database system whose
/// mark this node has not been moved past. `kind` names the IDs for the message.
pub fn check(kind: &str) {
    if CHECKED.load(Relaxed) {
        return;
    }
    let me = system_identifier();
    let node = &crate::shmem::shared().origins;
    if node.upgraded_without_mark() {
        not_ready(format!(
            "{kind}s are refused on this node: pg_upgrade filled its data directory, and the old system's durable mark did not come along"
        ))
        .detail("The databases pg_upgrade carried hold IDs the old server made; this node's clocks know nothing of them, in any database, also in one created since. pg_idgen.origins in the data directory records it.")
        .hint("Stop this server, copy pg_idgen.mark and pg_idgen.layouts from the old data directory into the new one (which has none), and start it again; or, once the old server has stopped, set idgen.max_drift to at least the old server's and run SELECT idgen.snowflake_start_after(clock_timestamp() + current_setting('idgen.max_drift')::interval) in each database pg_upgrade carried (the first ends this node-wide refusal). The README's section on pg_upgrade explains.")
        .raise();
    }
    // Systems this node's clocks are above: its own, and those whose mark was copied into its
    // data directory (node/origins.rs).
    let past = node
        .past()
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(",");
    // A database whose extension predates the table (ALTER EXTENSION UPDATE not yet run) has
    // nothing recorded.
    let read = || -> Result<Option<i64>, String> {
        if !table_exists()? {
            return Ok(None);
        }
        one_i64(
            "SELECT system_identifier FROM idgen.node_origins
              WHERE system_identifier OPERATOR(pg_catalog.<>) $1
                AND system_identifier OPERATOR(pg_catalog.<>) ALL (pg_catalog.string_to_array($2, ',')::pg_catalog.int8[])
              LIMIT 1",
            &[Arg::Int8(me), Arg::Text(&past)],
        )
    };
    let other = read().unwrap_or_else(|e| {
        not_ready(format!("pg_idgen: could not read idgen.node_origins: {e}")).raise()
    });
    match other {
        None => CHECKED.store(true, Relaxed),
        Some(old) => not_ready(format!(
            "{kind}s are refused in this database: its IDs were made on another database system (system identifier {old}), whose durable mark did not come along"
        ))
        .detail(format!(
            "This system is {me}. pg_upgrade, a restore onto another server and a copy of the files carry a database's tables, not the mark in the data directory that keeps new IDs above the old ones."
        ))
        .hint("Move this node's clocks past the newest ID the old system made: SELECT idgen.snowflake_start_after(<its time>) in this database. Once the old system has stopped, its IDs are at most its idgen.max_drift ahead of now: set this node's idgen.max_drift to at least the old system's, reload, and run SELECT idgen.snowflake_start_after(clock_timestamp() + current_setting('idgen.max_drift')::interval). The README's upgrade section explains.")
        .raise(),
    }
}

/// Whether `idgen.node_origins` exists: not where the extension's SQL objects predate it (the
/// library is new, ALTER EXTENSION pg_idgen UPDATE not yet run), and nothing is recorded there.
/// Read-only SPI: this runs inside parallel queries too (pg/spi_read.rs).
fn table_exists() -> Result<bool, String> {
    let n = one_i64(
        "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'idgen' AND c.relname = 'node_origins'",
        &[],
    )?;
    Ok(n == Some(1))
}

/// After `idgen.snowflake_start_after()`: this node's clocks are past every ID in this database,
/// whichever system made them.
pub fn adopt() {
    let exists = table_exists().unwrap_or_else(|e| {
        not_ready(format!(
            "pg_idgen: could not look for idgen.node_origins: {e}"
        ))
        .raise()
    });
    let me = system_identifier();
    // The node-wide refusal after pg_upgrade ends too: the caller's time bounds the old system's
    // IDs (the README's recipe). Other databases that name another system are still refused until
    // this runs there: their IDs may be later than this database's.
    crate::node::origins::moved_past_upgrade(
        &crate::shmem::shared().origins,
        &crate::pg::data_dir(),
        crate::shmem::reserve_lock(),
    )
    .unwrap_or_else(|e| {
        IdError::new(
            PgSqlErrorCode::ERRCODE_IO_ERROR,
            format!("pg_idgen: could not record the move in pg_idgen.origins: {e}"),
        )
        .raise()
    });
    if !exists {
        CHECKED.store(true, Relaxed);
        return;
    }
    Spi::run_with_args(
        "DELETE FROM idgen.node_origins WHERE system_identifier OPERATOR(pg_catalog.<>) $1;
         INSERT INTO idgen.node_origins (system_identifier)
         SELECT $1 WHERE NOT EXISTS (SELECT FROM idgen.node_origins WHERE system_identifier OPERATOR(pg_catalog.=) $1)",
        &[me.into()],
    )
    .unwrap_or_else(|e| {
        not_ready(format!("pg_idgen: could not record this system in idgen.node_origins: {e}"))
            .hint("Run idgen.snowflake_start_after() as a member of idgen_admin, after ALTER EXTENSION pg_idgen UPDATE.")
            .raise()
    });
    CHECKED.store(true, Relaxed);
}

#[pg_schema]
mod idgen {
    use pgrx::prelude::*;

    /// This database system's identifier (pg_control), for idgen.node_origins.
    #[pg_extern(stable, parallel_safe)]
    fn node_system_identifier() -> i64 {
        crate::node::origins::system_identifier()
    }
}

extension_sql!(
    r#"
CREATE TABLE idgen.node_origins (
    system_identifier bigint NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE idgen.node_origins IS 'The database systems (pg_control system identifiers) whose IDs this database may hold. When a row names another system (after pg_upgrade, a restore onto another server, a file copy), Snowflake IDs, message IDs and UUIDv7s are refused here until idgen.snowflake_start_after() moves this node past the old IDs, which leaves only this system''s row.';
COMMENT ON COLUMN idgen.node_origins.system_identifier IS 'system_identifier of pg_control_system() on the system that made IDs here.';
COMMENT ON COLUMN idgen.node_origins.recorded_at IS 'When the row was written.';
SELECT pg_catalog.pg_extension_config_dump('idgen.node_origins', '');
INSERT INTO idgen.node_origins (system_identifier) VALUES (idgen.node_system_identifier());
"#,
    name = "node_origins",
    requires = [idgen::node_system_identifier],
);

// A database's owner restores its rows with the application's (pg_restore --no-owner, the
// managed-database recipe), so that a restore onto another server is refused there too; nobody
// else adds rows (a row naming another system refuses the database's time-based IDs).
extension_sql!(
    r#"
CREATE FUNCTION idgen_internal.node_origins_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT (pg_has_role(current_user, 'idgen_admin', 'MEMBER')
            OR pg_has_role(current_user, (SELECT d.datdba FROM pg_database d WHERE d.datname = current_database()), 'MEMBER')) THEN
        RAISE EXCEPTION 'permission denied to add rows to idgen.node_origins'
            USING ERRCODE = '42501',
                  DETAIL = 'Only the database''s owner (restoring its dump) and members of idgen_admin record the systems whose IDs a database holds.',
                  HINT = 'Restore as the database''s owner or as a member of idgen_admin.';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER node_origins_insert BEFORE INSERT ON idgen.node_origins
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.node_origins_insert();
"#,
    name = "node_origins_insert",
    requires = ["node_origins"],
);
