//! `min` and `max` of the time inside a key: the time of the smallest or largest key, which
//! PostgreSQL reads from the key's index (one row) as it does for `max(id)` itself. Django's
//! `Max('created_at')` and `SELECT max(created_at) FROM orders_v` read one row instead of all.
use pgrx::prelude::*;
use pgrx::{pg_sys, Uuid};

use super::bounds::Bounds;
use super::key_of::decoded_key;
use crate::pg::nodes::{cells, list_of};

/// `max(time(key))` becomes `time(max(key))`, `min` likewise, wherever such an aggregate stands
/// in an output column of `q` or its HAVING: the whole column, or inside an expression of it
/// (`max(created_at) + interval '1 day'`, `coalesce(max(created_at), now())`,
/// `date_trunc('day', min(created_at))`): the same value, so any expression of it is. The
/// decoders never decrease as the key grows over the keys they accept, so the largest key has the
/// largest time; where every such key has a time (`Decoded::exact`) no NULL time is skipped that
/// the key would not be. A key the decoder refuses makes the original an ERROR when its row is
/// read and this one only if it is the largest, as with any index. For Snowflake keys by
/// PostgreSQL's `min`/`max(bigint)`; for UUID keys, which PostgreSQL has none for, by pg_idgen's
/// `idgen_internal.min_key`/`max_key(uuid)` (their SORTOP lets the planner read them from the
/// index as it reads `max(id)`), where the role may run them. A FILTER,
/// DISTINCT or ORDER BY inside the aggregate keeps its meaning (the FILTER reads the query's rows,
/// as before; the other two change no min or max). Left alone: an aggregate of an outer query,
/// and one under a node kind `in_place` does not open (a subquery's are its own query's).
///
/// SAFETY: `q` is a Query of the planner's tree.
pub(super) unsafe fn min_max_by_key(q: *mut pg_sys::Query, bounds: &mut Bounds) {
    // SAFETY: the lists of a Query hold the node types named.
    unsafe {
        if (*q).commandType != pg_sys::CmdType::CMD_SELECT || !(*q).hasAggs {
            return;
        }
        let mut cx = Rewrite { q, bounds };
        for node in cells((*q).targetList) {
            let entry = node as *mut pg_sys::TargetEntry;
            (*entry).expr = in_place((*entry).expr.cast(), &mut cx, 0).cast();
        }
        (*q).havingQual = in_place((*q).havingQual, &mut cx, 0);
    }
}

/// The query whose aggregates are rewritten, and where its aggregates of UUID keys are found.
struct Rewrite<'a> {
    q: *mut pg_sys::Query,
    bounds: &'a mut Bounds,
}

/// The larger of two UUIDs in uuid's order (a memcmp of the bytes): the transition and combine
/// function of idgen_internal.max_key(uuid).
#[pg_extern(immutable, strict, parallel_safe, schema = "idgen_internal")]
fn uuid_larger(a: Uuid, b: Uuid) -> Uuid {
    if a.as_bytes() >= b.as_bytes() {
        a
    } else {
        b
    }
}

/// The smaller of two UUIDs in uuid's order: the transition and combine function of
/// idgen_internal.min_key(uuid).
#[pg_extern(immutable, strict, parallel_safe, schema = "idgen_internal")]
fn uuid_smaller(a: Uuid, b: Uuid) -> Uuid {
    if a.as_bytes() <= b.as_bytes() {
        a
    } else {
        b
    }
}

/// How deep `in_place` goes into an expression.
const MAX_DEPTH: usize = 32;

/// `e` with each min or max of a time by the key (`of_the_key`), changed in place: through the
/// nodes that only combine their arguments' values (operators, functions, casts, AND/OR/NOT,
/// COALESCE, GREATEST/LEAST, CASE, IS NULL); nothing else is opened.
///
/// SAFETY: `e` is an expression of `q`, or NULL.
unsafe fn in_place(e: *mut pg_sys::Node, cx: &mut Rewrite, depth: usize) -> *mut pg_sys::Node {
    use pg_sys::NodeTag::*;
    // SAFETY: each node is read as the type its tag says; its lists hold expressions.
    unsafe {
        if e.is_null() || depth > MAX_DEPTH {
            return e;
        }
        pg_sys::check_stack_depth();
        let each = |list: *mut pg_sys::List, cx: &mut Rewrite| {
            if !list.is_null() {
                for i in 0..(*list).length as usize {
                    let cell = (*list).elements.add(i);
                    (*cell).ptr_value = in_place((*cell).ptr_value.cast(), cx, depth + 1).cast();
                }
            }
        };
        let one = |arg: &mut *mut pg_sys::Expr, cx: &mut Rewrite| {
            *arg = in_place((*arg).cast(), cx, depth + 1).cast()
        };
        match (*e).type_ {
            T_Aggref => return of_the_key(e as *mut pg_sys::Aggref, cx).unwrap_or(e),
            T_FuncExpr => each((*(e as *mut pg_sys::FuncExpr)).args, cx),
            T_OpExpr | T_DistinctExpr | T_NullIfExpr => {
                each((*(e as *mut pg_sys::OpExpr)).args, cx)
            }
            T_BoolExpr => each((*(e as *mut pg_sys::BoolExpr)).args, cx),
            T_CoalesceExpr => each((*(e as *mut pg_sys::CoalesceExpr)).args, cx),
            T_MinMaxExpr => each((*(e as *mut pg_sys::MinMaxExpr)).args, cx),
            T_RelabelType => one(&mut (*(e as *mut pg_sys::RelabelType)).arg, cx),
            T_CoerceViaIO => one(&mut (*(e as *mut pg_sys::CoerceViaIO)).arg, cx),
            T_NullTest => one(&mut (*(e as *mut pg_sys::NullTest)).arg, cx),
            T_CaseExpr => {
                let c = e as *mut pg_sys::CaseExpr;
                one(&mut (*c).arg, cx);
                for when in cells((*c).args) {
                    let w = when as *mut pg_sys::CaseWhen;
                    one(&mut (*w).expr, cx);
                    one(&mut (*w).result, cx);
                }
                one(&mut (*c).defresult, cx);
            }
            _ => {}
        }
        e
    }
}

/// `time(max(key))` for `max(time(key))` (and `min`), if `agg` is one over an exact decoder.
///
/// SAFETY: `agg` is an Aggref of `cx.q`.
unsafe fn of_the_key(agg: *mut pg_sys::Aggref, cx: &mut Rewrite) -> Option<*mut pg_sys::Node> {
    // SAFETY: an Aggref's args are TargetEntries; nodes are copied before they are changed.
    unsafe {
        let max = match (*agg).aggfnoid.to_u32() {
            pg_sys::F_MAX_TIMESTAMPTZ => true,
            pg_sys::F_MIN_TIMESTAMPTZ => false,
            _ => return None,
        };
        let args = cells((*agg).args);
        if (*agg).agglevelsup != 0 || args.len() != 1 || !(*agg).aggdirectargs.is_null() {
            return None;
        }
        let arg = (*(args[0] as *mut pg_sys::TargetEntry)).expr as *mut pg_sys::Node;
        let found = decoded_key(arg, cx.q)?;
        if !found.exact || (*found.key).varlevelsup != 0 {
            return None;
        }
        let key_type = found.decoder.key_type;
        let by_key = match (key_type, max) {
            (pg_sys::INT8OID, true) => pg_sys::Oid::from(pg_sys::F_MAX_INT8),
            (pg_sys::INT8OID, false) => pg_sys::Oid::from(pg_sys::F_MIN_INT8),
            (pg_sys::UUIDOID, _) => cx.bounds.key_aggregate(max)?,
            _ => return None,
        };
        let key_entry = pg_sys::makeTargetEntry(
            pg_sys::copyObjectImpl(found.key.cast()).cast(),
            1,
            std::ptr::null_mut(),
            false,
        );
        let of_keys = pg_sys::copyObjectImpl(agg.cast()) as *mut pg_sys::Aggref;
        (*of_keys).aggfnoid = by_key;
        (*of_keys).aggtype = key_type;
        (*of_keys).aggargtypes = pg_sys::lappend_oid(std::ptr::null_mut(), key_type);
        (*of_keys).args = list_of(&[key_entry]);
        // The order and DISTINCT of a min or max change nothing, and name the old arguments.
        (*of_keys).aggorder = std::ptr::null_mut();
        (*of_keys).aggdistinct = std::ptr::null_mut();
        // The decoder's call, with the aggregate in the key's place.
        let call = pg_sys::copyObjectImpl(found.call.cast()) as *mut pg_sys::FuncExpr;
        let mut call_args = cells((*call).args);
        call_args[0] = of_keys.cast();
        (*call).args = list_of(&call_args);
        Some(call.cast())
    }
}
