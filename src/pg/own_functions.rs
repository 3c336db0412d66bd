//! Finding pg_idgen's own functions from C code that adds calls of them to a statement (the
//! planner hook's rewrites): in this database's `idgen_internal`, running this library's code, and
//! the current role's to run. Where any of that fails (no pg_idgen here, an older version without
//! them, a schema of that name someone else made, USAGE or EXECUTE revoked) the caller gets None,
//! and nothing is raised.
use std::ffi::CStr;

use pgrx::pg_sys;

use super::nodes::c_symbol;

/// `idgen_internal`'s OID, if it exists and the current role has USAGE on it: looked up without
/// the lookup's own permission check, which raises (a schema of that name that another role made
/// in a database without pg_idgen, or USAGE revoked from PUBLIC, would make every query fail).
pub fn internal_schema() -> Option<pg_sys::Oid> {
    // SAFETY: a catalog lookup and an ACL check, in a transaction.
    unsafe {
        let oid = pg_sys::get_namespace_oid(c"idgen_internal".as_ptr(), true);
        (oid != pg_sys::InvalidOid && may(pg_sys::NamespaceRelationId, oid, pg_sys::ACL_USAGE))
            .then_some(oid)
    }
}

/// The function `schema.name(args)`, if it runs this library's code (the C symbol of that name
/// and `suffix`) and the role may run it.
pub fn lookup(
    schema: pg_sys::Oid,
    name: &CStr,
    args: &[pg_sys::Oid],
    suffix: &str,
) -> Option<pg_sys::Oid> {
    let oid = named(schema, name, args)?;
    let expected = format!("{}{suffix}_wrapper", name.to_str().ok()?);
    (c_symbol(oid)? == expected && may(pg_sys::ProcedureRelationId, oid, pg_sys::ACL_EXECUTE))
        .then_some(oid)
}

/// The function or aggregate `schema.name(args)`, if there is one.
pub fn named(schema: pg_sys::Oid, name: &CStr, args: &[pg_sys::Oid]) -> Option<pg_sys::Oid> {
    // SAFETY: a syscache lookup by name, argument types and schema (no permission check, no
    // search path), in a transaction; the oidvector lives in the current memory context.
    unsafe {
        let types = pg_sys::buildoidvector(args.as_ptr(), args.len() as i32);
        let oid = pg_sys::GetSysCacheOid(
            pg_sys::SysCacheIdentifier::PROCNAMEARGSNSP as _,
            pg_sys::Anum_pg_proc_oid as _,
            pg_sys::Datum::from(name.as_ptr()),
            pg_sys::Datum::from(types),
            pg_sys::Datum::from(schema),
            pg_sys::Datum::from(0),
        );
        (oid != pg_sys::InvalidOid).then_some(oid)
    }
}

/// Whether the current role has `mode` on the object (a schema, a function or a database).
pub fn may(class: pg_sys::Oid, oid: pg_sys::Oid, mode: u32) -> bool {
    // SAFETY: an ACL check in a transaction.
    unsafe {
        let role = pg_sys::GetUserId();
        let mode = mode as pg_sys::AclMode;
        #[cfg(feature = "pg15")]
        let result = if class == pg_sys::NamespaceRelationId {
            pg_sys::pg_namespace_aclcheck(oid, role, mode)
        } else if class == pg_sys::DatabaseRelationId {
            pg_sys::pg_database_aclcheck(oid, role, mode)
        } else {
            pg_sys::pg_proc_aclcheck(oid, role, mode)
        };
        #[cfg(not(feature = "pg15"))]
        let result = pg_sys::object_aclcheck(class, oid, role, mode);
        result == pg_sys::AclResult::ACLCHECK_OK
    }
}
