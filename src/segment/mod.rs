//! Segment mode (Meituan Leaf's and Didi Tinyid's ranges per business type): `segment_next()`
//! (next.rs) takes IDs from ranges cached in shared memory (cache.rs) by a backend's side of the
//! cache (backend.rs); the allocator (src/allocator/, one worker per database) commits the ranges
//! in its own transactions before they are handed out, through this mode's client of it
//! (allocation.rs). `idgen.segments`, the table, is read and written only by table.rs; the
//! administrators' functions are admin.rs, and columns.rs finds the IDs already held by columns
//! that default to `segment_next()`.

mod admin;
mod allocation;
mod backend;
mod cache;
mod columns;
mod errors;
mod next;
mod table;

/// From _PG_init: the cache's shared block, and this mode's client of the allocator.
pub fn init() {
    crate::pg::shmem::add_region(crate::pg::shmem::Region {
        name: c"pg_idgen segments",
        size: cache::shmem_size,
        lwlocks: 1,
        attach: cache::attach,
    });
    crate::allocator::register(&allocation::SEGMENTS);
}

/// The cache's use for `idgen.status`: slots used, slots, evictions.
pub fn cache_usage() -> (i64, i64, i64) {
    cache::usage()
}
