//! `min` and `max` of the time inside a key: the time of the smallest or largest key, which
//! PostgreSQL reads from the key's index (one row) as it does for `max(id)` itself. Django's
//! `Max('created_at')` and `SELECT max(created_at) FROM orders_v` read one row instead of all.
use pgrx::pg_sys;

use super::key_of::decoded_key;
use crate::pg::nodes::{cells, list_of};

/// `max(time(key))` becomes `time(max(key))`, `min` likewise, wherever such an aggregate stands
/// in an output column of `q` or its HAVING: the whole column, or inside an expression of it
/// (`max(created_at) + interval '1 day'`, `coalesce(max(created_at), now())`,
/// `date_trunc('day', min(created_at))`): the same value, so any expression of it is. The
/// decoders never decrease as the key grows over the keys they accept, so the largest key has the
/// largest time; where every such key has a time (`Decoded::exact`) no NULL time is skipped that
/// the key would not be. A key the decoder refuses makes the original an ERROR when its row is
/// read and this one only if it is the largest, as with any index. For keys of a type with
/// `min`/`max` aggregates (bigint: Snowflake keys; PostgreSQL has none for uuid). A FILTER,
/// DISTINCT or ORDER BY inside the aggregate keeps its meaning (the FILTER reads the query's rows,
/// as before; the other two change no min or max). Left alone: an aggregate of an outer query,
/// and one under a node kind `in_place` does not open (a subquery's are its own query's).
///
/// SAFETY: `q` is a Query of the planner's tree.
pub(super) unsafe fn min_max_by_key(q: *mut pg_sys::Query) {
    // SAFETY: the lists of a Query hold the node types named.
    unsafe {
        if (*q).commandType != pg_sys::CmdType::CMD_SELECT || !(*q).hasAggs {
            return;
        }
        for node in cells((*q).targetList) {
            let entry = node as *mut pg_sys::TargetEntry;
            (*entry).expr = in_place((*entry).expr.cast(), q, 0).cast();
        }
        (*q).havingQual = in_place((*q).havingQual, q, 0);
    }
}

/// How deep `in_place` goes into an expression.
const MAX_DEPTH: usize = 32;

/// `e` with each min or max of a time by the key (`of_the_key`), changed in place: through the
/// nodes that only combine their arguments' values (operators, functions, casts, AND/OR/NOT,
/// COALESCE, GREATEST/LEAST, CASE, IS NULL); nothing else is opened.
///
/// SAFETY: `e` is an expression of `q`, or NULL.
unsafe fn in_place(e: *mut pg_sys::Node, q: *mut pg_sys::Query, depth: usize) -> *mut pg_sys::Node {
    use pg_sys::NodeTag::*;
    // SAFETY: each node is read as the type its tag says; its lists hold expressions.
    unsafe {
        if e.is_null() || depth > MAX_DEPTH {
            return e;
        }
        pg_sys::check_stack_depth();
        let each = |list: *mut pg_sys::List| {
            if !list.is_null() {
                for i in 0..(*list).length as usize {
                    let cell = (*list).elements.add(i);
                    (*cell).ptr_value = in_place((*cell).ptr_value.cast(), q, depth + 1).cast();
                }
            }
        };
        let one = |arg: &mut *mut pg_sys::Expr| *arg = in_place((*arg).cast(), q, depth + 1).cast();
        match (*e).type_ {
            T_Aggref => return of_the_key(e as *mut pg_sys::Aggref, q).unwrap_or(e),
            T_FuncExpr => each((*(e as *mut pg_sys::FuncExpr)).args),
            T_OpExpr | T_DistinctExpr | T_NullIfExpr => each((*(e as *mut pg_sys::OpExpr)).args),
            T_BoolExpr => each((*(e as *mut pg_sys::BoolExpr)).args),
            T_CoalesceExpr => each((*(e as *mut pg_sys::CoalesceExpr)).args),
            T_MinMaxExpr => each((*(e as *mut pg_sys::MinMaxExpr)).args),
            T_RelabelType => one(&mut (*(e as *mut pg_sys::RelabelType)).arg),
            T_CoerceViaIO => one(&mut (*(e as *mut pg_sys::CoerceViaIO)).arg),
            T_NullTest => one(&mut (*(e as *mut pg_sys::NullTest)).arg),
            T_CaseExpr => {
                let c = e as *mut pg_sys::CaseExpr;
                one(&mut (*c).arg);
                for when in cells((*c).args) {
                    let w = when as *mut pg_sys::CaseWhen;
                    one(&mut (*w).expr);
                    one(&mut (*w).result);
                }
                one(&mut (*c).defresult);
            }
            _ => {}
        }
        e
    }
}

/// `time(max(key))` for `max(time(key))` (and `min`), if `agg` is one over an exact decoder.
///
/// SAFETY: `agg` is an Aggref of `q`.
unsafe fn of_the_key(agg: *mut pg_sys::Aggref, q: *mut pg_sys::Query) -> Option<*mut pg_sys::Node> {
    // SAFETY: an Aggref's args are TargetEntries; nodes are copied before they are changed.
    unsafe {
        let by_key = match (*agg).aggfnoid.to_u32() {
            pg_sys::F_MAX_TIMESTAMPTZ => pg_sys::F_MAX_INT8,
            pg_sys::F_MIN_TIMESTAMPTZ => pg_sys::F_MIN_INT8,
            _ => return None,
        };
        let args = cells((*agg).args);
        if (*agg).agglevelsup != 0 || args.len() != 1 || !(*agg).aggdirectargs.is_null() {
            return None;
        }
        let arg = (*(args[0] as *mut pg_sys::TargetEntry)).expr as *mut pg_sys::Node;
        let found = decoded_key(arg, q)?;
        if !found.exact
            || found.decoder.key_type != pg_sys::INT8OID
            || (*found.key).varlevelsup != 0
        {
            return None;
        }
        let key_entry = pg_sys::makeTargetEntry(
            pg_sys::copyObjectImpl(found.key.cast()).cast(),
            1,
            std::ptr::null_mut(),
            false,
        );
        let of_keys = pg_sys::copyObjectImpl(agg.cast()) as *mut pg_sys::Aggref;
        (*of_keys).aggfnoid = pg_sys::Oid::from(by_key);
        (*of_keys).aggtype = pg_sys::INT8OID;
        (*of_keys).aggargtypes = pg_sys::lappend_oid(std::ptr::null_mut(), pg_sys::INT8OID);
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
