//! The IDs this database already holds of a business type, in the columns that default to
//! `segment_next()` of it: a type created (again) starts above them.

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::pg::as_owner::as_owner;

/// The highest value held by the integer columns of this database whose default is
/// `segment_next('<name>')` (0 if none): a type created (again) goes on above them. After a
/// restore that could not bring `idgen.segments` back (a database owner who may not write it), or
/// a type deleted with its retired row, this is what keeps `segment_create` from starting below
/// IDs the application already holds. Each table is read as its owner (pg/as_owner.rs): its
/// row-level security, index expressions or operators may be any role's code, which must not run
/// with the rights of the administrator calling segment_create.
pub fn above_columns(name: &str) -> i64 {
    let queries = Spi::connect(|c| {
        c.select(
            // Every name qualified: segment_create runs under its caller's search_path.
            // The table is named with its schema: it is read under another search_path.
            "SELECT pg_catalog.format('SELECT pg_catalog.max(%I)::pg_catalog.int8 FROM %I.%I', a.attname, n.nspname, cl.relname),
                    pg_catalog.format('%I.%I.%I', n.nspname, cl.relname, a.attname), cl.relowner
               FROM pg_catalog.pg_attrdef d
               JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) d.adrelid
                                              AND a.attnum OPERATOR(pg_catalog.=) d.adnum
               JOIN pg_catalog.pg_class cl ON cl.oid OPERATOR(pg_catalog.=) d.adrelid
               JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) cl.relnamespace
              WHERE cl.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog.\"char\"[])
                AND NOT cl.relispartition AND NOT a.attisdropped
                AND a.atttypid OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.int8'::pg_catalog.regtype,
                    'pg_catalog.int4'::pg_catalog.regtype, 'pg_catalog.numeric'::pg_catalog.regtype]::pg_catalog.oid[])
                AND pg_catalog.strpos(pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                                      'segment_next(' OPERATOR(pg_catalog.||) pg_catalog.quote_literal($1)
                                      OPERATOR(pg_catalog.||) '::text)') OPERATOR(pg_catalog.>) 0",
            None,
            &[name.into()],
        )?
        .map(|row| {
            Ok((
                row.get::<String>(1)?,
                row.get::<String>(2)?,
                row.get::<pg_sys::Oid>(3)?,
            ))
        })
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .unwrap_or_else(|e| {
        crate::pg::errors::internal(format!("idgen.segment_create: could not look for columns using \"{name}\": {e}"))
            .raise()
    });
    let mut top = 0;
    for (query, column, owner) in queries {
        let (Some(query), Some(column), Some(owner)) = (query, column, owner) else {
            continue;
        };
        let held = as_owner(owner, || Spi::get_one::<i64>(&query)).unwrap_or_else(|e| {
            crate::pg::errors::internal(format!(
                "idgen.segment_create: could not read {column}: {e}"
            ))
            .raise()
        });
        if let Some(held) = held.filter(|h| *h > top) {
            pgrx::notice!(
                "business type \"{name}\": column {column} (default segment_next('{name}')) already holds IDs up to {held}: the type starts above them"
            );
            top = held;
        }
    }
    top
}
