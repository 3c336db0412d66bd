//! True row estimates for a UUID key's range.
//!
//! PostgreSQL places no `uuid` inside a bucket of the column's histogram (it takes half of the
//! bucket), so that the range `id >= lower(T1) AND id <= upper(T2)` of an hour of a month of
//! UUIDv7 keys is estimated as half a bucket (3.6x too many rows with 100 buckets) or, where both
//! ends fall in one bucket, as one row (2,800 were read), and a join above it is planned for that.
//! The hand-written range gets the same. The range itself stays as it is (its operators are what
//! an index, a bitmap scan and partition pruning read); beside it the walk writes
//! `idgen_internal.key_range_estimate(id)`, first among the conditions, which:
//!
//! - is true for every row, NULL keys included, so that it changes no result wherever it runs;
//! - when PostgreSQL estimates the conditions of the key's relation (in their order, so before
//!   the range's), has its support function (`key_range_estimate_support`) place each bound of
//!   the range inside its bucket by its value as a number (`pg_idgen_core::histogram`: a UUIDv7's
//!   first bits are its time), with the most common values and the NULL fraction as PostgreSQL
//!   counts them, and leave that as the estimate of the bound's condition (the planner keeps the
//!   estimate of a condition once made: `RestrictInfo.norm_selec`); its own estimate is 1;
//! - is taken out of the plan when it is made (`strip`), so that no scan runs it.
//!
//! Only for keys of a table, partitioned table or materialized view (`Decoded::local`): a
//! foreign table's conditions may be sent to a server that lacks the function.
use pgrx::prelude::*;
use pgrx::{pg_sys, Internal, Uuid};

use pg_idgen_core::histogram::{share_below_sampled, Tails};

use super::decoders::UUID;
use crate::pg::nodes::{answer_selectivity, bool_call, cells, is_a, list_of};
use crate::pg::plans::{each_plan, join_of};

/// Always true: the marker of a UUID key whose range the planner estimates from the key's
/// histogram (`key_range_estimate_support`), added beside a time condition's key range
/// (idgen.time_conditions) and taken out of the plan once made.
#[pg_extern(
    immutable,
    parallel_safe,
    schema = "idgen_internal",
    support = key_range_estimate_support
)]
fn key_range_estimate(key: Option<Uuid>) -> bool {
    // Whatever the key, NULL included.
    let _ = key;
    true
}

/// The planner support function of key_range_estimate: the estimates of the key's range
/// conditions from its histogram, and 1 for itself.
#[pg_extern(immutable, parallel_safe, strict, schema = "idgen_internal")]
fn key_range_estimate_support(request: Internal) -> Internal {
    answer_selectivity(request, |r| {
        // SAFETY: the planner's request, during planning.
        unsafe { estimate_ranges(r) };
        1.0
    })
}

/// The marker `key_range_estimate(key)` (function `marker`) of a key.
///
/// SAFETY: `key` is a Var of the query the marker joins; a copy of it is used.
pub(super) unsafe fn marker_of(key: *mut pg_sys::Var, marker: pg_sys::Oid) -> *mut pg_sys::Node {
    // SAFETY: a copy of the key, in the current memory context.
    unsafe {
        bool_call(
            marker,
            pg_sys::copyObjectImpl(key.cast()) as *mut pg_sys::Var,
        )
    }
}

/// Takes the markers (calls of function `marker`) out of a planned statement's conditions (a
/// scan's filter, a join's): each is true for every row, so that a plan without it returns what it
/// returned with it. One that some node kept elsewhere stays, and is true there.
///
/// SAFETY: `stmt` is a PlannedStmt the planner just made.
pub(super) unsafe fn strip(stmt: *mut pg_sys::PlannedStmt, marker: pg_sys::Oid) {
    // SAFETY: qual lists are Lists of expressions; a List's cells are rebuilt in a new List.
    unsafe {
        let without = |quals: *mut pg_sys::List| {
            let all = cells(quals);
            let kept: Vec<_> = all
                .iter()
                .copied()
                .filter(|&e| {
                    let e = e as *mut pg_sys::Node;
                    !(is_a(e, pg_sys::NodeTag::T_FuncExpr)
                        && (*(e as *mut pg_sys::FuncExpr)).funcid == marker)
                })
                .collect();
            if kept.len() == all.len() {
                quals
            } else {
                list_of(&kept)
            }
        };
        each_plan(stmt, &mut |plan| {
            (*plan).qual = without((*plan).qual);
            if let Some(join) = join_of(plan) {
                (*join).joinqual = without((*join).joinqual);
            }
        });
    }
}

/// The estimates of the range conditions on the marker's key in its relation's conditions (the
/// ranges added, `key >= lower(T)` and `key <= upper(T)`, and any other bound of the key by a value
/// known while planning): the share of rows at or above the bound, or at or below it,
/// from the key's statistics, kept as each condition's estimate. Nothing where the bound is not
/// known while planning (a parameter of a generic plan) or the key has no histogram: PostgreSQL's
/// own estimate stands.
///
/// SAFETY: `r` is the planner's request, during planning.
unsafe fn estimate_ranges(r: *mut pg_sys::SupportRequestSelectivity) {
    // SAFETY: the planner's structures, read as PostgreSQL's headers lay them out; examine_variable
    // fills `data`, whose tuple is released with its own function.
    unsafe {
        let root = (*r).root;
        let args = cells((*r).args);
        let &[key] = args.as_slice() else {
            return;
        };
        let key = key as *mut pg_sys::Node;
        if root.is_null() || !is_a(key, pg_sys::NodeTag::T_Var) {
            return;
        }
        let v = key as *mut pg_sys::Var;
        let relid = (*v).varno as usize;
        if (*v).varlevelsup != 0 || relid == 0 || relid >= (*root).simple_rel_array_size as usize {
            return;
        }
        let rel = *(*root).simple_rel_array.add(relid);
        if rel.is_null() {
            return;
        }
        let (at_least, at_most) = (
            UUID.key_operator(pg_sys::BTGreaterEqualStrategyNumber),
            UUID.key_operator(pg_sys::BTLessEqualStrategyNumber),
        );
        let mut stats: Option<Option<ColumnStats>> = None;
        for rinfo in cells((*rel).baserestrictinfo) {
            let rinfo = rinfo as *mut pg_sys::RestrictInfo;
            let clause = (*rinfo).clause as *mut pg_sys::Node;
            if !is_a(clause, pg_sys::NodeTag::T_OpExpr) {
                continue;
            }
            let op = clause as *mut pg_sys::OpExpr;
            let lower = match (*op).opno {
                o if o == at_least => true,
                o if o == at_most => false,
                _ => continue,
            };
            let &[left, right] = cells((*op).args).as_slice() else {
                continue;
            };
            let (left, right): (*mut pg_sys::Node, *mut pg_sys::Node) = (left.cast(), right.cast());
            // The bound: a bound function's call, or the constant the planner folded it into
            // (of a constant time); any other constant bound of the key is estimated alike.
            if !is_a(left, pg_sys::NodeTag::T_Var)
                || !same_column(left as *mut pg_sys::Var, v)
                || pg_sys::contain_var_clause(right)
            {
                continue;
            }
            let value = pg_sys::estimate_expression_value(root, right);
            if !is_a(value, pg_sys::NodeTag::T_Const) {
                continue;
            }
            let c = value as *mut pg_sys::Const;
            if (*c).constisnull || (*c).consttype != pg_sys::UUIDOID {
                continue;
            }
            let bound = uuid_value((*c).constvalue);
            let stats = stats.get_or_insert_with(|| column_stats(root, key));
            if let Some(share) = stats.as_ref().and_then(|s| s.side(bound, lower)) {
                // PostgreSQL takes exactly its default for an inequality as "unknown" when it
                // pairs a range's two sides.
                (*rinfo).norm_selec = if share == pg_sys::DEFAULT_INEQ_SEL {
                    share + 1e-12
                } else {
                    share
                };
            }
        }
    }
}

/// What the planner's statistics say of a uuid column: the NULL fraction, the most common values
/// and their frequencies, the histogram's bounds (ascending, as numbers).
struct ColumnStats {
    nulls: f64,
    common: Vec<(u128, f64)>,
    bounds: Vec<u128>,
    /// The rows below the histogram's first bound and above its last (`tails`).
    tails: Tails,
}

impl ColumnStats {
    /// The share of rows at or above `bound` (`lower`) or at or below it; None without a histogram.
    fn side(&self, bound: u128, lower: bool) -> Option<f64> {
        let below = share_below_sampled(&self.bounds, bound, self.tails)?;
        let others = (1.0 - self.nulls - self.common.iter().map(|c| c.1).sum::<f64>()).max(0.0);
        let common: f64 = self
            .common
            .iter()
            .filter(|&&(v, _)| if lower { v >= bound } else { v <= bound })
            .map(|c| c.1)
            .sum();
        let histogram = if lower { 1.0 - below } else { below };
        Some((common + others * histogram).clamp(0.0, 1.0))
    }
}

/// The statistics of the uuid column `key` (examine_variable: the table's, an inheritance tree's,
/// or a subquery's column's), if it has any.
///
/// SAFETY: during planning; `key` is a Var of `root`'s query.
unsafe fn column_stats(
    root: *mut pg_sys::PlannerInfo,
    key: *mut pg_sys::Node,
) -> Option<ColumnStats> {
    // SAFETY: a pg_statistic tuple; its slots are read and freed by PostgreSQL's functions and
    // hold uuid values (pointers to 16 bytes) for a uuid column; the tuple is released with the
    // function examine_variable gives.
    unsafe {
        let mut data = pg_sys::VariableStatData::default();
        pg_sys::examine_variable(root, key, 0, &mut data);
        let tuple = data.statsTuple;
        if tuple.is_null() {
            return None;
        }
        let form = pg_sys::GETSTRUCT(tuple) as *mut pg_sys::FormData_pg_statistic;
        let mut stats = ColumnStats {
            nulls: (*form).stanullfrac as f64,
            common: Vec::new(),
            bounds: Vec::new(),
            tails: tails(root, data.rel),
        };
        let mut slot = pg_sys::AttStatsSlot::default();
        if pg_sys::get_attstatsslot(
            &mut slot,
            tuple,
            pg_sys::STATISTIC_KIND_MCV as i32,
            pg_sys::InvalidOid,
            (pg_sys::ATTSTATSSLOT_VALUES | pg_sys::ATTSTATSSLOT_NUMBERS) as i32,
        ) {
            stats.common = (0..slot.nvalues.min(slot.nnumbers) as usize)
                .map(|i| (uuid_value(*slot.values.add(i)), *slot.numbers.add(i) as f64))
                .collect();
            pg_sys::free_attstatsslot(&mut slot);
        }
        let mut slot = pg_sys::AttStatsSlot::default();
        // A histogram sorted by uuid's own `<`.
        if pg_sys::get_attstatsslot(
            &mut slot,
            tuple,
            pg_sys::STATISTIC_KIND_HISTOGRAM as i32,
            UUID.key_operator(pg_sys::BTLessStrategyNumber),
            pg_sys::ATTSTATSSLOT_VALUES as i32,
        ) {
            stats.bounds = (0..slot.nvalues as usize)
                .map(|i| uuid_value(*slot.values.add(i)))
                .collect();
            pg_sys::free_attstatsslot(&mut slot);
        }
        if let Some(free) = data.freefunc {
            free(tuple);
        }
        Some(stats)
    }
}

/// A relation's rows beyond the ends of a UUIDv7 column's histogram: ANALYZE's sample leaves
/// about 1/(n + 1) of the rows it saw below its least value and as many above its greatest (it
/// samples 300 rows a unit of the statistics target, the default's here: a column's own target is
/// not read), and the rows the relation has gained since (its size now, against
/// pg_class.reltuples as ANALYZE left it) lie above the greatest: keys made when they were
/// written, up to the key of this moment (a UUIDv7's first 48 bits are its Unix time in ms).
///
/// SAFETY: during planning; `rel` is NULL or a relation of `root`.
unsafe fn tails(root: *mut pg_sys::PlannerInfo, rel: *mut pg_sys::RelOptInfo) -> Tails {
    // SAFETY: the planner's RelOptInfo and range table; a syscache lookup and release.
    unsafe {
        if rel.is_null() || (*rel).tuples <= 0.0 {
            return Tails::default();
        }
        let now = (*rel).tuples;
        let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
        let mut analyzed = now;
        if !rte.is_null() && (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION {
            let tup = pg_sys::SearchSysCache1(
                pg_sys::SysCacheIdentifier::RELOID as _,
                (*rte).relid.into(),
            );
            if !tup.is_null() {
                let form = pg_sys::GETSTRUCT(tup) as *mut pg_sys::FormData_pg_class;
                // Never analyzed (-1): nothing known to be gained.
                if (*form).reltuples > 0.0 {
                    analyzed = f64::from((*form).reltuples).min(now);
                }
                pg_sys::ReleaseSysCache(tup);
            }
        }
        let sample = analyzed.min(300.0 * f64::from(pg_sys::default_statistics_target.max(1)));
        let edge = analyzed / now / (sample + 1.0);
        // Microseconds since 2000 as Unix milliseconds, the last key of that millisecond.
        let ms = pg_sys::GetCurrentTimestamp() / 1000 + 946_684_800_000;
        Tails {
            below: edge,
            above: edge + (now - analyzed) / now,
            above_to: u128::try_from(ms).ok().map(|ms| ms << 80 | ((1 << 80) - 1)),
        }
    }
}

/// Whether two Vars read the same column of the same relation.
///
/// SAFETY: both are Vars.
unsafe fn same_column(a: *mut pg_sys::Var, b: *mut pg_sys::Var) -> bool {
    // SAFETY: as said.
    unsafe {
        (*a).varno == (*b).varno
            && (*a).varattno == (*b).varattno
            && (*a).varlevelsup == (*b).varlevelsup
    }
}

/// A uuid datum as the number its bytes spell, most significant first (the order of its
/// comparisons, a memcmp).
///
/// SAFETY: `d` points to a uuid's 16 bytes.
unsafe fn uuid_value(d: pg_sys::Datum) -> u128 {
    // SAFETY: as said.
    unsafe { u128::from_be_bytes(*d.cast_mut_ptr::<[u8; 16]>()) }
}
