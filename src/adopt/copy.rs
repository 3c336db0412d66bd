//! `COPY t (a, b) FROM ...` into a table whose key is left to the default of an adopted sequence.
//! PostgreSQL's COPY evaluates a table's defaults itself, outside any plan, where the rewrite
//! cannot reach: PostgreSQL's own draw would run, which adoption made fail. So such a COPY is
//! staged: the rows are copied, with the same options, into a temporary table of the listed
//! columns (dropped at the end), then inserted into the table by an INSERT ... SELECT of those
//! columns, which plans, draws from the node's Snowflake generator and fires the table's triggers
//! and checks as COPY does. The command tag counts the rows inserted. Costs about one more write
//! of the rows, into the session's temporary buffers.
//!
//! A COPY with a WHERE clause (it may name the defaulted columns, which the staged rows do not
//! have) is refused, naming the sequence, as is one by a role that may not create temporary
//! tables.
use std::ffi::CString;

use pgrx::{pg_sys, PgSqlErrorCode};

use super::registry;
use crate::pg::errors::IdError;
use crate::pg::nodes::cells;
use crate::pg::utility_hook::Utility;

/// Runs a COPY FROM whose defaults draw from an adopted sequence; false for any other statement.
pub fn copy_from(u: &Utility, stmt: *mut pg_sys::CopyStmt) -> bool {
    // SAFETY: the CopyStmt PostgreSQL passed, read by its fields.
    unsafe {
        if !(*stmt).is_from || (*stmt).relation.is_null() || !(*stmt).query.is_null() {
            return false;
        }
        if (*stmt).attlist.is_null() || !registry::any() {
            return false;
        }
        let relid = pg_sys::RangeVarGetRelidExtended(
            (*stmt).relation,
            pg_sys::RowExclusiveLock as pg_sys::LOCKMODE,
            pg_sys::RVROption::RVR_MISSING_OK,
            None,
            std::ptr::null_mut(),
        );
        if relid == pg_sys::InvalidOid {
            return false;
        }
        let Some(Defaulted {
            seq,
            column,
            listed,
        }) = adopted_default(relid, (*stmt).attlist)
        else {
            return false;
        };
        let refuse = |why: &str, hint: &str| -> ! {
            IdError::new(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!(
                    "COPY FROM cannot fill column \"{column}\" from sequence \"{}\", which pg_idgen adopted: {why}",
                    crate::pg::relation_name(seq)
                ),
            )
            .hint(hint)
            .raise()
        };
        if !(*stmt).whereClause.is_null() {
            refuse(
                "a COPY with WHERE is not staged",
                "Copy without WHERE into a staging table, then INSERT ... SELECT from it.",
            );
        }
        if !may_create_temp() {
            refuse(
                "such a COPY is staged through a temporary table, which this role may not create",
                "Grant TEMPORARY on the database to the role, or load through INSERT ... SELECT.",
            );
        }
        stage(u, stmt, relid, &listed);
        true
    }
}

/// A COPY's column left to the default of an adopted sequence, and the columns it lists (name,
/// type).
struct Defaulted {
    seq: pg_sys::Oid,
    column: String,
    listed: Vec<(String, String)>,
}

/// The first adopted sequence and its column among the defaults a COPY of `attlist` leaves to
/// the table.
///
/// SAFETY: in a transaction, with `relid` locked.
unsafe fn adopted_default(relid: pg_sys::Oid, attlist: *mut pg_sys::List) -> Option<Defaulted> {
    // SAFETY: the relation is locked; its descriptor read by its fields; build_column_default
    // returns a fresh expression (or NULL).
    unsafe {
        let listed: Vec<String> = cells(attlist)
            .into_iter()
            .filter_map(|c| crate::pg::nodes::string_value(c.cast()))
            .collect();
        let rel = pg_sys::RelationIdGetRelation(relid);
        if rel.is_null() {
            return None;
        }
        let kind = (*(*rel).rd_rel).relkind as u8;
        let mut found = None;
        let mut types = Vec::new();
        if matches!(kind, b'r' | b'p' | b'f') {
            let desc = pgrx::PgTupleDesc::from_pg_unchecked((*rel).rd_att);
            for (i, att) in desc.iter().enumerate() {
                if att.attisdropped || att.attgenerated != 0 {
                    continue;
                }
                let name = att.name().to_string();
                if listed.contains(&name) {
                    let t = pg_sys::format_type_with_typemod(att.atttypid, att.atttypmod);
                    types.push((
                        name,
                        std::ffi::CStr::from_ptr(t).to_string_lossy().into_owned(),
                    ));
                    continue;
                }
                if found.is_none() {
                    let expr = pg_sys::build_column_default(rel, i as i32 + 1);
                    if let Some(seq) = super::rewrite::adopted_draw_in(expr) {
                        found = Some((seq, name));
                    }
                }
            }
        }
        pg_sys::RelationClose(rel);
        let (seq, column) = found?;
        // In the COPY's order (a column it lists twice, or one the table lacks: PostgreSQL's
        // own error, from the staged COPY).
        let listed = listed
            .iter()
            .filter_map(|l| types.iter().find(|(n, _)| n == l).cloned())
            .collect();
        Some(Defaulted {
            seq,
            column,
            listed,
        })
    }
}

fn may_create_temp() -> bool {
    // SAFETY: reads the backend's database OID, set at connection.
    let db = unsafe { pg_sys::MyDatabaseId };
    crate::pg::own_functions::may(pg_sys::DatabaseRelationId, db, pg_sys::ACL_CREATE_TEMP)
}

/// The staged COPY: into a temporary table of the listed columns, then INSERT ... SELECT.
///
/// SAFETY: `stmt` is the COPY of `u`, into `relid`; `listed` its columns and their types.
unsafe fn stage(
    u: &Utility,
    stmt: *mut pg_sys::CopyStmt,
    relid: pg_sys::Oid,
    listed: &[(String, String)],
) {
    // SAFETY: SPI and node copies in the statement's transaction; the statement's own copy is
    // changed, never PostgreSQL's (which may be read-only: a cached plan's).
    unsafe {
        STAGED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pid = pg_sys::MyProcPid;
        let staging = format!(
            "idgen_copy_{pid}_{}",
            STAGED.load(std::sync::atomic::Ordering::Relaxed)
        );
        let list = listed
            .iter()
            .map(|(c, _)| quote_ident(c))
            .collect::<Vec<_>>()
            .join(", ");
        let definitions = listed
            .iter()
            .map(|(c, t)| format!("{} {t}", quote_ident(c)))
            .collect::<Vec<_>>()
            .join(", ");
        let target = crate::pg::qualified_name(relid);
        run_sql(&format!(
            "CREATE TEMPORARY TABLE {} ({definitions}) ON COMMIT DROP",
            quote_ident(&staging)
        ));
        let copy = pg_sys::copyObjectImpl(stmt.cast()) as *mut pg_sys::CopyStmt;
        let name = CString::new(staging.clone()).expect("no NUL in a generated name");
        (*copy).relation = pg_sys::makeRangeVar(
            pg_sys::pstrdup(c"pg_temp".as_ptr()),
            pg_sys::pstrdup(name.as_ptr()),
            -1,
        );
        let pstmt = pg_sys::copyObjectImpl(u.pstmt.cast()) as *mut pg_sys::PlannedStmt;
        (*pstmt).utilityStmt = copy.cast();
        u.run(pstmt);
        let inserted = run_sql(&format!(
            "INSERT INTO {target} ({list}) SELECT {list} FROM pg_temp.{}",
            quote_ident(&staging)
        ));
        run_sql(&format!("DROP TABLE pg_temp.{}", quote_ident(&staging)));
        if !u.qc.is_null() {
            (*u.qc).nprocessed = inserted;
        }
    }
}

/// Staged COPYs of this backend, for the staging tables' names (a trigger may COPY again).
static STAGED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Runs one statement through SPI as the current role; the rows it processed.
fn run_sql(sql: &str) -> u64 {
    let cmd = CString::new(sql).expect("no NUL in a generated statement");
    // SAFETY: the standard SPI sequence; an ERROR unwinds past SPI_finish and the transaction's
    // abort cleans up.
    unsafe {
        if pg_sys::SPI_connect() < 0 {
            pgrx::error!("pg_idgen: SPI_connect failed");
        }
        let rc = pg_sys::SPI_execute(cmd.as_ptr(), false, 0);
        if rc < 0 {
            pgrx::error!("pg_idgen: staged COPY: SPI_execute returned {rc}");
        }
        let n = pg_sys::SPI_processed;
        pg_sys::SPI_finish();
        n
    }
}
