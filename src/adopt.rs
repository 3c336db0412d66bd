//! Adopting pg_idgen in an existing schema, in SQL (sql/key_types.sql, sql/convert.sql):
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
    "../sql/key_types.sql",
    name = "key_types",
    requires = ["status_views"],
);

extension_sql_file!(
    "../sql/convert.sql",
    name = "convert",
    requires = ["key_types"],
);
