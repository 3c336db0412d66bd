//! Parse and plan nodes, read and built: lists, tags, the range table entry of a column, constants,
//! the code a function runs, a boolean call, and a support function's answer on selectivity.
use pgrx::pg_sys;

/// The pointers of a List's cells (none for NULL, the empty List).
///
/// SAFETY: `list` is a List of pointers, or NULL.
pub unsafe fn cells(list: *mut pg_sys::List) -> Vec<*mut std::ffi::c_void> {
    if list.is_null() {
        return Vec::new();
    }
    // SAFETY: a valid List of `length` cells.
    unsafe {
        (0..(*list).length as usize)
            .map(|i| (*(*list).elements.add(i)).ptr_value)
            .collect()
    }
}

/// A List of the pointers given, in the current memory context (NULL for none).
///
/// SAFETY: in a backend, with a memory context to allocate in.
pub unsafe fn list_of<T>(items: &[*mut T]) -> *mut pg_sys::List {
    let mut list = std::ptr::null_mut();
    for &item in items {
        // SAFETY: lappend takes NULL for the empty list and returns the list it grew.
        list = unsafe { pg_sys::lappend(list, item.cast()) };
    }
    list
}

/// `func(arg)`, a call of a boolean function of one argument, as the parser writes it.
///
/// SAFETY: `arg` is an expression; in a backend, with a memory context to allocate in.
pub unsafe fn bool_call<T>(func: pg_sys::Oid, arg: *mut T) -> *mut pg_sys::Node {
    // SAFETY: a node constructor, in the current memory context.
    unsafe {
        pg_sys::makeFuncExpr(
            func,
            pg_sys::BOOLOID,
            list_of(&[arg]),
            pg_sys::InvalidOid,
            pg_sys::InvalidOid,
            pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
        )
        .cast()
    }
}

/// A planner support function's answer to `request` (a support request node, as PostgreSQL passes
/// it): a selectivity request gets `selectivity(request)`; any other is not answered (a null
/// pointer).
pub fn answer_selectivity(
    request: pgrx::Internal,
    selectivity: impl FnOnce(*mut pg_sys::SupportRequestSelectivity) -> f64,
) -> pgrx::Internal {
    let node = request
        .unwrap()
        .map_or(std::ptr::null_mut(), |d| d.cast_mut_ptr::<pg_sys::Node>());
    // SAFETY: the planner passes one of its support requests, a Node, during planning.
    unsafe {
        if is_a(node, pg_sys::NodeTag::T_SupportRequestSelectivity) {
            let r = node as *mut pg_sys::SupportRequestSelectivity;
            (*r).selectivity = selectivity(r);
            return pgrx::Internal::from(Some(pg_sys::Datum::from(node)));
        }
    }
    pgrx::Internal::from(Some(pg_sys::Datum::from(0)))
}

/// Whether `n` is a node of type `tag` (false for NULL).
///
/// SAFETY: `n` is a node, or NULL.
pub unsafe fn is_a(n: *mut pg_sys::Node, tag: pg_sys::NodeTag) -> bool {
    // SAFETY: every node starts with its tag.
    unsafe { !n.is_null() && (*n).type_ == tag }
}

/// The conditions ANDed at the top of `quals` (itself, if it is no AND; none for NULL).
///
/// SAFETY: `quals` is an expression, or NULL.
pub unsafe fn conjuncts(quals: *mut pg_sys::Node) -> Vec<*mut pg_sys::Node> {
    // SAFETY: a BoolExpr by its tag; its args are expressions.
    unsafe {
        if quals.is_null() {
            Vec::new()
        } else if is_a(quals, pg_sys::NodeTag::T_BoolExpr)
            && (*(quals as *mut pg_sys::BoolExpr)).boolop == pg_sys::BoolExprType::AND_EXPR
        {
            cells((*(quals as *mut pg_sys::BoolExpr)).args)
                .into_iter()
                .map(|c| c.cast())
                .collect()
        } else {
            vec![quals]
        }
    }
}

/// The range table entry a column of `q`'s own level names (None for an outer query's column, a
/// whole-row or system column).
///
/// SAFETY: `v` is a Var of `q`.
pub unsafe fn rte_of(
    v: *mut pg_sys::Var,
    q: *mut pg_sys::Query,
) -> Option<*mut pg_sys::RangeTblEntry> {
    // SAFETY: varno numbers the entries of `q`'s range table from 1.
    unsafe {
        if (*v).varlevelsup != 0 || (*v).varattno <= 0 {
            return None;
        }
        let rtes = cells((*q).rtable);
        Some(*rtes.get(((*v).varno as usize).checked_sub(1)?)? as *mut pg_sys::RangeTblEntry)
    }
}

/// A copy of expression `e` folded as the planner folds it (immutable functions of constants;
/// a bind parameter of a plan made for its values, which PostgreSQL marks PARAM_FLAG_CONST, as
/// its value): a Const where it is one. `params`: the planner's bound parameters, or NULL.
///
/// SAFETY: `e` is an expression; in a transaction (catalog lookups).
pub unsafe fn folded(e: *mut pg_sys::Node, params: pg_sys::ParamListInfo) -> *mut pg_sys::Node {
    // SAFETY: PostgreSQL's folding, on a copy, with a planner state that has only the parameters
    // (what eval_const_expressions reads of it; the dependencies it records are dropped).
    unsafe {
        if is_a(e, pg_sys::NodeTag::T_Const) {
            return e;
        }
        let mut glob = pgrx::PgBox::<pg_sys::PlannerGlobal>::alloc0();
        glob.type_ = pg_sys::NodeTag::T_PlannerGlobal;
        glob.boundParams = params;
        let mut root = pgrx::PgBox::<pg_sys::PlannerInfo>::alloc0();
        root.type_ = pg_sys::NodeTag::T_PlannerInfo;
        root.glob = glob.into_pg();
        pg_sys::eval_const_expressions(root.into_pg(), pg_sys::copyObjectImpl(e.cast()).cast())
    }
}

/// The value of a non-NULL text constant.
///
/// SAFETY: `e` is an expression.
pub unsafe fn text_constant(e: *mut pg_sys::Node) -> Option<String> {
    use pgrx::FromDatum;
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

/// The C symbol a function runs, if it is a C or internal function (only superusers make those,
/// so the symbol names the code of PostgreSQL or of an extension a superuser installed).
pub fn c_symbol(funcid: pg_sys::Oid) -> Option<String> {
    use pgrx::FromDatum;
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

/// The text of a String node (a column name in a parse tree's list of names).
///
/// SAFETY: `n` is a node, or NULL.
pub unsafe fn string_value(n: *mut pg_sys::Node) -> Option<String> {
    // SAFETY: a String node by its tag, holding a NUL-terminated string.
    unsafe {
        if !is_a(n, pg_sys::NodeTag::T_String) {
            return None;
        }
        let s = (*(n as *mut pg_sys::String)).sval;
        (!s.is_null()).then(|| std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned())
    }
}
