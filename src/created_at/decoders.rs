//! The decoders the walk understands, one row each: how a call is recognised (its C symbol and
//! arguments, never its name, so that a look-alike in another role's schema is never taken for
//! one), the key's type and btree operator family, the bound functions that give the key range of
//! a time, and what proves that range for every value the column can hold. Adding a decoder is a
//! row here and its bound arithmetic in the core crate (`pg_idgen_core::time_bounds`).
use std::ffi::CStr;

use pgrx::pg_sys;

use crate::node::layouts::{layout_named, node_layout_label};
use crate::pg::nodes::{c_symbol, cells, is_a, rte_of, text_constant};

/// The btree operator family of uuid (pg_opfamily.dat: a fixed OID).
const UUID_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(2968);

pub(super) struct Decoder {
    /// The C symbol the function runs.
    symbol: &'static str,
    /// Its arguments: the key first.
    args: usize,
    /// Which layout its time is read with (Snowflake decoders).
    layout: LayoutFrom,
    /// The key's type, and the btree operator family its comparisons belong to.
    pub key_type: pg_sys::Oid,
    key_family: pg_sys::Oid,
    /// The bound functions in `idgen_internal` (`bounds.rs`): the smallest key at or after a time,
    /// the largest at or before it; their arguments after the time and `inclusive`.
    pub lower: &'static CStr,
    pub upper: &'static CStr,
    pub takes_layout: bool,
    /// What proves that every time it gives is the one the bound arithmetic reads.
    proof: Proof,
}

enum LayoutFrom {
    /// No layout: a UUID's first 48 bits.
    None,
    /// The node's own (`id_timestamp(id)`).
    Node,
    /// A text constant, the second argument (`id_timestamp(id, 'twitter')`).
    Argument,
}

enum Proof {
    /// None needed: the decoder refuses (with an error) every key that does not carry its time
    /// where the bounds read it, and gives a time for every other key. A Snowflake key outside its
    /// layout, a UUID of a version other than 7: the only rows whose fate differs from a scan's, as
    /// with any index on an expression that can fail.
    Always,
    /// PostgreSQL's `uuid_extract_timestamp` reads a version 1 UUID's time too, which is elsewhere:
    /// only where the table's validated CHECK constraints allow no version but 7 (`version7`), on
    /// PostgreSQL 18 and later (17's reads version 1 only). A
    /// CHECK is only "not false": a UUID with no version (the Nil UUID, another variant) passes it,
    /// and its time is NULL.
    Version7Check,
}

/// What the Snowflake decoders share, and the UUID ones: the key, its comparisons, the bounds.
const SNOWFLAKE: Decoder = Decoder {
    symbol: "id_timestamp_wrapper",
    args: 1,
    layout: LayoutFrom::Node,
    key_type: pg_sys::INT8OID,
    key_family: pg_sys::INTEGER_BTREE_FAM_OID,
    lower: c"id_time_lower",
    upper: c"id_time_upper",
    takes_layout: true,
    proof: Proof::Always,
};
/// The UUID key's row (its type and comparisons; `estimates.rs` reads them too).
pub(super) const UUID: Decoder = Decoder {
    symbol: "uuidv7_timestamp_wrapper",
    args: 1,
    layout: LayoutFrom::None,
    key_type: pg_sys::UUIDOID,
    key_family: UUID_BTREE_FAM_OID,
    lower: c"uuidv7_time_lower",
    upper: c"uuidv7_time_upper",
    takes_layout: false,
    proof: Proof::Always,
};

pub(super) const DECODERS: [Decoder; 4] = [
    // id_timestamp(id): the node's layout
    SNOWFLAKE,
    // id_timestamp(id, 'layout')
    Decoder {
        symbol: "id_timestamp_with_wrapper",
        args: 2,
        layout: LayoutFrom::Argument,
        ..SNOWFLAKE
    },
    // uuidv7_timestamp(id)
    UUID,
    // PostgreSQL's uuid_extract_timestamp(id)
    Decoder {
        symbol: "uuid_extract_timestamp",
        proof: Proof::Version7Check,
        ..UUID
    },
];

impl Decoder {
    /// The key type's btree operator of `strategy` (InvalidOid if there is none).
    pub fn key_operator(&self, strategy: u32) -> pg_sys::Oid {
        // SAFETY: a catalog lookup, in the planner's transaction.
        unsafe {
            pg_sys::get_opfamily_member(
                self.key_family,
                self.key_type,
                self.key_type,
                strategy as i16,
            )
        }
    }
}

/// A decoder call over a key column, as the walk found it.
pub(super) struct Decoded {
    /// The key column, as the query the condition stands in reads it.
    pub key: *mut pg_sys::Var,
    pub decoder: &'static Decoder,
    /// The layout's text (Snowflake decoders), one every decoder of it accepts.
    pub layout: Option<String>,
    /// Whether every key the decoder does not refuse has a time (no NULL time for a non-NULL key):
    /// then the range is exact, a key inside it has a time that satisfies the comparison and a
    /// key outside it one that does not, so that the range stands for the comparison instead of
    /// beside it; and a sort by the key is a sort by the time.
    pub exact: bool,
    /// The decoder's call, as written (in the query, a view or a virtual column's expression):
    /// its function and any arguments after the key.
    pub call: *mut pg_sys::FuncExpr,
    /// Whether the key is a column of a table, partitioned table or materialized view, whose
    /// statistics `estimates.rs` reads (not of a foreign table, whose conditions may be sent to
    /// another server).
    pub local: bool,
}

/// A decoder call over a plain column. `column` replaces the column it names (for a virtual
/// column's expression, whose columns are numbered as in its table).
///
/// SAFETY: `f` is a FuncExpr of `q` (or a virtual column's expression, with `column`).
pub(super) unsafe fn recognise(
    f: *mut pg_sys::FuncExpr,
    q: *mut pg_sys::Query,
    column: Option<*mut pg_sys::Var>,
) -> Option<Decoded> {
    // SAFETY: a FuncExpr's args are expressions.
    unsafe {
        let args = cells((*f).args);
        let key = *args.first()? as *mut pg_sys::Node;
        if !is_a(key, pg_sys::NodeTag::T_Var) {
            return None;
        }
        let key = key as *mut pg_sys::Var;
        let symbol = c_symbol((*f).funcid)?;
        let decoder = DECODERS
            .iter()
            .find(|d| d.symbol == symbol && d.args == args.len())?;
        if (*key).vartype != decoder.key_type {
            return None;
        }
        // A layout the decoder would refuse: nothing, so that the decoder's own error (or none,
        // where no row is read) is the query's, as without the derivation.
        let layout = match decoder.layout {
            LayoutFrom::None => None,
            LayoutFrom::Node => Some(node_layout_label().to_string()),
            LayoutFrom::Argument => {
                let name = text_constant(args[1].cast())?;
                layout_named(Some(&name)).ok()?;
                Some(name)
            }
        };
        let exact = match decoder.proof {
            Proof::Always => true,
            Proof::Version7Check => version7(key, q, column)?,
        };
        let local = rte_of(column.unwrap_or(key), q).is_some_and(|rte| {
            (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION
                && [
                    pg_sys::RELKIND_RELATION,
                    pg_sys::RELKIND_PARTITIONED_TABLE,
                    pg_sys::RELKIND_MATVIEW,
                ]
                .contains(&((*rte).relkind as u8))
        });
        let key = match column {
            None => key,
            // The virtual column's row: the key column of the same table, where the column read is.
            Some(outer) => column_of(outer, key, (*key).varattno),
        };
        Some(Decoded {
            key,
            decoder,
            layout,
            exact,
            call: f,
            local,
        })
    }
}

/// Another column `attno` (typed as `typed`) of the row `read` reads: a copy of `read`, so that
/// the range table entry, the level and the outer joins that may null it (PostgreSQL 16's
/// varnullingrels) stay those of the query the condition stands in.
///
/// SAFETY: both are Vars.
pub(super) unsafe fn column_of(
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

/// The table a column of `q` belongs to (a column of this query's level, of a table).
///
/// SAFETY: `v` is a Var of `q`.
#[cfg(any(feature = "pg18", feature = "pg19"))]
pub(super) unsafe fn table_of(v: *mut pg_sys::Var, q: *mut pg_sys::Query) -> Option<pg_sys::Oid> {
    // SAFETY: the range table entry the Var names.
    unsafe {
        let rte = crate::pg::nodes::rte_of(v, q)?;
        ((*rte).rtekind == pg_sys::RTEKind::RTE_RELATION).then_some((*rte).relid)
    }
}

/// Whether the key's table proves `uuid_extract_version(key) = 7` for every row it can hold: None
/// where it does not; Some(exact) where it does, `exact` saying whether the version is also never
/// NULL (a CHECK that `uuid_extract_version(id) IS NOT NULL` too), so that every key has a time.
/// PostgreSQL 18 and later: 17's `uuid_extract_timestamp` reads no time from a version 7 UUID
/// (it gives NULL), so no range there is exact, and none is useful.
///
/// CHECK constraints are only "not false", so the proof is PostgreSQL's weak implication (as
/// ATTACH PARTITION proves a partition constraint from CHECKs): wherever the constraints are not
/// false, `= 7` is not false, so the version is 7 or NULL (and then the time is NULL, which no
/// comparison passes). And only where PostgreSQL enforces them on every row a scan can read: a
/// table or a partitioned table whose partitions and children are all tables (a foreign table's
/// CHECK is never checked), and only validated constraints that its children inherit.
///
/// SAFETY: `key` is a Var of `q` (or of a virtual column's expression, with `column`).
#[cfg(any(feature = "pg18", feature = "pg19"))]
unsafe fn version7(
    key: *mut pg_sys::Var,
    q: *mut pg_sys::Query,
    column: Option<*mut pg_sys::Var>,
) -> Option<bool> {
    use crate::pg::nodes::list_of;
    // SAFETY: the relations are locked (by the statement, or here); constraint expressions are
    // nodes.
    unsafe {
        let relid = table_of(column.unwrap_or(key), q)?;
        if !enforces_checks(relid) {
            return None;
        }
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
        let is_seven = pg_sys::make_opclause(
            eq,
            pg_sys::BOOLOID,
            false,
            version.cast(),
            seven.cast(),
            pg_sys::InvalidOid,
            pg_sys::InvalidOid,
        );
        pg_sys::set_opfuncid(is_seven as *mut pg_sys::OpExpr);
        let not_null =
            pg_sys::palloc0(std::mem::size_of::<pg_sys::NullTest>()) as *mut pg_sys::NullTest;
        (*not_null).xpr.type_ = pg_sys::NodeTag::T_NullTest;
        (*not_null).arg = pg_sys::copyObjectImpl(version.cast()).cast();
        (*not_null).nulltesttype = pg_sys::NullTestType::IS_NOT_NULL;
        (*not_null).argisrow = false;
        (*not_null).location = -1;
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
        let implied = |p: *mut pg_sys::Node| {
            !checks.is_empty()
                && pg_sys::predicate_implied_by(list_of(&[p]), list_of(&checks), true)
        };
        implied(is_seven.cast()).then(|| implied(not_null.cast()))
    }
}

#[cfg(not(any(feature = "pg18", feature = "pg19")))]
unsafe fn version7(
    _: *mut pg_sys::Var,
    _: *mut pg_sys::Query,
    _: Option<*mut pg_sys::Var>,
) -> Option<bool> {
    None
}

/// Whether PostgreSQL checks the CHECK constraints of `relid` on every row a scan of it reads: a
/// table, or a partitioned table, and so each of its partitions and inheritance children (locked
/// here as the scan would lock them, so that none is attached unseen before the plan is made).
///
/// SAFETY: in a transaction; `relid` is locked by the statement.
#[cfg(any(feature = "pg18", feature = "pg19"))]
unsafe fn enforces_checks(relid: pg_sys::Oid) -> bool {
    // SAFETY: catalog reads; find_all_inheritors returns a List of OIDs.
    unsafe {
        let plain = |r: pg_sys::Oid| {
            let kind = pg_sys::get_rel_relkind(r) as u8;
            kind == pg_sys::RELKIND_RELATION || kind == pg_sys::RELKIND_PARTITIONED_TABLE
        };
        if !plain(relid) {
            return false;
        }
        if !pg_sys::has_subclass(relid) {
            return true;
        }
        let all = pg_sys::find_all_inheritors(
            relid,
            pg_sys::AccessShareLock as pg_sys::LOCKMODE,
            std::ptr::null_mut(),
        );
        (0..(*all).length as usize).all(|i| plain((*(*all).elements.add(i)).oid_value))
    }
}
