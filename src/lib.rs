//! The root of pg_idgen, PostgreSQL as the distributed ID service of its users.
//!
//! `core` is pure Rust (layouts, the generator's state machine, the durable mark); the other
//! modules are the thin pgrx layer that binds it to PostgreSQL.

use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

mod adopt;
mod allocator;
mod backfill;
mod codec;
mod created_at;
mod decode;
mod gucs;
mod key_conversion;
mod lease;
mod msgid;
mod node;
mod online;
mod pg;
mod public_id;
mod roles;
mod segment;
mod snowflake;
mod start_after;
mod status;
mod typeid;
mod uuidv7;

pgrx::pg_module_magic!();

/// What to add to postgresql.conf; every message about preloading names it exactly.
const PRELOAD_LINE: &str = "shared_preload_libraries = 'pg_idgen'";

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // SAFETY: reading a flag the postmaster sets while it loads shared_preload_libraries.
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        // Loaded by CREATE EXTENSION or a function call without preloading: there is no shared
        // memory for the generator and no background worker, so refuse every entry point.
        pg::errors::IdError::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "pg_idgen must be loaded via shared_preload_libraries",
        )
        .detail("pg_idgen keeps each node's generator in shared memory and runs a background worker; both are set up only at server start.")
        .hint(format!(
            "Add {PRELOAD_LINE} to postgresql.conf (or append pg_idgen to the existing list) and restart the server."
        ))
        .raise();
    }
    pg::errors::keep_backtraces_out_of_errors();
    gucs::define();
    // SAFETY: called once from _PG_init, as PostgreSQL documents.
    unsafe { pg_sys::MarkGUCPrefixReserved(c"idgen".as_ptr()) };
    pg::shmem::install_hooks();
    node::init();
    lease::keeper::check_lease_settings();
    if let Some(w) = node::unset_warning() {
        pgrx::warning!("pg_idgen: {w}; set idgen.worker_id (0 too, explicitly) in postgresql.conf");
    }
    allocator::init();
    segment::init();
    backfill::init();
    created_at::init();
    adopt::init();
    lease::keeper::register();
    pg::after_start::add(online::resume::start);
    roles::init();
}

// Both schemas first, whatever order pgrx gives the rest: the SQL of an `idgen_internal` module
// creates objects in `idgen` too, and nothing else makes pgrx create `idgen` before it.
extension_sql!(
    "CREATE SCHEMA IF NOT EXISTS idgen;\nCREATE SCHEMA IF NOT EXISTS idgen_internal;\n",
    name = "schemas",
    bootstrap
);
extension_sql_file!("../sql/install/finalize.sql", name = "finalize", finalize);
