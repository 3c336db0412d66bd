//! ORDER BY the time inside a key, as its last sort key: a sort by the key itself.
use pgrx::pg_sys;

use super::key_of::decoded_key;
use crate::pg::nodes::{cells, rte_of};

/// The btree operator family of date, timestamp and timestamptz (pg_opfamily.dat).
const DATETIME_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(434);

/// `ORDER BY id_timestamp(id)` (or a view's or virtual `created_at`) sorts by the key itself, which
/// its index (or an ordered partition scan) returns in order: `ORDER BY created_at DESC LIMIT 20`
/// reads 20 rows. The decoders never decrease as the key grows over every key they accept, so an
/// order by the key is an order by its time, where every key has a time (a NULL time sorts with the
/// NULLs, its key among the keys: `Decoded::exact`); rows of the same time come in key order, one
/// of the orders the query allowed. Only the last sort key (an earlier one's ties are ordered by
/// the later keys, which the key would override), and only in a query that sorts its rows as they
/// are: no grouping, DISTINCT, aggregates, window functions, set-returning functions in its output,
/// set operations or WITH TIES (which take rows of one time for equal). The key must be a column
/// the user may read (a view may show its `created_at` to a role it hides `id` from: the order of
/// keys within one tick is `id`'s to tell).
///
/// SAFETY: `q` is a Query of the planner's tree.
pub(super) unsafe fn order_by_key(q: *mut pg_sys::Query) {
    // SAFETY: the lists of a Query hold the node types named.
    unsafe {
        let query = &*q;
        if query.commandType != pg_sys::CmdType::CMD_SELECT
            || !query.groupClause.is_null()
            || !query.groupingSets.is_null()
            || !query.distinctClause.is_null()
            || query.hasAggs
            || query.hasWindowFuncs
            || query.hasTargetSRFs
            || !query.setOperations.is_null()
            // FETCH FIRST n ROWS WITH TIES: the rows tied with the last by the sort keys, which
            // for the time are all of its tick and for the key only the one row.
            || query.limitOption == pg_sys::LimitOption::LIMIT_OPTION_WITH_TIES
        {
            return;
        }
        let clauses = cells(query.sortClause);
        let Some(&last) = clauses.last() else {
            return;
        };
        let last = last as *mut pg_sys::SortGroupClause;
        let entries: Vec<*mut pg_sys::TargetEntry> = cells(query.targetList)
            .into_iter()
            .map(|t| t.cast())
            .collect();
        let Some(&entry) = entries
            .iter()
            .find(|t| (***t).ressortgroupref == (*last).tleSortGroupRef)
        else {
            return;
        };
        let Some(found) = decoded_key((*entry).expr.cast(), q) else {
            return;
        };
        let (key, decoder) = (found.key, found.decoder);
        if !found.exact || !may_read(key, q) {
            return;
        }
        // The direction: the sort operator is timestamptz's < or >, or this is no plain sort.
        let ts = pg_sys::TIMESTAMPTZOID;
        let strategy = [
            pg_sys::BTLessStrategyNumber,
            pg_sys::BTGreaterStrategyNumber,
        ]
        .into_iter()
        .find(|&s| {
            pg_sys::get_opfamily_member(DATETIME_BTREE_FAM_OID, ts, ts, s as i16) == (*last).sortop
        });
        let Some(strategy) = strategy else {
            return;
        };
        let sortop = decoder.key_operator(strategy);
        let eqop = decoder.key_operator(pg_sys::BTEqualStrategyNumber);
        if sortop == pg_sys::InvalidOid || eqop == pg_sys::InvalidOid {
            return;
        }
        // The key as a new hidden output column, sorted in the same direction, NULLs where they
        // were (the decoders give NULL for a NULL key only). The time's column stays as it was.
        let sort_ref = entries
            .iter()
            .map(|t| (**t).ressortgroupref)
            .max()
            .unwrap_or(0)
            + 1;
        let hidden = pg_sys::makeTargetEntry(
            pg_sys::copyObjectImpl(key.cast()).cast(),
            (entries.len() + 1) as pg_sys::AttrNumber,
            std::ptr::null_mut(),
            true,
        );
        (*hidden).ressortgroupref = sort_ref;
        let by_key = pg_sys::copyObjectImpl(last.cast()) as *mut pg_sys::SortGroupClause;
        (*by_key).tleSortGroupRef = sort_ref;
        (*by_key).sortop = sortop;
        (*by_key).eqop = eqop;
        (*by_key).hashable = pg_sys::op_hashjoinable(eqop, decoder.key_type);
        (*q).targetList = pg_sys::lappend((*q).targetList, hidden.cast());
        let list = (*q).sortClause;
        (*(*list).elements.add(clauses.len() - 1)).ptr_value = by_key.cast();
    }
}

/// Whether the statement's user (the view's owner, in a view) may read column `v` itself, as
/// `ORDER BY id` would need: SELECT on the table's or view's column. Any column of a subquery the
/// statement wrote in FROM.
///
/// SAFETY: `v` is a Var of `q`.
unsafe fn may_read(v: *mut pg_sys::Var, q: *mut pg_sys::Query) -> bool {
    // SAFETY: the range table entry the Var names, and the permission data the parser left.
    unsafe {
        let Some(rte) = rte_of(v, q) else {
            return false;
        };
        #[cfg(not(feature = "pg15"))]
        let (relid, as_user) = {
            if (*rte).perminfoindex == 0 {
                // No permissions to check: a subquery the statement wrote.
                return (*rte).rtekind == pg_sys::RTEKind::RTE_SUBQUERY;
            }
            let info = pg_sys::getRTEPermissionInfo((*q).rteperminfos, rte);
            ((*info).relid, (*info).checkAsUser)
        };
        #[cfg(feature = "pg15")]
        let (relid, as_user) = match (*rte).rtekind {
            pg_sys::RTEKind::RTE_RELATION => ((*rte).relid, (*rte).checkAsUser),
            pg_sys::RTEKind::RTE_SUBQUERY => {
                // A view, as PostgreSQL 15's rewriter expands it, keeps its permission data in
                // the first entry of its query (its OLD), a relation of kind view.
                let first = cells((*(*rte).subquery).rtable).first().copied();
                match first.map(|f| f as *mut pg_sys::RangeTblEntry) {
                    Some(f)
                        if (*f).rtekind == pg_sys::RTEKind::RTE_RELATION
                            && (*f).relkind as u8 == pg_sys::RELKIND_VIEW =>
                    {
                        ((*f).relid, (*f).checkAsUser)
                    }
                    _ => return true,
                }
            }
            _ => return false,
        };
        let user = if as_user == pg_sys::InvalidOid {
            pg_sys::GetUserId()
        } else {
            as_user
        };
        // The table's privilege, or the column's own (pg_attribute_aclcheck reads only that).
        let ok = pg_sys::AclResult::ACLCHECK_OK;
        pg_sys::pg_class_aclcheck(relid, user, pg_sys::ACL_SELECT as _) == ok
            || pg_sys::pg_attribute_aclcheck(relid, (*v).varattno, user, pg_sys::ACL_SELECT as _)
                == ok
    }
}
