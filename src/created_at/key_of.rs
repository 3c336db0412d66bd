//! The key behind a time: the key column a decoder reads, followed from the expression a condition
//! or a sort names through the columns that keep a key and its time in one row, and no further:
//! a decoder over a plain column of the query (`decoders.rs`), a virtual generated column that is
//! one (PostgreSQL 18), or a column of a subquery in FROM (a view) that is one over a key the
//! subquery also returns, through a subquery each of whose rows carries the key and the time of
//! one row together: no set operation (UNION's rows come from several queries, the first of which
//! names the columns), no grouping sets (a subtotal has a time and a NULL key). Anything else (a
//! function in FROM, VALUES, a CTE, a join's merged column) is not followed.
use pgrx::pg_sys;

use super::decoders::{column_of, recognise, Decoded};
use crate::pg::nodes::{cells, is_a, rte_of};

/// The key column a decoder reads and which decoder, if `e` is one over a plain column, a view's
/// column that is one (`view_column`), or a virtual generated column that is one (PostgreSQL 18
/// and later).
///
/// SAFETY: `e` is an expression of `q`.
pub(super) unsafe fn decoded_key(e: *mut pg_sys::Node, q: *mut pg_sys::Query) -> Option<Decoded> {
    // SAFETY: nodes are read as the type their tag says.
    unsafe {
        pg_sys::check_stack_depth();
        if is_a(e, pg_sys::NodeTag::T_FuncExpr) {
            return recognise(e as *mut pg_sys::FuncExpr, q, None);
        }
        if !is_a(e, pg_sys::NodeTag::T_Var) {
            return None;
        }
        let v = e as *mut pg_sys::Var;
        if let Some(found) = view_column(v, q) {
            return Some(found);
        }
        #[cfg(any(feature = "pg18", feature = "pg19"))]
        if let Some(found) = virtual_column(v, q) {
            return Some(found);
        }
        None
    }
}

/// A column of a subquery in FROM (a view, as the rewriter expands it) that is a decoder over a
/// key the subquery also returns, in the same row: `CREATE VIEW v AS SELECT *, id_timestamp(id)
/// AS created_at FROM t`, then `WHERE created_at >= T` bounds the view's `id`.
///
/// SAFETY: `v` is a Var of `q`.
unsafe fn view_column(v: *mut pg_sys::Var, q: *mut pg_sys::Query) -> Option<Decoded> {
    // SAFETY: the range table entry the Var names, and its subquery's target list.
    unsafe {
        let rte = rte_of(v, q)?;
        if (*rte).rtekind != pg_sys::RTEKind::RTE_SUBQUERY || !rows_are_whole((*rte).subquery) {
            return None;
        }
        let sub = (*rte).subquery;
        let entries: Vec<*mut pg_sys::TargetEntry> = cells((*sub).targetList)
            .into_iter()
            .map(|t| t.cast())
            .collect();
        let entry = *entries.iter().find(|t| (***t).resno == (*v).varattno)?;
        let mut found = decoded_key((*entry).expr.cast(), sub)?;
        let inner_key = found.key;
        if (*inner_key).varlevelsup != 0 {
            return None;
        }
        // The key as the subquery returns it: a plain output column of the same column.
        let out = entries.iter().find(|t| {
            let e = (***t).expr as *mut pg_sys::Node;
            !(***t).resjunk
                && is_a(e, pg_sys::NodeTag::T_Var)
                && (*(e as *mut pg_sys::Var)).varno == (*inner_key).varno
                && (*(e as *mut pg_sys::Var)).varattno == (*inner_key).varattno
                && (*(e as *mut pg_sys::Var)).varlevelsup == 0
        })?;
        found.key = column_of(v, inner_key, (**out).resno);
        Some(found)
    }
}

/// Whether every output row of subquery `sub` is computed from one row of its FROM (or one group
/// of rows with the same grouping values), so that a key and a time it returns side by side belong
/// together: a plain SELECT, without set operations (a UNION's output columns name its first
/// query's, and its rows come from every branch) or grouping sets (a subtotal row keeps the time
/// and NULLs the key).
///
/// SAFETY: `sub` is a Query, or NULL.
unsafe fn rows_are_whole(sub: *mut pg_sys::Query) -> bool {
    // SAFETY: a Query's fields.
    unsafe {
        !sub.is_null()
            && (*sub).commandType == pg_sys::CmdType::CMD_SELECT
            && (*sub).setOperations.is_null()
            && (*sub).groupingSets.is_null()
    }
}

/// PostgreSQL 18's virtual generated column `created_at ... GENERATED ALWAYS AS
/// (id_timestamp(id, 'pg_idgen')) VIRTUAL`: read as its expression.
///
/// SAFETY: `v` is a Var of `q`.
#[cfg(any(feature = "pg18", feature = "pg19"))]
unsafe fn virtual_column(v: *mut pg_sys::Var, q: *mut pg_sys::Query) -> Option<Decoded> {
    // SAFETY: the range table entry the Var names; the relation is locked by the statement.
    unsafe {
        let relid = super::decoders::table_of(v, q)?;
        if pg_sys::get_attgenerated(relid, (*v).varattno) as u8
            != pg_sys::ATTRIBUTE_GENERATED_VIRTUAL
        {
            return None;
        }
        let rel = pg_sys::relation_open(relid, pg_sys::NoLock as i32);
        let expr = pg_sys::build_generation_expression(rel, (*v).varattno as i32);
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        if !is_a(expr, pg_sys::NodeTag::T_FuncExpr) {
            return None;
        }
        recognise(expr as *mut pg_sys::FuncExpr, q, Some(v))
    }
}
