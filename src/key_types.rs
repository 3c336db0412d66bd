//! The check that a column defaulting to `snowflake_next()` or `segment_next()` can hold the IDs,
//! made when the DDL runs: an event trigger in `sql/key_types.sql`, set by `idgen.key_type_check`
//! (gucs.rs). An event trigger rather than a check in the generators: the generators cannot see the
//! column, and by the first INSERT the schema is deployed; rather than a check at CREATE EXTENSION,
//! because the tables come later.

use pgrx::prelude::*;

extension_sql_file!(
    "../sql/key_types.sql",
    name = "key_types",
    requires = ["status_views"],
);
