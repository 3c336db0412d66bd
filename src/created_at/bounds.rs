//! The bound functions, the key range of a time (`idgen_internal.id_time_lower(T, inclusive,
//! layout)` and its kin: what the walk adds runs these), and how a statement finds them: in this
//! database's `idgen_internal`, running this library's code, and the current role's to run.
//! Where any of that fails (no pg_idgen here, an older version without them, a schema of that
//! name someone else made, USAGE or EXECUTE revoked) nothing is added and nothing is raised.
use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::Uuid;

use pg_idgen_core::time_bounds::{snowflake_bounds, uuidv7_bound, Instant, Side};

use super::decoders::Decoder;
use crate::node::layouts::layout_named;
use crate::pg::errors::OrRaise;
use crate::pg::nodes::c_symbol;

/// µs from 1970 to 2000, PostgreSQL's epoch.
const PG_EPOCH_US: i128 = 946_684_800_000_000;

fn instant(ts: TimestampWithTimeZone) -> Instant {
    let us: i64 = ts.into();
    match us {
        i64::MIN => Instant::Before,
        i64::MAX => Instant::After,
        us => Instant::Micros(i128::from(us) + PG_EPOCH_US),
    }
}

fn side(lower: bool, inclusive: bool) -> Side {
    if lower {
        Side::Lower { inclusive }
    } else {
        Side::Upper { inclusive }
    }
}

/// The smallest ID of the layout whose time is at or after `ts` (or after, not inclusive); NULL
/// when none is. What a condition `id_timestamp(id, layout) >= ts` adds: `id >= this`.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn id_time_lower(ts: TimestampWithTimeZone, inclusive: bool, layout: &str) -> Option<i64> {
    let layout = layout_named(Some(layout)).or_raise();
    snowflake_bounds(&layout, instant(ts), side(true, inclusive)).flatten()
}

/// The largest ID of the layout whose time is at or before `ts` (or before); NULL when none is.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn id_time_upper(ts: TimestampWithTimeZone, inclusive: bool, layout: &str) -> Option<i64> {
    let layout = layout_named(Some(layout)).or_raise();
    snowflake_bounds(&layout, instant(ts), side(false, inclusive)).flatten()
}

/// The smallest UUID whose first 48 bits (a UUIDv7's millisecond) are at or after `ts`; NULL
/// when none is.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn uuidv7_time_lower(ts: TimestampWithTimeZone, inclusive: bool) -> Option<Uuid> {
    uuidv7_bound(instant(ts), side(true, inclusive)).map(Uuid::from_bytes)
}

/// The largest UUID whose first 48 bits are at or before `ts`; NULL when none is.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn uuidv7_time_upper(ts: TimestampWithTimeZone, inclusive: bool) -> Option<Uuid> {
    uuidv7_bound(instant(ts), side(false, inclusive)).map(Uuid::from_bytes)
}

/// The bound functions a statement may use, found once per statement.
#[derive(Default)]
pub(super) struct Bounds {
    /// `idgen_internal`, if it is there and the role may use it (None: not looked up yet).
    schema: Option<Option<pg_sys::Oid>>,
    /// Functions looked up so far: name, and its OID if usable.
    found: Vec<(&'static CStr, Option<pg_sys::Oid>)>,
}

impl Bounds {
    /// The lower and upper bound functions of `decoder`, if this role may run them.
    pub fn of(&mut self, decoder: &Decoder) -> Option<(pg_sys::Oid, pg_sys::Oid)> {
        let args: &[pg_sys::Oid] = if decoder.takes_layout {
            &[pg_sys::TIMESTAMPTZOID, pg_sys::BOOLOID, pg_sys::TEXTOID]
        } else {
            &[pg_sys::TIMESTAMPTZOID, pg_sys::BOOLOID]
        };
        Some((
            self.function(decoder.lower, args)?,
            self.function(decoder.upper, args)?,
        ))
    }

    fn function(&mut self, name: &'static CStr, args: &[pg_sys::Oid]) -> Option<pg_sys::Oid> {
        if let Some(&(_, oid)) = self.found.iter().find(|(n, _)| *n == name) {
            return oid;
        }
        let schema = *self.schema.get_or_insert_with(internal_schema);
        let oid = schema.and_then(|s| lookup(s, name, args));
        self.found.push((name, oid));
        oid
    }
}

/// `idgen_internal`'s OID, if it exists and the current role has USAGE on it: looked up without
/// the lookup's own permission check, which raises (a schema of that name that another role made
/// in a database without pg_idgen, or USAGE revoked from PUBLIC, would make every query fail).
fn internal_schema() -> Option<pg_sys::Oid> {
    // SAFETY: a catalog lookup and an ACL check, in a transaction.
    unsafe {
        let oid = pg_sys::get_namespace_oid(c"idgen_internal".as_ptr(), true);
        (oid != pg_sys::InvalidOid && may(pg_sys::NamespaceRelationId, oid, pg_sys::ACL_USAGE))
            .then_some(oid)
    }
}

/// The function `schema.name(args)`, if it runs this library's code and the role may run it.
fn lookup(schema: pg_sys::Oid, name: &CStr, args: &[pg_sys::Oid]) -> Option<pg_sys::Oid> {
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
        if oid == pg_sys::InvalidOid {
            return None;
        }
        let expected = format!("{}_wrapper", name.to_str().ok()?);
        (c_symbol(oid)? == expected && may(pg_sys::ProcedureRelationId, oid, pg_sys::ACL_EXECUTE))
            .then_some(oid)
    }
}

/// Whether the current role has `mode` on the object (a schema or a function).
fn may(class: pg_sys::Oid, oid: pg_sys::Oid, mode: u32) -> bool {
    // SAFETY: an ACL check in a transaction.
    unsafe {
        let role = pg_sys::GetUserId();
        let mode = mode as pg_sys::AclMode;
        #[cfg(feature = "pg15")]
        let result = if class == pg_sys::NamespaceRelationId {
            pg_sys::pg_namespace_aclcheck(oid, role, mode)
        } else {
            pg_sys::pg_proc_aclcheck(oid, role, mode)
        };
        #[cfg(not(feature = "pg15"))]
        let result = pg_sys::object_aclcheck(class, oid, role, mode);
        result == pg_sys::AclResult::ACLCHECK_OK
    }
}
