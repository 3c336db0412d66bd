//! Why the allocator gave a backfill cell no blocks: the codes a cell's `fault` carries from the
//! allocator (cells.rs, counters.rs) to the backend that asked (blocks.rs, which says them as
//! errors).

/// Why the allocator gave no blocks (a backfill cell's `fault`): it exited first.
pub const FAULT_WORKER_GONE: u32 = 1;
/// The counters' database has no idgen_internal.backfill_counters (no CREATE EXTENSION there).
pub const FAULT_NOT_INSTALLED: u32 = 2;
/// The allocator could not read or write the counters (its log says why).
pub const FAULT_UNREADABLE: u32 = 3;
/// The backfill worker id's counters are in another table (node/backfills.rs).
pub const FAULT_ELSEWHERE: u32 = 4;
/// The backfill worker id has been leased to a holder in the counters' database.
pub const FAULT_LEASED: u32 = 5;
