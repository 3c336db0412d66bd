//! A free `created_at`: a condition on the time inside a key (`id_timestamp(id) >= T`,
//! `uuidv7_timestamp(id) < T`, PostgreSQL 17's `uuid_extract_timestamp` on a column that holds
//! only version 7 UUIDs, a view's or a virtual generated column over one of them) gets the key
//! range it implies added beside it before planning (`id >= idgen_internal.id_time_lower(T,
//! ...)`), so that the key's index and partition pruning answer it. The original condition stays;
//! the added one only narrows what is read, and never changes a result. A sort by such a time,
//! the last key of an ORDER BY, becomes a sort by the key, which its index returns in order.
//! `idgen.time_conditions = off` turns both off.
//!
//! - `decoders.rs`: the table of decoders the walk understands, and what proves each one's range;
//! - `walk.rs`: where in a statement a range is implied, and adding it (node kind by node kind);
//! - `key_of.rs`: the key behind a time, through the views and columns that keep them together;
//! - `order_by.rs`: ORDER BY the time, by the key;
//! - `bounds.rs`: the bound functions (the core's arithmetic, `pg_idgen_core::time_bounds`) and
//!   how a statement finds them.
mod bounds;
mod decoders;
mod key_of;
mod order_by;
mod walk;

/// Sets it up while preloading.
pub fn init() {
    crate::pg::planner_hook::before_planning(walk::add_key_ranges);
}
