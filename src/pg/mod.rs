//! PostgreSQL plumbing that knows no feature of pg_idgen.

pub mod after_start;
pub mod as_owner;
pub mod backend_local;
pub mod dropdb_hook;
pub mod errors;
pub mod fast_entry;
pub mod latest_scan;
pub mod locks_released;
pub mod lwlock;
pub mod nodes;
pub mod own_functions;
pub mod page_stamp;
pub mod planner_hook;
pub mod plans;
pub mod privilege_hint;
pub mod recovery;
pub mod session_lock;
pub mod shmem;
pub mod spi_read;
pub mod strong_random;
pub mod syncrep;
pub mod time;
pub mod toplevel;
pub mod utility_hook;
pub mod worker_loop;
pub mod zone_plans;

/// Sets one of this process's settings for the rest of its life, above anything a database, role
/// or session says (`PGC_S_OVERRIDE`), as the server does for a superuser's SET: for a background
/// worker that must not inherit what the database's owner or a role set. An unknown name or a
/// value the setting refuses is an ERROR.
pub fn set_for_process(name: &std::ffi::CStr, value: &std::ffi::CStr) {
    // SAFETY: two NUL-terminated strings; SetConfigOption copies them and raises an ERROR (a
    // longjmp pgrx turns into a panic at its boundary) for a name or value it refuses.
    unsafe {
        pgrx::pg_sys::SetConfigOption(
            name.as_ptr(),
            value.as_ptr(),
            pgrx::pg_sys::GucContext::PGC_SUSET,
            pgrx::pg_sys::GucSource::PGC_S_OVERRIDE,
        )
    };
}

/// A relation's name as PostgreSQL's messages give it (without its schema); its OID for one
/// dropped meanwhile.
pub fn relation_name(oid: pgrx::pg_sys::Oid) -> String {
    // SAFETY: a catalog lookup in a transaction; NULL for a relation that does not exist.
    unsafe {
        let name = pgrx::pg_sys::get_rel_name(oid);
        if name.is_null() {
            u32::from(oid).to_string()
        } else {
            std::ffi::CStr::from_ptr(name)
                .to_string_lossy()
                .into_owned()
        }
    }
}

/// A relation's schema-qualified name, quoted where SQL needs it (for a statement to name it).
pub fn qualified_name(oid: pgrx::pg_sys::Oid) -> String {
    // SAFETY: catalog lookups in a transaction; quote_qualified_identifier returns a palloc'd
    // string. The caller holds the relation (locked), so it exists.
    unsafe {
        let ns = pgrx::pg_sys::get_namespace_name(pgrx::pg_sys::get_rel_namespace(oid));
        let rel = pgrx::pg_sys::get_rel_name(oid);
        std::ffi::CStr::from_ptr(pgrx::pg_sys::quote_qualified_identifier(ns, rel))
            .to_string_lossy()
            .into_owned()
    }
}

/// The data directory, where the node's files are (the mark, the layout history, the origins).
pub fn data_dir() -> std::path::PathBuf {
    // SAFETY: DataDir is set by the postmaster before any of our code runs and never freed.
    unsafe {
        std::path::PathBuf::from(
            std::ffi::CStr::from_ptr(pgrx::pg_sys::DataDir)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// Whether the setting `name` still has its built-in default: no configuration file, command
/// line, ALTER SYSTEM or other source gave it a value. False for a setting that does not exist.
pub fn setting_is_default(name: &std::ffi::CStr) -> bool {
    // SAFETY: GUC records live as long as the process; read in the process that owns them.
    unsafe {
        #[cfg(feature = "pg15")]
        let conf = {
            let vars = pgrx::pg_sys::get_guc_variables();
            let n = pgrx::pg_sys::GetNumConfigOptions();
            (0..n as usize)
                .map(|i| *vars.add(i))
                .find(|c| !c.is_null() && std::ffi::CStr::from_ptr((**c).name) == name)
                .unwrap_or(std::ptr::null_mut())
        };
        #[cfg(not(feature = "pg15"))]
        let conf =
            pgrx::pg_sys::find_option(name.as_ptr(), false, true, pgrx::pg_sys::DEBUG1 as i32);
        !conf.is_null() && (*conf).source == pgrx::pg_sys::GucSource::PGC_S_DEFAULT
    }
}
