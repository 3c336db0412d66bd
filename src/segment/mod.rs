//! Segment mode (Meituan Leaf's and Didi Tinyid's ranges per business type): `segment_next()`
//! (next.rs) takes IDs from ranges cached in shared memory (cache.rs) by a backend's side of the
//! cache (backend.rs); one allocator worker per database (allocator_worker.rs) commits the ranges
//! in its own transactions (allocation.rs) before they are handed out. `idgen.segments`, the table,
//! is read and written only by table.rs; the administrators' functions are admin.rs, and
//! columns.rs finds the IDs already held by columns that default to `segment_next()`. The same
//! allocator commits the counters of IDs at a past time (backfill.rs asks, backfill_counters.rs
//! writes; the SQL functions are src/backfill.rs).

mod admin;
mod allocation;
mod allocator_worker;
mod backend;
pub mod backfill;
mod backfill_counters;
mod cache;
mod columns;
mod errors;
mod next;
mod table;

/// From _PG_init: the cache's shared block, and an allocator leaves its database as soon as a
/// DROP DATABASE of it starts.
pub fn init() {
    crate::pg::shmem::add_region(crate::pg::shmem::Region {
        name: c"pg_idgen segments",
        size: cache::shmem_size,
        lwlocks: 1,
        attach: cache::attach,
    });
    crate::pg::dropdb_hook::before_drop_database(allocator_worker::leave);
}

/// The cache's use for `idgen.status`: slots used, slots, evictions.
pub fn cache_usage() -> (i64, i64, i64) {
    cache::usage()
}
