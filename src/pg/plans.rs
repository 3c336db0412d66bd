//! The nodes of a planned statement: its plan tree and its subplans, each node once.
use pgrx::pg_sys;

use super::nodes::{cells, is_a};

/// Runs `f` over every plan node of `stmt`: its tree, the trees of its subplans (InitPlans and
/// SubPlans), and the children of every node (an Append's, a MergeAppend's, a bitmap AND's or OR's,
/// a subquery scan's, a custom scan's).
///
/// SAFETY: `stmt` is a PlannedStmt, whose nodes `f` may change but not free.
pub unsafe fn each_plan(stmt: *mut pg_sys::PlannedStmt, f: &mut dyn FnMut(*mut pg_sys::Plan)) {
    // SAFETY: a PlannedStmt's fields; its subplans are a List of Plans (NULL for one pruned away).
    unsafe {
        visit((*stmt).planTree, f);
        for sub in cells((*stmt).subplans) {
            visit(sub.cast(), f);
        }
    }
}

/// SAFETY: `plan` is a Plan node, or NULL.
unsafe fn visit(plan: *mut pg_sys::Plan, f: &mut dyn FnMut(*mut pg_sys::Plan)) {
    if plan.is_null() {
        return;
    }
    // SAFETY: each node is read as the type its tag says; the lists named hold Plans.
    unsafe {
        pg_sys::check_stack_depth();
        f(plan);
        visit((*plan).lefttree, f);
        visit((*plan).righttree, f);
        let node = plan as *mut pg_sys::Node;
        let children = if is_a(node, pg_sys::NodeTag::T_Append) {
            (*(plan as *mut pg_sys::Append)).appendplans
        } else if is_a(node, pg_sys::NodeTag::T_MergeAppend) {
            (*(plan as *mut pg_sys::MergeAppend)).mergeplans
        } else if is_a(node, pg_sys::NodeTag::T_BitmapAnd) {
            (*(plan as *mut pg_sys::BitmapAnd)).bitmapplans
        } else if is_a(node, pg_sys::NodeTag::T_BitmapOr) {
            (*(plan as *mut pg_sys::BitmapOr)).bitmapplans
        } else if is_a(node, pg_sys::NodeTag::T_CustomScan) {
            (*(plan as *mut pg_sys::CustomScan)).custom_plans
        } else {
            std::ptr::null_mut()
        };
        for child in cells(children) {
            visit(child.cast(), f);
        }
        if is_a(node, pg_sys::NodeTag::T_SubqueryScan) {
            visit((*(plan as *mut pg_sys::SubqueryScan)).subplan, f);
        }
    }
}

/// The join a plan node is (a nested loop, merge or hash join: their `joinqual`), if it is one.
///
/// SAFETY: `plan` is a Plan node.
pub unsafe fn join_of(plan: *mut pg_sys::Plan) -> Option<*mut pg_sys::Join> {
    // SAFETY: the three join nodes start with a Join.
    unsafe {
        let node = plan as *mut pg_sys::Node;
        [
            pg_sys::NodeTag::T_NestLoop,
            pg_sys::NodeTag::T_MergeJoin,
            pg_sys::NodeTag::T_HashJoin,
        ]
        .into_iter()
        .any(|tag| is_a(node, tag))
        .then_some(plan as *mut pg_sys::Join)
    }
}
