//! A free `created_at`: a condition on the time inside a key (`id_timestamp(id) >= T`,
//! `uuidv7_timestamp(id) < T`, PostgreSQL 17's `uuid_extract_timestamp` on a column that holds
//! only version 7 UUIDs, a virtual generated column over one of them) gets the key range it
//! implies added beside it before planning (`id >= idgen_internal.id_time_lower(T, ...)`), so that
//! the key's index and partition pruning answer it. The original condition stays; the added one
//! only narrows what is read. A sort by such a time, the last key of an ORDER BY, becomes a sort
//! by the key, which its index returns in order (`order_by_key`). `idgen.time_conditions = off`
//! turns both off.
//!
//! What may be added is the core's arithmetic (`pg_idgen_core::time_bounds`): implied by the
//! original for every value a column can hold. Here is only where: a comparison of a decoder over
//! a plain column with an expression that is constant during the statement (no column, nothing
//! volatile, no subquery), as one of the ANDed conditions of a WHERE or a JOIN's ON, in the query,
//! its subqueries in FROM, its CTEs and the subqueries of its top-level conditions. Decoders are
//! known by the C symbol they run, never by name, so that a look-alike of another role's
//! schema is never taken for one; the functions added are found in this extension's
//! `idgen_internal` schema and checked the same way.
use std::ffi::CStr;

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::Uuid;

use pg_idgen_core::layout::Layout;
use pg_idgen_core::time_bounds::{snowflake_bounds, uuidv7_bound, Instant, Side};

use crate::gucs;
use crate::node::generator::node;
use crate::pg::errors::IdError;
use crate::pg::nodes::{cells, list_of};

/// µs from 1970 to 2000, PostgreSQL's epoch.
const PG_EPOCH_US: i128 = 946_684_800_000_000;
/// The btree operator family of uuid (pg_opfamily.dat: a fixed OID).
const UUID_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(2968);
/// The btree operator family of date, timestamp and timestamptz (pg_opfamily.dat).
const DATETIME_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(434);

/// Sets it up while preloading.
pub fn init() {
    crate::pg::planner_hook::before_planning(add_key_ranges);
}

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

fn layout_of(name: &str) -> Layout {
    Layout::parse(name).unwrap_or_else(|e| {
        IdError::new(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("layout \"{name}\": {e}"),
        )
        .hint("SELECT name FROM idgen.layouts lists the named layouts.")
        .raise()
    })
}

/// The smallest ID of the layout whose time is at or after `ts` (or after, not inclusive); NULL
/// when none is. What a condition `id_timestamp(id, layout) >= ts` adds: `id >= this`.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn id_time_lower(ts: TimestampWithTimeZone, inclusive: bool, layout: &str) -> Option<i64> {
    snowflake_bounds(&layout_of(layout), instant(ts), side(true, inclusive)).flatten()
}

/// The largest ID of the layout whose time is at or before `ts` (or before); NULL when none is.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn id_time_upper(ts: TimestampWithTimeZone, inclusive: bool, layout: &str) -> Option<i64> {
    snowflake_bounds(&layout_of(layout), instant(ts), side(false, inclusive)).flatten()
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

/// A decoder of the time inside a key, as a comparison found it.
enum Decoder {
    /// `id_timestamp(id)` (the node's layout) or `id_timestamp(id, 'layout')`.
    Snowflake(String),
    /// `uuidv7_timestamp(id)`, or `uuid_extract_timestamp(id)` where only version 7 can be.
    Uuidv7,
}

impl Decoder {
    /// The type of the key it reads.
    fn key_type(&self) -> pg_sys::Oid {
        match self {
            Decoder::Snowflake(_) => pg_sys::INT8OID,
            Decoder::Uuidv7 => pg_sys::UUIDOID,
        }
    }

    /// The key type's btree operator of `strategy` (InvalidOid if there is none).
    fn key_operator(&self, strategy: u32) -> pg_sys::Oid {
        let family = match self {
            Decoder::Snowflake(_) => pg_sys::INTEGER_BTREE_FAM_OID,
            Decoder::Uuidv7 => UUID_BTREE_FAM_OID,
        };
        let key_type = self.key_type();
        // SAFETY: a catalog lookup, in the planner's transaction.
        unsafe { pg_sys::get_opfamily_member(family, key_type, key_type, strategy as i16) }
    }
}

/// The planner hook's work: every statement's tree, before it is planned.
fn add_key_ranges(parse: *mut pg_sys::Query) {
    if !gucs::time_conditions() || parse.is_null() {
        return;
    }
    let mut cx = Context::default();
    // SAFETY: the planner's Query, which it lets its hook change.
    unsafe { visit_query(parse, &mut cx, 0) };
}

#[derive(Default)]
struct Context {
    /// The four bound functions of this database's extension, once looked up (None: not there).
    bounds: Option<Option<[pg_sys::Oid; 4]>>,
}

const MAX_DEPTH: usize = 64;

/// SAFETY: `q` is a Query of the planner's tree.
unsafe fn visit_query(q: *mut pg_sys::Query, cx: &mut Context, depth: usize) {
    if q.is_null() || depth > MAX_DEPTH {
        return;
    }
    // SAFETY: the lists of a Query hold the node types named.
    unsafe {
        for node in cells((*q).rtable) {
            let rte = node as *mut pg_sys::RangeTblEntry;
            if (*rte).rtekind == pg_sys::RTEKind::RTE_SUBQUERY {
                visit_query((*rte).subquery, cx, depth + 1);
            }
        }
        for node in cells((*q).cteList) {
            let cte = (*(node as *mut pg_sys::CommonTableExpr)).ctequery;
            if is_a(cte, pg_sys::NodeTag::T_Query) {
                visit_query(cte as *mut pg_sys::Query, cx, depth + 1);
            }
        }
        if !(*q).jointree.is_null() {
            visit_from((*q).jointree as *mut pg_sys::Node, q, cx, depth);
        }
        order_by_key(q);
    }
}

/// `ORDER BY id_timestamp(id)` (or a view's or virtual `created_at`) sorts by the key itself,
/// which its index (or an ordered partition scan) returns in order: `ORDER BY created_at DESC
/// LIMIT 20` reads 20 rows. The decoders never decrease as the key grows over every key they
/// accept, so an order by the key is an order by its time; rows of the same time come in key order,
/// which is one of the orders the query allowed. Only the last sort key (an earlier one's ties are
/// ordered by the later keys, which the key would override), and only in a query that sorts its
/// rows as they are: no grouping, DISTINCT, aggregates, window functions, set-returning functions in
/// its output, set operations or WITH TIES (which take rows of one time for equal). The key must be
/// a column the user may read (a view may show its `created_at` to a role it hides `id` from: the
/// order of keys within one tick is `id`'s to tell).
///
/// SAFETY: `q` is a Query of the planner's tree.
unsafe fn order_by_key(q: *mut pg_sys::Query) {
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
        let Some((key, decoder)) = decoded_key((*entry).expr.cast(), q) else {
            return;
        };
        if !may_read(key, q) {
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
        (*by_key).hashable = pg_sys::op_hashjoinable(eqop, decoder.key_type());
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

/// SAFETY: `n` is a node of a Query's join tree (FromExpr, JoinExpr, RangeTblRef), or NULL.
unsafe fn visit_from(n: *mut pg_sys::Node, q: *mut pg_sys::Query, cx: &mut Context, depth: usize) {
    // SAFETY: each node is read as the type its tag says.
    unsafe {
        if is_a(n, pg_sys::NodeTag::T_FromExpr) {
            let f = n as *mut pg_sys::FromExpr;
            (*f).quals = with_ranges((*f).quals, q, cx, depth);
            for item in cells((*f).fromlist) {
                visit_from(item.cast(), q, cx, depth);
            }
        } else if is_a(n, pg_sys::NodeTag::T_JoinExpr) {
            let j = n as *mut pg_sys::JoinExpr;
            (*j).quals = with_ranges((*j).quals, q, cx, depth);
            visit_from((*j).larg, q, cx, depth);
            visit_from((*j).rarg, q, cx, depth);
        }
    }
}

/// The conditions `quals` (a WHERE or an ON), with the key ranges their ANDed comparisons imply
/// ANDed to them. Only top-level conjuncts: a range implied inside an OR or a NOT would not be
/// implied by the whole.
///
/// SAFETY: `quals` is an expression of `q`, or NULL.
unsafe fn with_ranges(
    quals: *mut pg_sys::Node,
    q: *mut pg_sys::Query,
    cx: &mut Context,
    depth: usize,
) -> *mut pg_sys::Node {
    if quals.is_null() {
        return quals;
    }
    // SAFETY: nodes are read as the type their tag says.
    unsafe {
        let conjuncts: Vec<*mut pg_sys::Node> = if is_and(quals) {
            cells((*(quals as *mut pg_sys::BoolExpr)).args)
                .into_iter()
                .map(|c| c.cast())
                .collect()
        } else {
            vec![quals]
        };
        let mut added = Vec::new();
        for &c in &conjuncts {
            if is_a(c, pg_sys::NodeTag::T_SubLink) {
                let sub = (*(c as *mut pg_sys::SubLink)).subselect;
                if is_a(sub, pg_sys::NodeTag::T_Query) {
                    visit_query(sub as *mut pg_sys::Query, cx, depth + 1);
                }
            } else if is_a(c, pg_sys::NodeTag::T_OpExpr) {
                implied(c as *mut pg_sys::OpExpr, q, cx, &mut added);
            }
        }
        // A range already there is not added again: the query may carry it already (Citus sends a
        // shard the conditions its coordinator's hook added; PostgreSQL may plan a tree twice).
        let mut all = conjuncts;
        let before = all.len();
        for a in added {
            if !all.iter().any(|&c| pg_sys::equal(c.cast(), a.cast())) {
                all.push(a);
            }
        }
        if all.len() == before {
            return quals;
        }
        pg_sys::makeBoolExpr(pg_sys::BoolExprType::AND_EXPR, list_of(&all), -1).cast()
    }
}

/// The key ranges one comparison implies, pushed to `out`.
///
/// SAFETY: `op` is an OpExpr of `q`.
unsafe fn implied(
    op: *mut pg_sys::OpExpr,
    q: *mut pg_sys::Query,
    cx: &mut Context,
    out: &mut Vec<*mut pg_sys::Node>,
) {
    // SAFETY: an OpExpr's args are expressions; catalog lookups run in a transaction.
    unsafe {
        let args = cells((*op).args);
        if args.len() != 2 {
            return;
        }
        let Some((lower, upper, inclusive)) = timestamptz_comparison((*op).opno) else {
            return;
        };
        // time(key) OP t, or t OP time(key) (the sides of the comparison swap).
        for (decoded, t, flip) in [(args[0], args[1], false), (args[1], args[0], true)] {
            let (decoded, t): (*mut pg_sys::Node, *mut pg_sys::Node) = (decoded.cast(), t.cast());
            if !constant_for_statement(t) {
                continue;
            }
            let Some((key, decoder)) = decoded_key(decoded, q) else {
                continue;
            };
            let Some(funcs) = bound_functions(cx) else {
                return;
            };
            let (lower, upper) = if flip { (upper, lower) } else { (lower, upper) };
            if lower {
                out.push(key_bound(key, &decoder, t, true, inclusive, &funcs));
            }
            if upper {
                out.push(key_bound(key, &decoder, t, false, inclusive, &funcs));
            }
            return;
        }
    }
}

/// For a comparison of two timestamptz: whether `left OP right` bounds `left` from below, from
/// above (both for `=`), and whether inclusively. None for any other operator.
fn timestamptz_comparison(opno: pg_sys::Oid) -> Option<(bool, bool, bool)> {
    // SAFETY: catalog lookups, in a transaction (the planner's).
    unsafe {
        let family = pg_sys::get_opclass_family(pg_sys::TIMESTAMPTZ_BTREE_OPS_OID);
        let (mut left, mut right) = (pg_sys::InvalidOid, pg_sys::InvalidOid);
        pg_sys::op_input_types(opno, &mut left, &mut right);
        if left != pg_sys::TIMESTAMPTZOID || right != pg_sys::TIMESTAMPTZOID {
            return None;
        }
        match pg_sys::get_op_opfamily_strategy(opno, family) as u32 {
            pg_sys::BTLessStrategyNumber => Some((false, true, false)),
            pg_sys::BTLessEqualStrategyNumber => Some((false, true, true)),
            pg_sys::BTEqualStrategyNumber => Some((true, true, true)),
            pg_sys::BTGreaterEqualStrategyNumber => Some((true, false, true)),
            pg_sys::BTGreaterStrategyNumber => Some((true, false, false)),
            _ => None,
        }
    }
}

/// Whether an expression has one value for the rows it is compared with: no column of this
/// level, nothing volatile, no subquery (whose copy would run twice). A column of an outer query
/// is one value for each outer row, and both copies read the same.
///
/// SAFETY: `e` is an expression.
unsafe fn constant_for_statement(e: *mut pg_sys::Node) -> bool {
    // SAFETY: walkers of an expression tree.
    unsafe {
        !pg_sys::contain_var_clause(e)
            && !pg_sys::contain_volatile_functions(e)
            && !pg_sys::contain_subplans(e)
    }
}

/// The key column a decoder reads and which decoder, if `e` is one over a plain column (or a
/// virtual generated column that is one, PostgreSQL 18 and later).
///
/// SAFETY: `e` is an expression of `q`.
unsafe fn decoded_key(
    e: *mut pg_sys::Node,
    q: *mut pg_sys::Query,
) -> Option<(*mut pg_sys::Var, Decoder)> {
    // SAFETY: nodes are read as the type their tag says.
    unsafe {
        if is_a(e, pg_sys::NodeTag::T_FuncExpr) {
            return decoder_call(e as *mut pg_sys::FuncExpr, q, None);
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
/// key the subquery also returns: `CREATE VIEW v AS SELECT *, id_timestamp(id) AS created_at FROM
/// t`, then `WHERE created_at >= T` bounds the view's `id`.
///
/// SAFETY: `v` is a Var of `q`.
unsafe fn view_column(
    v: *mut pg_sys::Var,
    q: *mut pg_sys::Query,
) -> Option<(*mut pg_sys::Var, Decoder)> {
    // SAFETY: the range table entry the Var names, and its subquery's target list.
    unsafe {
        let rte = rte_of(v, q)?;
        if (*rte).rtekind != pg_sys::RTEKind::RTE_SUBQUERY || (*rte).subquery.is_null() {
            return None;
        }
        let sub = (*rte).subquery;
        let entries: Vec<*mut pg_sys::TargetEntry> = cells((*sub).targetList)
            .into_iter()
            .map(|t| t.cast())
            .collect();
        let entry = *entries.iter().find(|t| (***t).resno == (*v).varattno)?;
        let (inner_key, decoder) = decoded_key((*entry).expr.cast(), sub)?;
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
        Some((column_of(v, inner_key, (**out).resno), decoder))
    }
}

/// A decoder call over a plain column. `column` replaces the column it names (for a virtual
/// column's expression, whose columns are numbered as in its table).
///
/// SAFETY: `f` is a FuncExpr.
unsafe fn decoder_call(
    f: *mut pg_sys::FuncExpr,
    q: *mut pg_sys::Query,
    column: Option<*mut pg_sys::Var>,
) -> Option<(*mut pg_sys::Var, Decoder)> {
    // SAFETY: a FuncExpr's args are expressions.
    unsafe {
        let args = cells((*f).args);
        let key = *args.first()? as *mut pg_sys::Node;
        if !is_a(key, pg_sys::NodeTag::T_Var) {
            return None;
        }
        let key = key as *mut pg_sys::Var;
        let decoder = match c_symbol((*f).funcid)?.as_str() {
            "id_timestamp_wrapper" if args.len() == 1 => Decoder::Snowflake(node().layout.label()),
            "id_timestamp_with_wrapper" if args.len() == 2 => {
                Decoder::Snowflake(text_constant(args[1].cast())?)
            }
            "uuidv7_timestamp_wrapper" if args.len() == 1 => Decoder::Uuidv7,
            // PostgreSQL's own reads a version 1 UUID's time too, which is not in its first bits:
            // only where the table's constraints allow no other version than 7.
            "uuid_extract_timestamp" if args.len() == 1 && only_version_7(key, q, column) => {
                Decoder::Uuidv7
            }
            _ => return None,
        };
        if (*key).vartype != decoder.key_type() {
            return None;
        }
        let key = match column {
            None => key,
            // The virtual column's row: the key column of the same table, where the column read is.
            Some(outer) => column_of(outer, key, (*key).varattno),
        };
        Some((key, decoder))
    }
}

/// Another column `attno` (typed as `typed`) of the row `read` reads: a copy of `read`, so that
/// the range table entry, the level and the outer joins that may null it (PostgreSQL 16's
/// varnullingrels) stay those of the query the condition stands in.
///
/// SAFETY: both are Vars.
unsafe fn column_of(
    read: *mut pg_sys::Var,
    typed: *mut pg_sys::Var,
    attno: pg_sys::AttrNumber,
) -> *mut pg_sys::Var {
    // SAFETY: a copy of a Var, changed field by field.
    unsafe {
        let v = pg_sys::copyObjectImpl(read.cast()) as *mut pg_sys::Var;
        (*v).varattno = attno;
        (*v).varattnosyn = attno;
        (*v).vartype = (*typed).vartype;
        (*v).vartypmod = (*typed).vartypmod;
        (*v).varcollid = (*typed).varcollid;
        v
    }
}

/// PostgreSQL 18's virtual generated column `created_at ... GENERATED ALWAYS AS
/// (id_timestamp(id, 'pg_idgen')) VIRTUAL`: read as its expression.
///
/// SAFETY: `v` is a Var of `q`.
#[cfg(any(feature = "pg18", feature = "pg19"))]
unsafe fn virtual_column(
    v: *mut pg_sys::Var,
    q: *mut pg_sys::Query,
) -> Option<(*mut pg_sys::Var, Decoder)> {
    // SAFETY: the range table entry the Var names; the relation is locked by the statement.
    unsafe {
        let relid = table_of(v, q)?;
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
        decoder_call(expr as *mut pg_sys::FuncExpr, q, Some(v))
    }
}

/// The table a column of `q` belongs to (a column of this query's level, of a table).
///
/// SAFETY: `v` is a Var of `q`.
#[cfg(any(feature = "pg17", feature = "pg18", feature = "pg19"))]
unsafe fn table_of(v: *mut pg_sys::Var, q: *mut pg_sys::Query) -> Option<pg_sys::Oid> {
    // SAFETY: the range table entry the Var names.
    unsafe {
        let rte = rte_of(v, q)?;
        ((*rte).rtekind == pg_sys::RTEKind::RTE_RELATION).then_some((*rte).relid)
    }
}

/// The range table entry a column of `q`'s own level names (None for an outer query's column, a
/// whole-row or system column).
///
/// SAFETY: `v` is a Var of `q`.
unsafe fn rte_of(v: *mut pg_sys::Var, q: *mut pg_sys::Query) -> Option<*mut pg_sys::RangeTblEntry> {
    // SAFETY: varno numbers the entries of `q`'s range table from 1.
    unsafe {
        if (*v).varlevelsup != 0 || (*v).varattno <= 0 {
            return None;
        }
        let rtes = cells((*q).rtable);
        Some(*rtes.get(((*v).varno as usize).checked_sub(1)?)? as *mut pg_sys::RangeTblEntry)
    }
}

/// Whether the validated CHECK constraints of the key's table prove `uuid_extract_version(key) =
/// 7` (as `CHECK (uuid_extract_version(id) = 7)` does): then `uuid_extract_timestamp` reads the
/// first 48 bits of every UUID it gives a time for. `column` is the column of `q` a virtual
/// column's expression stands for (`key` then names its table's columns).
///
/// SAFETY: `key` is a Var of `q` (or of a virtual column's expression, with `column`).
#[cfg(any(feature = "pg17", feature = "pg18", feature = "pg19"))]
unsafe fn only_version_7(
    key: *mut pg_sys::Var,
    q: *mut pg_sys::Query,
    column: Option<*mut pg_sys::Var>,
) -> bool {
    // SAFETY: the relation is locked by the statement; constraint expressions are nodes.
    unsafe {
        let Some(relid) = table_of(column.unwrap_or(key), q) else {
            return false;
        };
        // Constraints name their table's columns as range table entry 1.
        let v = pg_sys::copyObjectImpl(key.cast()) as *mut pg_sys::Var;
        (*v).varno = 1;
        (*v).varlevelsup = 0;
        let version = pg_sys::makeFuncExpr(
            pg_sys::Oid::from(pg_sys::F_UUID_EXTRACT_VERSION),
            pg_sys::INT2OID,
            list_of(&[v]),
            pg_sys::InvalidOid,
            pg_sys::InvalidOid,
            pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
        );
        let seven = pg_sys::makeConst(
            pg_sys::INT4OID,
            -1,
            pg_sys::InvalidOid,
            4,
            pg_sys::Datum::from(7i32),
            false,
            true,
        );
        let eq = pg_sys::get_opfamily_member(
            pg_sys::INTEGER_BTREE_FAM_OID,
            pg_sys::INT2OID,
            pg_sys::INT4OID,
            pg_sys::BTEqualStrategyNumber as i16,
        );
        let wanted = pg_sys::make_opclause(
            eq,
            pg_sys::BOOLOID,
            false,
            version.cast(),
            seven.cast(),
            pg_sys::InvalidOid,
            pg_sys::InvalidOid,
        );
        pg_sys::set_opfuncid(wanted as *mut pg_sys::OpExpr);
        let rel = pg_sys::relation_open(relid, pg_sys::NoLock as i32);
        let constr = (*(*rel).rd_att).constr;
        let mut checks: Vec<*mut pg_sys::Node> = Vec::new();
        if !constr.is_null() {
            for i in 0..(*constr).num_check as usize {
                let c = (*constr).check.add(i);
                if (*c).ccvalid && !(*c).ccnoinherit && !(*c).ccbin.is_null() {
                    checks.push(pg_sys::stringToNode((*c).ccbin).cast());
                }
            }
        }
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        !checks.is_empty()
            && pg_sys::predicate_implied_by(list_of(&[wanted]), list_of(&checks), false)
    }
}

#[cfg(not(any(feature = "pg17", feature = "pg18", feature = "pg19")))]
unsafe fn only_version_7(
    _: *mut pg_sys::Var,
    _: *mut pg_sys::Query,
    _: Option<*mut pg_sys::Var>,
) -> bool {
    false
}

/// The C symbol a function runs, if it is a C function (only superusers make those, so the
/// symbol names pg_idgen's own code, or PostgreSQL's).
fn c_symbol(funcid: pg_sys::Oid) -> Option<String> {
    // SAFETY: a syscache lookup and release, in a transaction.
    unsafe {
        let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::PROCOID as _, funcid.into());
        if tup.is_null() {
            return None;
        }
        let form = pg_sys::GETSTRUCT(tup) as *mut pg_sys::FormData_pg_proc;
        let symbol = if (*form).prolang == pg_sys::Oid::from(pg_sys::ClanguageId)
            || (*form).prolang == pg_sys::Oid::from(pg_sys::INTERNALlanguageId)
        {
            let mut isnull = false;
            let d = pg_sys::SysCacheGetAttr(
                pg_sys::SysCacheIdentifier::PROCOID as _,
                tup,
                pg_sys::Anum_pg_proc_prosrc as i16,
                &mut isnull,
            );
            (!isnull).then(|| String::from_datum(d, false)).flatten()
        } else {
            None
        };
        pg_sys::ReleaseSysCache(tup);
        symbol
    }
}

/// The value of a non-NULL text constant.
///
/// SAFETY: `e` is an expression.
unsafe fn text_constant(e: *mut pg_sys::Node) -> Option<String> {
    // SAFETY: a Const of type text holds a text datum.
    unsafe {
        if !is_a(e, pg_sys::NodeTag::T_Const) {
            return None;
        }
        let c = e as *mut pg_sys::Const;
        if (*c).constisnull || (*c).consttype != pg_sys::TEXTOID {
            return None;
        }
        String::from_datum((*c).constvalue, false)
    }
}

/// `idgen_internal.id_time_lower`, `_upper`, `uuidv7_time_lower`, `_upper` of this database's
/// pg_idgen, checked to run this library's code; None where the extension (or a version with
/// them) is not installed.
fn bound_functions(cx: &mut Context) -> Option<[pg_sys::Oid; 4]> {
    *cx.bounds.get_or_insert_with(|| {
        let snowflake = [pg_sys::TIMESTAMPTZOID, pg_sys::BOOLOID, pg_sys::TEXTOID];
        let uuid = [pg_sys::TIMESTAMPTZOID, pg_sys::BOOLOID];
        let found = [
            lookup(c"id_time_lower", &snowflake)?,
            lookup(c"id_time_upper", &snowflake)?,
            lookup(c"uuidv7_time_lower", &uuid)?,
            lookup(c"uuidv7_time_upper", &uuid)?,
        ];
        Some(found)
    })
}

fn lookup(name: &CStr, args: &[pg_sys::Oid]) -> Option<pg_sys::Oid> {
    // SAFETY: builds a qualified name in the current memory context and looks it up.
    unsafe {
        let schema = pg_sys::makeString(pg_sys::pstrdup(c"idgen_internal".as_ptr()));
        let func = pg_sys::makeString(pg_sys::pstrdup(name.as_ptr()));
        let qualified = list_of(&[schema, func]);
        let oid = pg_sys::LookupFuncName(qualified, args.len() as i32, args.as_ptr(), true);
        if oid == pg_sys::InvalidOid {
            return None;
        }
        let expected = format!("{}_wrapper", name.to_str().ok()?);
        (c_symbol(oid)? == expected && may_execute(oid)).then_some(oid)
    }
}

/// Whether the current role may run a function (PUBLIC may run the bound functions unless an
/// administrator revoked it; then a query gets nothing added rather than an error).
fn may_execute(oid: pg_sys::Oid) -> bool {
    // SAFETY: an ACL check in a transaction.
    unsafe {
        let role = pg_sys::GetUserId();
        #[cfg(feature = "pg15")]
        let result = pg_sys::pg_proc_aclcheck(oid, role, pg_sys::ACL_EXECUTE as pg_sys::AclMode);
        #[cfg(not(feature = "pg15"))]
        let result = pg_sys::object_aclcheck(
            pg_sys::ProcedureRelationId,
            oid,
            role,
            pg_sys::ACL_EXECUTE as pg_sys::AclMode,
        );
        result == pg_sys::AclResult::ACLCHECK_OK
    }
}

/// `key >= lower(t, inclusive[, layout])` or `key <= upper(...)`.
///
/// SAFETY: `key` and `t` are expressions of the query; copies of them are used.
unsafe fn key_bound(
    key: *mut pg_sys::Var,
    decoder: &Decoder,
    t: *mut pg_sys::Node,
    lower: bool,
    inclusive: bool,
    funcs: &[pg_sys::Oid; 4],
) -> *mut pg_sys::Node {
    // SAFETY: node constructors of PostgreSQL, in the current memory context.
    unsafe {
        let t = pg_sys::copyObjectImpl(t.cast()) as *mut pg_sys::Node;
        let inclusive = pg_sys::makeBoolConst(inclusive, false);
        // The input collation is the one the parser gives a text argument, so that the range reads
        // back (from a Citus coordinator's query text) as a node equal to this one.
        let (func, args, collation) = match decoder {
            Decoder::Snowflake(layout) => {
                let layout = pg_sys::makeConst(
                    pg_sys::TEXTOID,
                    -1,
                    pg_sys::DEFAULT_COLLATION_OID,
                    -1,
                    layout.as_str().into_datum().expect("text"),
                    false,
                    false,
                );
                (
                    funcs[if lower { 0 } else { 1 }],
                    list_of(&[t, inclusive, layout.cast()]),
                    pg_sys::DEFAULT_COLLATION_OID,
                )
            }
            Decoder::Uuidv7 => (
                funcs[if lower { 2 } else { 3 }],
                list_of(&[t, inclusive]),
                pg_sys::InvalidOid,
            ),
        };
        let bound = pg_sys::makeFuncExpr(
            func,
            decoder.key_type(),
            args,
            pg_sys::InvalidOid,
            collation,
            pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
        );
        let strategy = if lower {
            pg_sys::BTGreaterEqualStrategyNumber
        } else {
            pg_sys::BTLessEqualStrategyNumber
        };
        let opno = decoder.key_operator(strategy);
        let key = pg_sys::copyObjectImpl(key.cast()) as *mut pg_sys::Expr;
        let clause = pg_sys::make_opclause(
            opno,
            pg_sys::BOOLOID,
            false,
            key,
            bound.cast(),
            pg_sys::InvalidOid,
            pg_sys::InvalidOid,
        );
        pg_sys::set_opfuncid(clause as *mut pg_sys::OpExpr);
        clause.cast()
    }
}

/// SAFETY: `n` is a node, or NULL.
unsafe fn is_a(n: *mut pg_sys::Node, tag: pg_sys::NodeTag) -> bool {
    // SAFETY: every node starts with its tag.
    unsafe { !n.is_null() && (*n).type_ == tag }
}

/// SAFETY: `n` is a node.
unsafe fn is_and(n: *mut pg_sys::Node) -> bool {
    // SAFETY: a BoolExpr by its tag.
    unsafe {
        is_a(n, pg_sys::NodeTag::T_BoolExpr)
            && (*(n as *mut pg_sys::BoolExpr)).boolop == pg_sys::BoolExprType::AND_EXPR
    }
}
