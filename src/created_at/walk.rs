//! The walk over a statement's tree: where a comparison of a decoded time with a value that is
//! constant during the statement implies a key range, and where it is added. What may be added is
//! implied by the comparison for every row the comparison sees; the walk proves that, node kind
//! by node kind, and gives up wherever it cannot tell:
//!
//! - the conditions it reads are top-level conjuncts of a WHERE or of a JOIN's ON (a range implied
//!   inside an OR or a NOT is not implied by the whole), and the range joins them there, so it is
//!   nulled by the same outer joins;
//! - the time is a decoder over a key column of that query, followed through views and virtual
//!   columns only where the key and its time stay together (`key_of.rs`), with the bound
//!   functions the role may run (`bounds.rs`);
//! - it descends into subqueries in FROM, CTEs and the subqueries of top-level conditions, each of
//!   which gets its own ranges;
//! - it does a bounded amount of work per statement (at most `MAX_RANGES` ranges, `MAX_DEPTH`
//!   levels) and answers a cancel while it walks.
use pgrx::datum::TimestampWithTimeZone;
use pgrx::pg_sys;

use super::bounds::{date_instant, instant, local_instant};
use super::bounds::{Bounds, TimeType};
use super::decoders::Decoded;
use super::estimates::{marker_of, strip};
use super::key_of::decoded_key;
use super::local_time::{date_midnight, local_exact, served, session_exact, Compared};
use super::min_max::min_max_by_key;
use super::order_by::order_by_key;
use super::wrappers::{unwrap, Wrapped};
use crate::gucs;
use crate::pg::nodes::{bool_call, cells, conjuncts, folded, is_a, list_of, text_constant};
use crate::pg::planner_hook::After;
use crate::pg::zone_plans;

/// The most ranges added to one statement: each narrows what is read, so a few serve, and
/// thousands of conditions must not cost thousands of comparisons each.
pub(super) const MAX_RANGES: usize = 64;
const MAX_DEPTH: usize = 64;

/// The planner hook's work: every statement's tree, before it is planned; and, where it added
/// the markers of UUID keys' ranges (`estimates.rs`), their removal from the plan once made.
pub(super) fn add_key_ranges(
    parse: *mut pg_sys::Query,
    params: pg_sys::ParamListInfo,
) -> Option<After> {
    if !gucs::time_conditions() || parse.is_null() {
        return None;
    }
    let mut cx = Context {
        params,
        ..Context::default()
    };
    // SAFETY: the planner's Query, which it lets its hook change.
    unsafe { visit_query(parse, &mut cx, 0) };
    if cx.zone_read {
        zone_plans::planned_in_session_zone();
    }
    let marker = cx.marked?;
    // SAFETY: the plan the planner made of this tree.
    Some(Box::new(move |stmt| unsafe { strip(stmt, marker) }))
}

#[derive(Default)]
struct Context {
    bounds: Bounds,
    /// Ranges added so far.
    added: usize,
    /// The marker function, once a marker was added.
    marked: Option<pg_sys::Oid>,
    /// Whether a range was computed in the session's TimeZone while planning.
    zone_read: bool,
    /// The values of the bind parameters the plan is made for (NULL for a generic plan).
    params: pg_sys::ParamListInfo,
}

/// SAFETY: `q` is a Query of the planner's tree.
unsafe fn visit_query(q: *mut pg_sys::Query, cx: &mut Context, depth: usize) {
    if q.is_null() || depth > MAX_DEPTH {
        return;
    }
    // SAFETY: the lists of a Query hold the node types named.
    unsafe {
        pg_sys::check_stack_depth();
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
        min_max_by_key(q, &mut cx.bounds);
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
/// ANDed to them, each in place of its comparison where the range is exact.
///
/// SAFETY: `quals` is an expression of `q`, or NULL.
unsafe fn with_ranges(
    quals: *mut pg_sys::Node,
    q: *mut pg_sys::Query,
    cx: &mut Context,
    depth: usize,
) -> *mut pg_sys::Node {
    // SAFETY: nodes are read as the type their tag says.
    unsafe {
        let all = conjuncts(quals);
        let mut kept: Vec<*mut pg_sys::Node> = Vec::with_capacity(all.len());
        let mut added: Vec<*mut pg_sys::Node> = Vec::new();
        // The UUID keys whose ranges are added, for their markers.
        let mut estimated: Vec<*mut pg_sys::Var> = Vec::new();
        // The conditions a range could equal (a comparison with a function call on its right),
        // found once, at the first range.
        let mut comparable: Option<Vec<*mut pg_sys::Node>> = None;
        for &c in &all {
            pgrx::check_for_interrupts!();
            if is_a(c, pg_sys::NodeTag::T_SubLink) {
                let sub = (*(c as *mut pg_sys::SubLink)).subselect;
                if is_a(sub, pg_sys::NodeTag::T_Query) {
                    visit_query(sub as *mut pg_sys::Query, cx, depth + 1);
                }
            } else if is_a(c, pg_sys::NodeTag::T_OpExpr) && cx.added < MAX_RANGES {
                if let Some(range) = implied(c as *mut pg_sys::OpExpr, q, cx) {
                    if let Some(key) = range.estimated {
                        if !estimated
                            .iter()
                            .any(|&k| pg_sys::equal(k.cast(), key.cast()))
                        {
                            estimated.push(key);
                        }
                    }
                    // Whether every condition of the range is there now (added, or already in
                    // the query), which an exact range needs to stand for the comparison.
                    let mut whole = true;
                    for bound in range.conditions {
                        // A range already there is not added again: the query may carry it
                        // already (Citus sends a shard the conditions its coordinator's hook
                        // added; PostgreSQL may plan a tree twice). Only a condition on a bound
                        // function can be one.
                        let comparable = comparable.get_or_insert_with(|| {
                            all.iter()
                                .copied()
                                .filter(|&c| compares_with_call(c))
                                .collect()
                        });
                        let there = comparable
                            .iter()
                            .chain(added.iter())
                            .any(|&c| pg_sys::equal(c.cast(), bound.cast()));
                        if there {
                            continue;
                        }
                        if cx.added < MAX_RANGES {
                            added.push(bound);
                            cx.added += 1;
                        } else {
                            whole = false;
                        }
                    }
                    if range.exact && whole {
                        // Replaced by its range.
                        continue;
                    }
                    if whole {
                        // Beside its range, estimated as the range is.
                        if let Some(within) = cx.bounds.within_range() {
                            kept.push(within_range(c, within));
                            continue;
                        }
                    }
                }
            }
            kept.push(c);
        }
        if added.is_empty() && kept.len() == all.len() {
            return quals;
        }
        // The markers first: PostgreSQL estimates a relation's conditions in their order.
        let mut conditions = markers(&estimated, &all, cx);
        conditions.extend(kept);
        conditions.extend(added);
        pg_sys::makeBoolExpr(pg_sys::BoolExprType::AND_EXPR, list_of(&conditions), -1).cast()
    }
}

/// The markers `key_range_estimate(key)` of UUID keys whose ranges are added, but for any the
/// conditions have already (Citus sends a shard what its coordinator's hook added); none where the
/// role may not run the function.
///
/// SAFETY: `keys` are Vars and `present` expressions of the query.
unsafe fn markers(
    keys: &[*mut pg_sys::Var],
    present: &[*mut pg_sys::Node],
    cx: &mut Context,
) -> Vec<*mut pg_sys::Node> {
    if keys.is_empty() {
        return Vec::new();
    }
    let Some(marker) = cx.bounds.key_range_estimate() else {
        return Vec::new();
    };
    cx.marked = Some(marker);
    // SAFETY: nodes built and compared by PostgreSQL's functions.
    unsafe {
        keys.iter()
            .map(|&key| marker_of(key, marker))
            .filter(|&m| !present.iter().any(|&p| pg_sys::equal(p.cast(), m.cast())))
            .collect()
    }
}

/// `idgen_internal.within_range(c)`.
///
/// SAFETY: `c` is a condition of the query.
unsafe fn within_range(c: *mut pg_sys::Node, within: pg_sys::Oid) -> *mut pg_sys::Node {
    // SAFETY: a node constructor, in the current memory context.
    unsafe { bool_call(within, c) }
}

/// Whether `c` is a comparison whose right side is a function call, as every range is.
///
/// SAFETY: `c` is an expression.
unsafe fn compares_with_call(c: *mut pg_sys::Node) -> bool {
    // SAFETY: nodes are read as the type their tag says.
    unsafe {
        is_a(c, pg_sys::NodeTag::T_OpExpr)
            && cells((*(c as *mut pg_sys::OpExpr)).args)
                .get(1)
                .is_some_and(|&right| is_a(right.cast(), pg_sys::NodeTag::T_FuncExpr))
    }
}

/// The key range a comparison implies.
struct Range {
    /// One condition on the key, or two for `=`.
    conditions: Vec<*mut pg_sys::Node>,
    /// Whether it holds exactly where the comparison does, for every key the decoder takes
    /// (`Decoded::exact`): then it replaces the comparison.
    exact: bool,
    /// The key, where it is a UUID of a table whose statistics estimate the range
    /// (`estimates.rs`).
    estimated: Option<*mut pg_sys::Var>,
}

/// The key range one comparison implies, if any.
///
/// SAFETY: `op` is an OpExpr of `q`.
unsafe fn implied(
    op: *mut pg_sys::OpExpr,
    q: *mut pg_sys::Query,
    cx: &mut Context,
) -> Option<Range> {
    // SAFETY: an OpExpr's args are expressions; catalog lookups run in a transaction.
    unsafe {
        let args = cells((*op).args);
        if args.len() != 2 {
            return None;
        }
        let (types, lower, upper, inclusive) = time_comparison((*op).opno)?;
        // time(key) OP t, or t OP time(key) (the sides of the comparison swap).
        for (decoded, t, flip) in [(args[0], args[1], false), (args[1], args[0], true)] {
            let (decoded, t): (*mut pg_sys::Node, *mut pg_sys::Node) = (decoded.cast(), t.cast());
            // The time's side is a timestamptz; the other may be a timestamp or a date.
            let (time, other) = if flip {
                (types.1, types.0)
            } else {
                (types.0, types.1)
            };
            if !constant_for_statement(t) {
                continue;
            }
            let (lower, upper) = if flip { (upper, lower) } else { (lower, upper) };
            if time == TimeType::Timestamptz {
                if let Some(found) = decoded_key(decoded, q) {
                    let (lower_fn, upper_fn) = cx.bounds.of(found.decoder, other)?;
                    let mut conditions = Vec::new();
                    if lower {
                        conditions.push(key_bound(&found, t, true, inclusive, lower_fn));
                    }
                    if upper {
                        conditions.push(key_bound(&found, t, false, inclusive, upper_fn));
                    }
                    return Some(Range {
                        conditions,
                        exact: found.exact,
                        estimated: estimated(&found),
                    });
                }
            }
            // A wrapper of the time: a local time compared with its own type (`created_at::date =
            // D`), a truncated timestamptz with a timestamptz, a timestamp or a date.
            let Some(w) = unwrap(decoded) else {
                continue;
            };
            let trunc = w.result == TimeType::Timestamptz;
            // The unit and the zone: constant during the statement (a bind parameter too, as
            // SQLAlchemy sends date_trunc's unit); a text constant only one the bounds serve (for
            // any other the condition reads every row, and fails, as without the range).
            let given = [w.unit, w.zone];
            // A bind parameter of a plan made for its values is its value.
            let unit = w.unit.and_then(|e| text_constant(folded(e, cx.params)));
            let zone = w.zone.and_then(|e| text_constant(folded(e, cx.params)));
            if w.result != time
                || (!trunc && other != time)
                || !given
                    .into_iter()
                    .flatten()
                    .all(|e| constant_for_statement(e))
                || !served(unit.as_deref(), zone.as_deref())
            {
                continue;
            }
            let Some(found) = decoded_key(w.time, q) else {
                continue;
            };
            let (lower_fn, upper_fn) = cx.bounds.of(found.decoder, TimeType::Timestamptz)?;
            // In the session's zone, compared with a constant: where the range is exact in the
            // zone of this moment, its bounds now, as constants in the comparison's place; the plan
            // is then made again if the zone changes before it runs again (`pg::zone_plans`).
            let in_session = (found.exact
                && w.zone.is_none()
                && (w.unit.is_none() || unit.is_some())
                && zone_plans::replans_on_zone_change())
            .then(|| compared_constant(folded(t, cx.params), trunc, other))
            .flatten()
            .and_then(|c| session_exact(c, unit.as_deref(), (lower, upper, inclusive)));
            if let Some((lower_at, upper_at)) = in_session {
                let conditions = [(lower_at, true, lower_fn), (upper_at, false, upper_fn)]
                    .into_iter()
                    .filter_map(|(at, is_lower, key_fn)| {
                        at.map(|at| {
                            key_bound(&found, timestamptz_const(at), is_lower, true, key_fn)
                        })
                    })
                    .collect();
                cx.zone_read = true;
                return Some(Range {
                    conditions,
                    exact: true,
                    estimated: estimated(&found),
                });
            }
            let (local_lower, local_upper) = cx.bounds.of_local(trunc, other)?;
            let mut conditions = Vec::new();
            for (wanted, is_lower, local_fn, key_fn) in [
                (lower, true, local_lower, lower_fn),
                (upper, false, local_upper, upper_fn),
            ] {
                if wanted {
                    let instant = local_bound(&w, t, local_fn);
                    conditions.push(key_bound(&found, instant, is_lower, true, key_fn));
                }
            }
            // Exact only for a local time in a zone named by a constant, compared with a
            // constant, where the zone's offset does not change near it (`local_exact`); elsewhere
            // the comparison decides each row in the range.
            let exact = found.exact
                && !trunc
                && (w.unit.is_none() || unit.is_some())
                && zone.as_deref().is_some_and(|z| {
                    local_constant(folded(t, cx.params)).is_some_and(|raw| {
                        local_exact(raw, unit.as_deref(), Some(z), (lower, upper, inclusive))
                    })
                });
            return Some(Range {
                conditions,
                exact,
                estimated: estimated(&found),
            });
        }
        None
    }
}

/// The key of a range `estimates.rs` estimates: a UUID column of a table.
fn estimated(found: &Decoded) -> Option<*mut pg_sys::Var> {
    (found.decoder.key_type == pg_sys::UUIDOID && found.local).then_some(found.key)
}

/// A date or timestamp constant's representation (a date as its midnight), if `t` is one and not
/// NULL.
///
/// SAFETY: `t` is an expression.
unsafe fn local_constant(t: *mut pg_sys::Node) -> Option<i64> {
    // SAFETY: a Const's datum is of its type: int64 for a timestamp, int32 for a date.
    unsafe {
        if !is_a(t, pg_sys::NodeTag::T_Const) || (*(t as *mut pg_sys::Const)).constisnull {
            return None;
        }
        let c = t as *mut pg_sys::Const;
        match (*c).consttype {
            pg_sys::TIMESTAMPOID => Some((*c).constvalue.value() as i64),
            pg_sys::DATEOID => match (*c).constvalue.value() as i32 {
                i32::MIN => Some(i64::MIN),
                i32::MAX => Some(i64::MAX),
                days => date_midnight(days),
            },
            _ => None,
        }
    }
}

/// The constant a local time in the session's zone is compared with, as `session_exact` takes
/// it: for a truncated timestamptz (`trunc`) the instant it is compared as (`other`: its type),
/// else the local time; None where `t` (folded: `pg::nodes::folded`) is no constant or NULL.
///
/// SAFETY: `t` is an expression.
unsafe fn compared_constant(
    t: *mut pg_sys::Node,
    trunc: bool,
    other: TimeType,
) -> Option<Compared> {
    use pgrx::datum::{Date, FromDatum, Timestamp};
    if !trunc {
        // SAFETY: as local_constant.
        return unsafe { local_constant(t) }.map(Compared::Local);
    }
    // SAFETY: a Const's datum is of its type, which the comparison's operator gives as `other`.
    unsafe {
        if !is_a(t, pg_sys::NodeTag::T_Const) || (*(t as *mut pg_sys::Const)).constisnull {
            return None;
        }
        let d = (*(t as *mut pg_sys::Const)).constvalue;
        let at = match other {
            TimeType::Timestamptz => instant(TimestampWithTimeZone::from_datum(d, false)?),
            TimeType::Timestamp => local_instant(Timestamp::from_datum(d, false)?),
            TimeType::Date => date_instant(Date::from_datum(d, false)?),
        };
        Some(Compared::Truncated(at))
    }
}

/// A timestamptz constant.
fn timestamptz_const(at: TimestampWithTimeZone) -> *mut pg_sys::Node {
    use pgrx::IntoDatum;
    // SAFETY: a node constructor, in the current memory context; a timestamptz is by value.
    unsafe {
        pg_sys::makeConst(
            pg_sys::TIMESTAMPTZOID,
            -1,
            pg_sys::InvalidOid,
            8,
            at.into_datum().expect("timestamptz"),
            false,
            true,
        )
        .cast()
    }
}

/// `idgen_internal.time_local_lower(t, unit, zone)` (or another of `local_time.rs`) for a
/// wrapper: NULL for no unit, and for the session's zone.
///
/// SAFETY: `t` and the wrapper's unit and zone are expressions of the query; copies are used.
unsafe fn local_bound(w: &Wrapped, t: *mut pg_sys::Node, func: pg_sys::Oid) -> *mut pg_sys::Node {
    // SAFETY: node constructors of PostgreSQL, in the current memory context.
    unsafe {
        let copy = |e: *mut pg_sys::Node| pg_sys::copyObjectImpl(e.cast()) as *mut pg_sys::Node;
        let or_null = |e: Option<*mut pg_sys::Node>| {
            e.map_or_else(
                || pg_sys::makeNullConst(pg_sys::TEXTOID, -1, pg_sys::DEFAULT_COLLATION_OID).cast(),
                copy,
            )
        };
        let args = [copy(t), or_null(w.unit), or_null(w.zone)];
        pg_sys::makeFuncExpr(
            func,
            pg_sys::TIMESTAMPTZOID,
            list_of(&args),
            pg_sys::InvalidOid,
            pg_sys::DEFAULT_COLLATION_OID,
            pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
        )
        .cast()
    }
}

/// For a comparison of two of timestamptz, timestamp and date (either way round):
/// the two sides' types, whether `left OP right` bounds `left` from below, from above (both for
/// `=`), and whether inclusively. None for any other operator.
fn time_comparison(opno: pg_sys::Oid) -> Option<((TimeType, TimeType), bool, bool, bool)> {
    // SAFETY: catalog lookups, in a transaction (the planner's).
    unsafe {
        let (mut left, mut right) = (pg_sys::InvalidOid, pg_sys::InvalidOid);
        pg_sys::op_input_types(opno, &mut left, &mut right);
        let types = (TimeType::of(left)?, TimeType::of(right)?);
        let family = pg_sys::get_opclass_family(pg_sys::TIMESTAMPTZ_BTREE_OPS_OID);
        let (lower, upper, inclusive) = match pg_sys::get_op_opfamily_strategy(opno, family) as u32
        {
            pg_sys::BTLessStrategyNumber => (false, true, false),
            pg_sys::BTLessEqualStrategyNumber => (false, true, true),
            pg_sys::BTEqualStrategyNumber => (true, true, true),
            pg_sys::BTGreaterEqualStrategyNumber => (true, false, true),
            pg_sys::BTGreaterStrategyNumber => (true, false, false),
            _ => return None,
        };
        Some((types, lower, upper, inclusive))
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

/// `key >= lower(t, inclusive[, layout])` or `key <= upper(...)`.
///
/// SAFETY: `t` is an expression of the query; a copy of it is used, and of the key.
unsafe fn key_bound(
    found: &Decoded,
    t: *mut pg_sys::Node,
    lower: bool,
    inclusive: bool,
    func: pg_sys::Oid,
) -> *mut pg_sys::Node {
    use pgrx::IntoDatum;
    // SAFETY: node constructors of PostgreSQL, in the current memory context.
    unsafe {
        let t = pg_sys::copyObjectImpl(t.cast()) as *mut pg_sys::Node;
        let inclusive = pg_sys::makeBoolConst(inclusive, false);
        // The input collation is the one the parser gives a text argument, so that the range reads
        // back (from a Citus coordinator's query text) as a node equal to this one.
        let (args, collation) = match &found.layout {
            Some(layout) => {
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
                    list_of(&[t, inclusive, layout.cast()]),
                    pg_sys::DEFAULT_COLLATION_OID,
                )
            }
            None => (list_of(&[t, inclusive]), pg_sys::InvalidOid),
        };
        let bound = pg_sys::makeFuncExpr(
            func,
            found.decoder.key_type,
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
        let opno = found.decoder.key_operator(strategy);
        let key = pg_sys::copyObjectImpl(found.key.cast()) as *mut pg_sys::Expr;
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
