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
/// everyone reads, and to which a database's owner adds rows). tests/pg_regress/sql/roles.sql checks this list against the catalog (each object refused with its hint). (The functions behind
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
