//! The roles of pg_idgen (created by sql/install/finalize.sql): `idgen_client` leases worker ids and takes
//! whole segment ranges, `idgen_admin` administers everything in the `idgen` schema. A plain
//! role that calls one of their functions, or reads one of their tables or views, gets
//! PostgreSQL's "permission denied" (42501) with a hint naming the role to grant.

use crate::pg::privilege_hint;

/// Objects in `idgen` that members of `idgen_client` (and `idgen_admin`) may use.
const CLIENT: &[&str] = &[
    "worker_acquire",
    "worker_heartbeat",
    "worker_release",
    "segment_alloc",
];

/// Objects in `idgen` that only `idgen_admin` may use (or change, for `node_origins`, which
/// everyone reads, and to which a database's owner adds rows). The pg_test below checks this list against the catalog. (The functions behind
/// the views and tables live in `idgen_internal` and are not called by users.)
const ADMIN: &[&str] = &[
    // functions
    "node_system_identifier",
    "public_key_create",
    "public_key_drop",
    "public_key_rotate",
    "segment_advance",
    "segment_alter",
    "segment_create",
    "segment_drop",
    "snowflake_start_after",
    // tables and views
    "node_origins",
    "segments",
    "segments_retired",
    "workers",
    "segment_status",
    "worker_leases",
];

pub fn init() {
    privilege_hint::on_permission_denied(hint_for, &[c"idgen"]);
}

/// Functions in the extension's own schema that PUBLIC may not execute: IDs at a past time use up
/// the node's backfill counters (docs/backfill.md).
const BACKFILL: &[&str] = &[
    "snowflake_at",
    "snowflake_at_batch",
    "uuidv7_at",
    "uuidv7_at_batch",
];

/// The role a user needs to use the `idgen` object of that name, if PUBLIC may not.
fn role_for(object: &str) -> Option<&'static str> {
    if CLIENT.contains(&object) {
        Some("idgen_client")
    } else if ADMIN.contains(&object) {
        Some("idgen_admin")
    } else {
        None
    }
}

/// Views of `ADMIN` that monitoring roles read too (sql/install/finalize.sql grants them to
/// pg_monitor; of idgen.worker_leases every column but the lease numbers).
const MONITORED: &[&str] = &["segment_status", "worker_leases"];

/// The hint for a privilege error about `object`. PostgreSQL's message names the object without
/// its schema, so the hint says which object it means.
fn hint_for(object: &str) -> Option<String> {
    if BACKFILL.contains(&object) {
        return Some(format!(
            "pg_idgen's {object}() makes IDs at a past time from the node's backfill counters: it is for members of idgen_admin and the roles they grant it to, with GRANT idgen_admin TO <role> or GRANT EXECUTE ON FUNCTION {object} TO <role>."
        ));
    }
    let role = role_for(object)?;
    if MONITORED.contains(&object) {
        return Some(format!(
            "pg_idgen's idgen.{object} is for members of idgen_admin, and for monitoring roles (pg_monitor){}: a superuser grants them with GRANT idgen_admin TO <role> or GRANT pg_monitor TO <role>.",
            if object == "worker_leases" { ", who read every column but lease" } else { "" }
        ));
    }
    // idgen_admin is a member of idgen_client.
    let members = if role == "idgen_client" {
        "idgen_client (or idgen_admin)"
    } else {
        role
    };
    Some(format!(
        "pg_idgen's idgen.{object} is for members of {members}: a superuser grants it with GRANT {role} TO <role>."
    ))
}

#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests {
    use super::{hint_for, role_for};
    use pgrx::prelude::*;

    /// Every object of the schema that PUBLIC may not use is in exactly the list of the role that
    /// may, so no privilege error about one goes without its hint, and no hint names a wrong role.
    #[pg_test]
    fn the_lists_match_the_grants() {
        let rows: Vec<(String, bool, bool, bool)> = Spi::connect(|c| {
            c.select(
                "SELECT p.proname::text,
                        has_function_privilege('public', p.oid, 'EXECUTE'),
                        has_function_privilege('idgen_client', p.oid, 'EXECUTE'),
                        has_function_privilege('idgen_admin', p.oid, 'EXECUTE')
                   FROM pg_proc p WHERE p.pronamespace = 'idgen'::regnamespace
                 UNION ALL
                 SELECT c.relname::text,
                        -- a view is used by reading it, a table by changing it too (everyone
                        -- may add rows to node_origins, through its trigger's check; only
                        -- idgen_admin deletes them)
                        has_table_privilege('public', c.oid, 'SELECT')
                          AND (c.relkind = 'v' OR has_table_privilege('public', c.oid, 'DELETE')),
                        has_table_privilege('idgen_client', c.oid, 'SELECT')
                          AND (c.relkind = 'v' OR has_table_privilege('idgen_client', c.oid, 'DELETE')),
                        has_table_privilege('idgen_admin', c.oid, 'SELECT')
                          AND (c.relkind = 'v' OR has_table_privilege('idgen_admin', c.oid, 'DELETE'))
                   FROM pg_class c
                  WHERE c.relnamespace = 'idgen'::regnamespace AND c.relkind IN ('r', 'v')",
                None,
                &[],
            )
            .unwrap()
            .map(|r| {
                (
                    r.get::<String>(1).unwrap().unwrap(),
                    r.get::<bool>(2).unwrap().unwrap(),
                    r.get::<bool>(3).unwrap().unwrap(),
                    r.get::<bool>(4).unwrap().unwrap(),
                )
            })
            .collect()
        });
        assert!(rows.len() > 15, "{rows:?}");
        for (name, public, client, admin) in rows {
            let expected = if public {
                None
            } else if client {
                Some("idgen_client")
            } else {
                Some("idgen_admin")
            };
            assert!(admin, "idgen_admin may not use idgen.{name}");
            assert_eq!(role_for(&name), expected, "idgen.{name}");
            assert_eq!(
                hint_for(&name).is_some(),
                expected.is_some(),
                "idgen.{name}"
            );
        }
    }

    #[pg_test]
    fn hints_name_the_role() {
        assert_eq!(
            hint_for("segment_create").as_deref(),
            Some("pg_idgen's idgen.segment_create is for members of idgen_admin: a superuser grants it with GRANT idgen_admin TO <role>.")
        );
        assert!(hint_for("worker_acquire")
            .unwrap()
            .contains("GRANT idgen_client TO"));
        assert_eq!(hint_for("my_own_table"), None);
        assert!(hint_for("worker_leases")
            .unwrap()
            .contains("GRANT pg_monitor TO <role>"));
    }
}
