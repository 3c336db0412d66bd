//! Adopted sequences: an existing application's `serial`, `bigserial`, IDENTITY and `nextval()`
//! yield the node's Snowflake IDs, with no change to its tables, defaults or code
//! (`idgen.adopt_sequence`, `idgen.adopt_sequences`, `idgen.release_sequence`, in
//! sql/install/adopt.sql). Unlike `idgen.convert_to_snowflake` (key_conversion.rs), which moves a
//! key column onto `DEFAULT snowflake_next()`, adoption leaves the schema as it is and changes
//! where the sequence's numbers come from.
//!
//! PostgreSQL 15-19 have no sequence access method, so the draws are caught where they are made:
//!
//! - `rewrite.rs`: before planning, every draw in a statement (a default or IDENTITY value the
//!   rewriter put there, the application's own `nextval`, `currval`, `setval`, `lastval`) becomes
//!   a call of `draw.rs`'s functions: the node's next Snowflake ID (a reserved block of them for
//!   INCREMENT BY n: pg_idgen_core::sequence_blocks), the session's last one, or `setval`'s
//!   defined meaning;
//! - `copy.rs`: COPY FROM, which evaluates defaults without a plan, is staged through a
//!   temporary table and an INSERT ... SELECT;
//! - `registry.rs`: which sequences are adopted, as this backend knows it.
//!
//! pg_idgen's last line: adopting sets the sequence at its MAXVALUE (NO CYCLE), so that any draw
//! by PostgreSQL's own code that the rewrite did not reach (an inlined SQL function's, ALTER
//! TABLE's filling of a new column, another extension's C code) fails with "reached maximum
//! value of sequence" instead of handing out a plain number; after each ALTER SEQUENCE, ALTER
//! TABLE and TRUNCATE (RESTART IDENTITY) it is set there again (`rearm`), and CYCLE is refused.
//! Giving the sequence back sets it above every value handed out.
mod copy;
mod draw;
mod registry;
mod rewrite;

use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

use crate::pg::errors::IdError;
use crate::pg::utility_hook::Utility;

extension_sql_file!(
    "../../sql/install/adopt.sql",
    name = "adopt",
    requires = ["convert"],
);

/// Sets it up while preloading.
pub fn init() {
    crate::pg::planner_hook::before_planning(rewrite::rewrite);
    crate::pg::utility_hook::around_utility(around_utility);
}

/// COPY FROM is staged where it draws from an adopted sequence; after ALTER SEQUENCE, ALTER
/// TABLE and TRUNCATE, adopted sequences are set at their MAXVALUE again.
fn around_utility(u: &Utility) -> bool {
    let stmt = u.statement();
    // SAFETY: a parse tree node, by its tag.
    let tag = unsafe { (*stmt).type_ };
    match tag {
        pg_sys::NodeTag::T_CopyStmt => copy::copy_from(u, stmt.cast()),
        pg_sys::NodeTag::T_AlterSeqStmt
        | pg_sys::NodeTag::T_AlterTableStmt
        | pg_sys::NodeTag::T_TruncateStmt => {
            u.run(u.pstmt);
            if registry::any() {
                rearm();
            }
            true
        }
        _ => false,
    }
}

/// Sets every adopted sequence that PostgreSQL's own draw could take a number from (RESTART,
/// TRUNCATE ... RESTART IDENTITY, a higher MAXVALUE) at its MAXVALUE again; refuses CYCLE.
fn rearm() {
    let Some(owner) = table_owner() else { return };
    let found: Vec<(pg_sys::Oid, i64, bool)> = crate::pg::as_owner::as_owner(owner, || {
        Spi::connect(|c| {
            let rows = c.select(
                "SELECT a.seq::pg_catalog.oid, s.seqmax, s.seqcycle
                   FROM idgen_internal.adopted_sequences a
                   JOIN pg_catalog.pg_sequence s ON s.seqrelid OPERATOR(pg_catalog.=) a.seq::pg_catalog.oid
                  WHERE s.seqcycle
                     OR pg_catalog.pg_sequence_last_value(a.seq) IS DISTINCT FROM s.seqmax",
                None,
                &[],
            )?;
            rows.map(|r| {
                Ok((
                    r.get::<pg_sys::Oid>(1)?.unwrap_or(pg_sys::InvalidOid),
                    r.get::<i64>(2)?.unwrap_or(i64::MAX),
                    r.get::<bool>(3)?.unwrap_or(false),
                ))
            })
            .collect::<Result<Vec<_>, pgrx::spi::Error>>()
        })
    })
    .unwrap_or_else(|e| crate::pg::errors::internal(format!("adopted sequences: {e}")).raise());
    for (seq, max, cycle) in found {
        if cycle {
            IdError::new(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!(
                    "sequence \"{}\" is adopted by pg_idgen and cannot CYCLE",
                    crate::pg::relation_name(seq)
                ),
            )
            .hint("Give it back first (idgen.release_sequence), or keep it NO CYCLE.")
            .raise();
        }
        crate::pg::as_owner::as_owner(owner, || arm(seq, max));
    }
}

/// PostgreSQL's own `setval(seq, value, true)` (at MAXVALUE: its next draw by PostgreSQL's code
/// fails).
fn arm(seq: pg_sys::Oid, value: i64) {
    // SAFETY: a call of the built-in setval(regclass, bigint, boolean) (OID 1765) with non-NULL
    // arguments through the function manager.
    unsafe {
        pg_sys::OidFunctionCall3Coll(
            pg_sys::Oid::from(1765),
            pg_sys::InvalidOid,
            seq.into(),
            value.into(),
            true.into(),
        );
    }
}

/// `ALTER SEQUENCE seq RESTART [WITH with]`, as the current role (the sequence's owner), through
/// the utility hook (which sets an adopted sequence at its MAXVALUE afterwards).
fn restart(seq: pg_sys::Oid, with: Option<i64>) {
    let qualified = crate::pg::qualified_name(seq);
    let with = with.map_or(String::new(), |w| format!(" WITH {w}"));
    Spi::run(&format!("ALTER SEQUENCE {qualified} RESTART{with}"))
        .unwrap_or_else(|e| crate::pg::errors::internal(format!("{e}")).raise());
}

/// The owner of `idgen_internal.adopted_sequences`, where it is pg_idgen's.
fn table_owner() -> Option<pg_sys::Oid> {
    registry::table_of_extension().map(|(_, owner)| owner)
}

/// The sequence's catalog row: (type, increment, MAXVALUE, CYCLE, persistence, owner).
fn sequence_row(seq: pg_sys::Oid) -> Option<(pg_sys::Oid, i64, i64, bool, u8, pg_sys::Oid)> {
    // SAFETY: syscache lookups and releases, in a transaction.
    unsafe {
        let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::SEQRELID as _, seq.into());
        if tup.is_null() {
            return None;
        }
        let s = pg_sys::GETSTRUCT(tup) as *mut pg_sys::FormData_pg_sequence;
        let row = ((*s).seqtypid, (*s).seqincrement, (*s).seqmax, (*s).seqcycle);
        pg_sys::ReleaseSysCache(tup);
        let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::RELOID as _, seq.into());
        if tup.is_null() {
            return None;
        }
        let c = pg_sys::GETSTRUCT(tup) as *mut pg_sys::FormData_pg_class;
        let (persistence, owner) = ((*c).relpersistence as u8, (*c).relowner);
        pg_sys::ReleaseSysCache(tup);
        Some((row.0, row.1, row.2, row.3, persistence, owner))
    }
}

#[pg_schema]
mod idgen_internal {
    use pgrx::prelude::*;
    use pgrx::{pg_sys, PgSqlErrorCode};

    use super::{registry, restart, sequence_row};
    use crate::node::take::node;
    use crate::pg::errors::IdError;

    /// Why the node's layout cannot serve an adopted sequence of this INCREMENT in blocks, or
    /// NULL when it can.
    #[pg_extern(stable, parallel_safe, strict, sql = false)]
    fn adoption_block_refusal(increment: i64) -> Option<String> {
        pg_idgen_core::sequence_blocks::refusal(&node().layout, increment.max(1) as u64)
    }

    /// Records an adoption (`adopt`) or its end, for idgen.adopt_sequence and
    /// idgen.release_sequence, which checked the sequence first: checks again what adoption
    /// rests on (the caller owns the sequence; it is a bigint, ascending, NO CYCLE, permanent),
    /// writes idgen_internal.adopted_sequences as its owner, and sets the sequence: at its MAXVALUE when
    /// adopted (PostgreSQL's own draw then fails), at `last_value` when given back. Every
    /// backend learns it at its next command (a relcache invalidation of the sequence and the
    /// table). Returns the sequence's last value as set.
    #[pg_extern(volatile, parallel_unsafe, sql = false)]
    fn adoption_record(
        seq: Option<pg_sys::Oid>,
        adopt: Option<bool>,
        last_value: Option<i64>,
    ) -> i64 {
        let (Some(seq), Some(adopt)) = (seq, adopt) else {
            IdError::new(
                PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
                "idgen_internal.adoption_record: the sequence and adopt may not be NULL",
            )
            .raise()
        };
        let Some((typ, increment, max, cycle, persistence, owner)) = sequence_row(seq) else {
            IdError::new(
                PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
                format!("relation {} is not a sequence", u32::from(seq)),
            )
            .raise()
        };
        // SAFETY: a role membership check in a transaction.
        let owns = unsafe { pg_sys::has_privs_of_role(pg_sys::GetUserId(), owner) };
        if !owns {
            IdError::new(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                format!(
                    "must be owner of sequence {}",
                    crate::pg::relation_name(seq)
                ),
            )
            .raise();
        }
        let Some((table, table_owner)) = registry::table_of_extension() else {
            IdError::new(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                "pg_idgen is not installed in this database",
            )
            .raise()
        };
        let written = if adopt {
            if typ != pg_sys::INT8OID || increment < 1 || cycle || persistence == b't' {
                IdError::new(
                    PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                    format!("sequence {} cannot be adopted: it must be bigint, ascending, NO CYCLE and permanent", crate::pg::relation_name(seq)),
                )
                .hint("idgen.adopt_sequence() says which and what to do.")
                .raise();
            }
            crate::pg::as_owner::as_owner(table_owner, || {
                Spi::get_one::<i64>(&format!(
                    "INSERT INTO idgen_internal.adopted_sequences (seq, adopted_by)
                     VALUES ('{}'::pg_catalog.oid::pg_catalog.regclass, SESSION_USER)
                     ON CONFLICT DO NOTHING RETURNING 1::pg_catalog.int8",
                    u32::from(seq)
                ))
            })
            .unwrap_or_else(|e| crate::pg::errors::internal(format!("{e}")).raise());
            // ALTER SEQUENCE ... RESTART gives the sequence new storage, which the transaction's
            // abort discards (setval alone is not undone by a ROLLBACK); its hook (rearm) then
            // sets the new storage at MAXVALUE, as for any ALTER of an adopted sequence.
            registry::forget();
            restart(seq, None);
            max
        } else {
            let Some(last) = last_value else {
                IdError::new(
                    PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
                    "giving a sequence back needs the last value to set it at",
                )
                .raise()
            };
            let deleted = crate::pg::as_owner::as_owner(table_owner, || {
                Spi::get_one::<i64>(&format!(
                    "DELETE FROM idgen_internal.adopted_sequences
                      WHERE seq::pg_catalog.oid OPERATOR(pg_catalog.=) '{}'::pg_catalog.oid
                     RETURNING 1::pg_catalog.int8",
                    u32::from(seq)
                ))
            })
            .unwrap_or_else(|e| crate::pg::errors::internal(format!("{e}")).raise());
            if deleted.is_none() {
                IdError::new(
                    PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!("sequence {} is not adopted", crate::pg::relation_name(seq)),
                )
                .raise();
            }
            registry::forget();
            // The next draw returns last + 1 (ALTER's new storage: undone by a ROLLBACK).
            let next = last
                .checked_add(1)
                .filter(|&n| n <= max)
                .unwrap_or_else(|| {
                    IdError::new(
                        PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                        format!(
                            "sequence {} cannot be given back above {last}: its MAXVALUE is {max}",
                            crate::pg::relation_name(seq)
                        ),
                    )
                    .hint("Raise its MAXVALUE (ALTER SEQUENCE ... MAXVALUE ...) first.")
                    .raise()
                });
            restart(seq, Some(next));
            last
        };
        // SAFETY: queues relcache invalidations, sent at commit (and seen by this backend at its
        // next command).
        unsafe {
            pg_sys::CacheInvalidateRelcacheByRelid(seq);
            pg_sys::CacheInvalidateRelcacheByRelid(table);
        }
        registry::forget();
        written
    }
}
