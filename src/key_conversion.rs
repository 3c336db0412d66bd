//! Adopting pg_idgen in an existing schema, in SQL (sql/install/key_types.sql, sql/install/convert.sql):
//!
//! - the check that a column defaulting to `snowflake_next()` or `segment_next()` can hold the
//!   IDs, made when the DDL runs: an event trigger, set by `idgen.key_type_check` (gucs.rs). An
//!   event trigger rather than a check in the generators: the generators cannot see the column,
//!   and by the first INSERT the schema is deployed; rather than a check at CREATE EXTENSION,
//!   because the tables come later;
//! - `idgen.convert_to_snowflake` and `idgen.convert_schema_to_snowflake`, which move serial,
//!   identity and nextval() key columns onto `snowflake_next()`.

use pgrx::prelude::*;

extension_sql_file!(
    "../sql/install/key_types.sql",
    name = "key_types",
    requires = ["status_views"],
);

#[pg_schema]
mod idgen_internal {
    use pgrx::prelude::*;
    use pgrx::{AnyNumeric, PgSqlErrorCode};

    use crate::pg::as_owner::as_owner;
    use crate::pg::errors::IdError;

    /// The largest value of a column, read as its table's owner in a security-restricted operation
    /// (used by the conversion functions); the caller must be allowed to read the column.
    ///
    /// The largest value in a column, read as the table's owner (pg/as_owner.rs). The conversion
    /// functions run as their caller; reading a table could run its owner's code (row-level
    /// security, index expressions, operators), which must not act with the caller's rights. The
    /// caller must still be allowed to read the column: this is no way around a missing grant.
    #[pg_extern(volatile, parallel_unsafe)]
    fn column_max(tbl: pg_sys::Oid, col: &str) -> Option<AnyNumeric> {
        let found = Spi::connect(|c| {
            let t = c.select(
                "SELECT pg_catalog.format('SELECT pg_catalog.max(%I)::pg_catalog.numeric FROM %I.%I',
                                          a.attname, n.nspname, c.relname),
                        c.relowner,
                        pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT')
                   FROM pg_catalog.pg_class c
                   JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
                   JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.oid
                  WHERE c.oid OPERATOR(pg_catalog.=) $1 AND a.attname OPERATOR(pg_catalog.=) $2
                    AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped",
                Some(1),
                &[tbl.into(), col.into()],
            )?;
            if t.is_empty() {
                return Ok(None);
            }
            let row = t.first();
            Ok::<_, pgrx::spi::Error>(Some((
                row.get::<String>(1)?.unwrap_or_default(),
                row.get::<pg_sys::Oid>(2)?.unwrap_or(pg_sys::Oid::INVALID),
                row.get::<bool>(3)?.unwrap_or(false),
            )))
        })
        .unwrap_or_else(|e| {
            crate::pg::errors::internal(format!("idgen_internal.column_max: {e}")).raise()
        });
        let Some((query, owner, may_read)) = found else {
            IdError::new(
                PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
                format!(
                    "column \"{col}\" of relation {} does not exist",
                    tbl.to_u32()
                ),
            )
            .raise()
        };
        if !may_read {
            IdError::new(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                format!("permission denied to read column \"{col}\" of the table being converted"),
            )
            .hint("Convert tables you own: their owner (or a member of the owning role) runs the conversion.")
            .raise()
        }
        as_owner(owner, || Spi::get_one::<AnyNumeric>(&query)).unwrap_or_else(|e| {
            crate::pg::errors::internal(format!("idgen_internal.column_max: {e}")).raise()
        })
    }
}

extension_sql_file!(
    "../sql/install/convert.sql",
    name = "convert",
    requires = ["key_types", idgen_internal::column_max],
);
