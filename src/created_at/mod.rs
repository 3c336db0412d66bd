//! A free `created_at`: a condition on the time inside a key (`id_timestamp(id) >= T`,
//! `uuidv7_timestamp(id) < T`, PostgreSQL 18's `uuid_extract_timestamp` on a column that holds
//! only version 7 UUIDs, a view's or a virtual generated column over one of them; `T` a
//! timestamptz, a timestamp or a date) becomes the key range it implies before planning (`id >=
//! idgen_internal.id_time_lower(T, ...)`), so that the key's index and partition pruning answer
//! it. Where the range holds for exactly the keys whose time satisfies the condition it stands in
//! the condition's place (the key's statistics then estimate it); elsewhere it is added beside the
//! condition, which still decides each row. Either way no result changes but for keys the
//! decoder refuses (an ERROR where such a row is read), as with any index. A sort by such a time,
//! the last key of an ORDER BY, becomes a sort by the key, which its index returns in order; its
//! `min` and `max` the time of the key's, which the index gives in one row. A local time of the
//! time compared with a constant (`created_at::date = D`, `date_trunc('day', created_at) = T`)
//! gets the range of instants around it that the zone's offsets allow, beside the comparison, or
//! in its place where the zone has one offset near it (the session's zone: as the statement is
//! planned, with `pg::zone_plans` having cached plans made again when the zone changes).
//! `idgen.time_conditions = off` turns both off.
//!
//! - `decoders.rs`: the table of decoders the walk understands, and what proves each one's range;
//! - `walk.rs`: where in a statement a range is implied, and adding it (node kind by node kind);
//! - `key_of.rs`: the key behind a time, through the views and columns that keep them together;
//! - `order_by.rs`: ORDER BY the time, by the key;
//! - `min_max.rs`: `min` and `max` of the time, of the key (for a UUID key by pg_idgen's own
//!   `min_key`/`max_key`);
//! - `wrappers.rs`: the local times of a time ORMs write (`::date`, `AT TIME ZONE`, `date_trunc`);
//! - `local_time.rs`: the instants such a local time can hold for (the core's arithmetic,
//!   `pg_idgen_core::local_time`, over the zone's offsets);
//! - `estimates.rs`: a UUID key's range estimated from the key's histogram, which PostgreSQL
//!   cannot place a uuid inside;
//! - `bounds.rs`: the bound functions (the core's arithmetic, `pg_idgen_core::time_bounds`) and
//!   how a statement finds them.
mod bounds;
mod decoders;
mod estimates;
mod key_of;
mod local_time;
mod min_max;
mod order_by;
mod walk;
mod wrappers;

/// Sets it up while preloading.
pub fn init() {
    crate::pg::planner_hook::before_planning(walk::add_key_ranges);
    crate::pg::zone_plans::init();
}
