//! The rewrite, before planning: every way a statement draws from an adopted sequence becomes a
//! call of draw.rs's functions, in place in the query tree. A table's default and an IDENTITY
//! column's next value are already in the tree by then (PostgreSQL's rewriter put them there: the
//! INSERT's target list, a multi-row VALUES list, MERGE's and ON CONFLICT's SET lists), and so
//! are the application's own calls, at any depth (subqueries, CTEs, SubLinks, functions in FROM).
//!
//! | found                                   | becomes                                           |
//! |-----------------------------------------|---------------------------------------------------|
//! | `nextval('s')`, s adopted               | `sequence_next('s', increment, true)`             |
//! | an IDENTITY default of s (NextValueExpr)| `sequence_next('s', increment, false)`            |
//! | `currval('s')`, `setval('s', ...)`      | `sequence_currval`, `sequence_setval[3]`          |
//! | any of them naming the sequence at run time, or `lastval()`, where some sequence is adopted | the `sequence_*` function that decides when it runs |
//!
//! The sequence stays an argument of type regclass, so a plan depends on it as PostgreSQL's own
//! call does: ALTER SEQUENCE, adopting and giving it back make cached plans be made again.
//! Where a draw of an adopted sequence is found that cannot be replaced (an IDENTITY value of
//! another type than bigint; the functions missing or not the role's to run), the statement is
//! refused, naming the sequence: it never runs PostgreSQL's own draw, which would hand out a plain
//! sequence number (and which adoption made fail, pg_idgen's last line: see mod.rs).
use std::ffi::c_void;

use pgrx::{pg_sys, PgSqlErrorCode};

use super::registry;
use crate::pg::errors::IdError;
use crate::pg::nodes::{cells, is_a};
use crate::pg::own_functions::{internal_schema, lookup};
use crate::pg::planner_hook::After;

/// PostgreSQL's sequence functions, by their OIDs (fixed in pg_proc.dat since 8.x).
const NEXTVAL: u32 = 1574;
const CURRVAL: u32 = 1575;
const SETVAL: u32 = 1576;
const SETVAL3: u32 = 1765;
const LASTVAL: u32 = 2559;

/// draw.rs's functions, looked up once per statement that needs one.
#[derive(Default)]
struct Functions {
    schema: Option<Option<pg_sys::Oid>>,
    found: Vec<(&'static str, Option<pg_sys::Oid>)>,
}

impl Functions {
    /// `idgen_internal.name(args)`, running `symbol`'s code; an ERROR naming `seq` if it cannot
    /// be used.
    fn get(&mut self, name: &'static str, seq: Option<pg_sys::Oid>) -> pg_sys::Oid {
        let found = match self.found.iter().find(|(n, _)| *n == name) {
            Some(&(_, oid)) => oid,
            None => {
                let schema = *self.schema.get_or_insert_with(internal_schema);
                let (sql_name, args, suffix): (&std::ffi::CStr, &[pg_sys::Oid], &str) = match name {
                    "sequence_next" => (
                        c"sequence_next",
                        &[pg_sys::REGCLASSOID, pg_sys::INT8OID, pg_sys::BOOLOID],
                        "",
                    ),
                    "sequence_setval" => (
                        c"sequence_setval",
                        &[pg_sys::REGCLASSOID, pg_sys::INT8OID],
                        "",
                    ),
                    "sequence_setval3" => (
                        c"sequence_setval",
                        &[pg_sys::REGCLASSOID, pg_sys::INT8OID, pg_sys::BOOLOID],
                        "3",
                    ),
                    "sequence_lastval" => (c"sequence_lastval", &[], ""),
                    "sequence_currval" => (c"sequence_currval", &[pg_sys::REGCLASSOID], ""),
                    _ => (c"sequence_nextval", &[pg_sys::REGCLASSOID], ""),
                };
                let oid = schema.and_then(|s| lookup(s, sql_name, args, suffix));
                self.found.push((name, oid));
                oid
            }
        };
        found.unwrap_or_else(|| {
            let what = seq.map_or("sequences".to_string(), |s| {
                format!("sequence \"{}\"", crate::pg::relation_name(s))
            });
            IdError::new(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                format!("{what} adopted by pg_idgen cannot be drawn from in this statement: idgen_internal.{name} is not this role's to run"),
            )
            .hint("Grant USAGE on schema idgen_internal and EXECUTE on its sequence_* functions back to PUBLIC (pg_idgen's install grants them), or give the sequence back with idgen.release_sequence().")
            .raise()
        })
    }
}

struct Walk {
    functions: Functions,
}

/// The planner hook's step: rewrites the statement in place; asks nothing of the plan.
pub fn rewrite(parse: *mut pg_sys::Query, _params: pg_sys::ParamListInfo) -> Option<After> {
    let mut walk = Walk {
        functions: Functions::default(),
    };
    // SAFETY: the planner hook's Query, walked by PostgreSQL's own walker with our callback.
    unsafe { visit(parse.cast(), (&mut walk as *mut Walk).cast()) };
    None
}

/// The walker PostgreSQL calls for each node.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn visit(node: *mut pg_sys::Node, context: *mut c_void) -> bool {
    // SAFETY: `context` is the Walk of `rewrite`; nodes are PostgreSQL's, by their tags.
    unsafe {
        if node.is_null() {
            return false;
        }
        let walk = &mut *(context as *mut Walk);
        match (*node).type_ {
            pg_sys::NodeTag::T_Query => {
                return query_walker(node.cast(), context);
            }
            pg_sys::NodeTag::T_TargetEntry => {
                let te = node as *mut pg_sys::TargetEntry;
                (*te).expr = replace_next_value(walk, (*te).expr.cast()).cast();
            }
            pg_sys::NodeTag::T_List => {
                let list = node as *mut pg_sys::List;
                for i in 0..(*list).length as usize {
                    let cell = (*list).elements.add(i);
                    (*cell).ptr_value = replace_next_value(walk, (*cell).ptr_value.cast()).cast();
                }
            }
            pg_sys::NodeTag::T_FuncExpr => rewrite_call(walk, node.cast()),
            pg_sys::NodeTag::T_NextValueExpr => {
                // Not under a target entry or in a list: nothing PostgreSQL writes, but refused
                // rather than left to draw a plain number.
                let seq = (*(node as *mut pg_sys::NextValueExpr)).seqid;
                if registry::adopted(seq).is_some() {
                    refuse_identity(seq, "an IDENTITY value in this place");
                }
            }
            _ => {}
        }
        expression_walker(node, context)
    }
}

/// A NextValueExpr of an adopted sequence, as the call that replaces it; any other node as is.
///
/// SAFETY: `node` is an expression or NULL.
unsafe fn replace_next_value(walk: &mut Walk, node: *mut pg_sys::Node) -> *mut pg_sys::Node {
    // SAFETY: by its tag.
    unsafe {
        if !is_a(node, pg_sys::NodeTag::T_NextValueExpr) {
            return node;
        }
        let nve = node as *mut pg_sys::NextValueExpr;
        let Some(adopted) = registry::adopted((*nve).seqid) else {
            return node;
        };
        if (*nve).typeId != pg_sys::INT8OID {
            refuse_identity(
                (*nve).seqid,
                "an IDENTITY column of another type than bigint",
            );
        }
        let func = walk.functions.get("sequence_next", Some((*nve).seqid));
        call(
            func,
            &[
                regclass((*nve).seqid),
                int8(adopted.increment),
                boolean(false),
            ],
        )
    }
}

fn refuse_identity(seq: pg_sys::Oid, what: &str) -> ! {
    IdError::new(
        PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
        format!(
            "sequence \"{}\" is adopted by pg_idgen and cannot serve {what}",
            crate::pg::relation_name(seq)
        ),
    )
    .hint("Widen the column to bigint (ALTER TABLE ... ALTER COLUMN ... TYPE bigint), or give the sequence back with idgen.release_sequence().")
    .raise()
}

/// A call of one of PostgreSQL's sequence functions, changed in place into draw.rs's where it
/// draws from an adopted sequence or may (the sequence known only at run time).
///
/// SAFETY: `f` is a FuncExpr.
unsafe fn rewrite_call(walk: &mut Walk, f: *mut pg_sys::FuncExpr) {
    // SAFETY: a FuncExpr's fields; its args a List of expressions.
    unsafe {
        let id = u32::from((*f).funcid);
        if !matches!(id, NEXTVAL | CURRVAL | SETVAL | SETVAL3 | LASTVAL) {
            return;
        }
        if id == LASTVAL {
            if registry::any() {
                (*f).funcid = walk.functions.get("sequence_lastval", None);
            }
            return;
        }
        let args = cells((*f).args);
        let Some(&first) = args.first() else { return };
        let seq = sequence_constant(first.cast());
        let adopted = match seq {
            Some(seq) => match registry::adopted(seq) {
                Some(a) => Some(a),
                None => return,
            },
            None if registry::any() => None,
            None => return,
        };
        match (id, adopted) {
            (NEXTVAL, Some(a)) => {
                (*f).funcid = walk.functions.get("sequence_next", seq);
                (*f).args = crate::pg::nodes::list_of(&[
                    first.cast::<pg_sys::Node>(),
                    int8(a.increment),
                    boolean(true),
                ]);
            }
            (NEXTVAL, None) => (*f).funcid = walk.functions.get("sequence_nextval", seq),
            (CURRVAL, _) => (*f).funcid = walk.functions.get("sequence_currval", seq),
            (SETVAL, _) => (*f).funcid = walk.functions.get("sequence_setval", seq),
            _ => (*f).funcid = walk.functions.get("sequence_setval3", seq),
        }
    }
}

/// The sequence a constant argument names (`nextval('s')`: the parser made 's' a regclass).
///
/// SAFETY: `e` is an expression.
unsafe fn sequence_constant(e: *mut pg_sys::Node) -> Option<pg_sys::Oid> {
    // SAFETY: by its tag; a regclass Const holds an Oid.
    unsafe {
        if !is_a(e, pg_sys::NodeTag::T_Const) {
            return None;
        }
        let c = e as *mut pg_sys::Const;
        if (*c).constisnull || (*c).consttype != pg_sys::REGCLASSOID {
            return None;
        }
        Some(pg_sys::Oid::from((*c).constvalue.value() as u32))
    }
}

fn call(func: pg_sys::Oid, args: &[*mut pg_sys::Node]) -> *mut pg_sys::Node {
    // SAFETY: a node constructor, in the planner's memory context.
    unsafe {
        pg_sys::makeFuncExpr(
            func,
            pg_sys::INT8OID,
            crate::pg::nodes::list_of(args),
            pg_sys::InvalidOid,
            pg_sys::InvalidOid,
            pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
        )
        .cast()
    }
}

fn constant(typ: pg_sys::Oid, len: i32, value: pg_sys::Datum) -> *mut pg_sys::Node {
    // SAFETY: a by-value constant, made in the current memory context.
    unsafe { pg_sys::makeConst(typ, -1, pg_sys::InvalidOid, len, value, false, true).cast() }
}

fn regclass(oid: pg_sys::Oid) -> *mut pg_sys::Node {
    constant(pg_sys::REGCLASSOID, 4, oid.into())
}

fn int8(v: i64) -> *mut pg_sys::Node {
    constant(pg_sys::INT8OID, 8, v.into())
}

fn boolean(v: bool) -> *mut pg_sys::Node {
    constant(pg_sys::BOOLOID, 1, v.into())
}

/// PostgreSQL's query walker over `q`'s parts (target lists, quals, range table, CTEs, ...).
///
/// SAFETY: `q` is a Query; `context` a Walk.
unsafe fn query_walker(q: *mut pg_sys::Query, context: *mut c_void) -> bool {
    // SAFETY: as PostgreSQL documents its walkers.
    unsafe {
        #[cfg(feature = "pg15")]
        {
            pg_sys::query_tree_walker(q, Some(visit), context, 0)
        }
        #[cfg(not(feature = "pg15"))]
        {
            pg_sys::query_tree_walker_impl(q, Some(visit), context, 0)
        }
    }
}

/// PostgreSQL's expression walker over `node`'s children.
///
/// SAFETY: `node` is an expression; `context` a Walk.
unsafe fn expression_walker(node: *mut pg_sys::Node, context: *mut c_void) -> bool {
    // SAFETY: passed on.
    unsafe { walk_children(node, context, visit) }
}

type Walker = unsafe extern "C-unwind" fn(*mut pg_sys::Node, *mut c_void) -> bool;

/// PostgreSQL's expression walker over `node`'s children, calling `walker` on each.
///
/// SAFETY: `node` is an expression; `context` what `walker` expects.
unsafe fn walk_children(node: *mut pg_sys::Node, context: *mut c_void, walker: Walker) -> bool {
    // SAFETY: as PostgreSQL documents its walkers; the callback's type is the walker's.
    unsafe {
        #[cfg(feature = "pg15")]
        {
            pg_sys::expression_tree_walker(node, Some(walker), context)
        }
        #[cfg(not(feature = "pg15"))]
        {
            pg_sys::expression_tree_walker_impl(node, Some(walker), context)
        }
    }
}
/// The first adopted sequence an expression draws from (a table's default: `nextval('s')`
/// anywhere in it, or an IDENTITY column's next value), if any.
pub fn adopted_draw_in(expr: *mut pg_sys::Node) -> Option<pg_sys::Oid> {
    let mut found: Option<pg_sys::Oid> = None;
    // SAFETY: an expression (or NULL) walked by PostgreSQL's walker with `find`.
    unsafe { find(expr, (&mut found as *mut Option<pg_sys::Oid>).cast()) };
    found
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn find(node: *mut pg_sys::Node, context: *mut c_void) -> bool {
    // SAFETY: `context` is adopted_draw_in's Option; nodes by their tags.
    unsafe {
        if node.is_null() {
            return false;
        }
        let seq = match (*node).type_ {
            pg_sys::NodeTag::T_NextValueExpr => Some((*(node as *mut pg_sys::NextValueExpr)).seqid),
            pg_sys::NodeTag::T_FuncExpr
                if u32::from((*(node as *mut pg_sys::FuncExpr)).funcid) == NEXTVAL =>
            {
                cells((*(node as *mut pg_sys::FuncExpr)).args)
                    .first()
                    .and_then(|&a| sequence_constant(a.cast()))
            }
            _ => None,
        };
        if let Some(seq) = seq.filter(|&s| registry::adopted(s).is_some()) {
            *(context as *mut Option<pg_sys::Oid>) = Some(seq);
            return true;
        }
        walk_children(node, context, find)
    }
}
