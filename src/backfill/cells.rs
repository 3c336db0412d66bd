//! Backfill blocks as a client of the allocator (src/allocator/): a backfill cell per backend in
//! shared memory, where a backend asks for blocks of buckets (blocks.rs) and the allocator of the
//! counters' database answers; a round claims the cells asked of it, reserves the blocks in the
//! worker's transaction (counters.rs), and once that has committed, writes them into the cells.

use std::ptr::null_mut;

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::counters;
use super::faults::{FAULT_UNREADABLE, FAULT_WORKER_GONE};
use crate::allocator::{Claim, Client, Locked, RequestCell, RequestState, Round};

/// Buckets one backfill request asks for (blocks.rs asks again for more).
pub const BACKFILL_ITEMS: usize = 128;

/// One bucket of a backfill request: the block asked for, and the allocator's answer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct BackfillItem {
    pub bucket: u64,
    pub want: u32,
    pub first: u32,
    /// 0 in an answer: the bucket has no number left.
    pub len: u32,
}

/// Blocks of backfill counters (snowflake_at, uuidv7_at) asked for by one backend, answered by
/// the allocator of the database that holds the counters (idgen.backfill_database).
#[repr(C)]
pub struct BackfillData {
    pub state: RequestState,
    /// Bumped per request, so a late answer to an abandoned request is never read as the answer
    /// to a newer one.
    pub seq: u64,
    /// The database whose allocator answers (the counters' database, not the caller's).
    pub db: u32,
    pub stream: i32,
    /// Numbers per tick (the layout's sequence field).
    pub capacity: u32,
    pub count: u32,
    pub items: [BackfillItem; BACKFILL_ITEMS],
    /// 0, or what went wrong (blocks.rs).
    pub fault: u32,
}

pub type BackfillCell = Locked<BackfillData>;

impl RequestCell for BackfillData {
    fn header(&mut self) -> (&mut u64, &mut RequestState) {
        (&mut self.seq, &mut self.state)
    }
}

/// The allocator's client for backfill blocks (registered by backfill::init).
pub static BACKFILLS: Backfills = Backfills;

pub struct Backfills;

struct BackfillClaim {
    cell: usize,
    seq: u64,
    stream: i32,
    capacity: u32,
    wants: Vec<(u64, u32)>,
    /// Blocks per bucket asked for (None: the bucket is full), or a fault code.
    outcome: Result<Vec<Option<(u32, u32)>>, u32>,
}

impl Client for Backfills {
    fn collect(&self, db: u32, room: usize) -> Vec<Box<dyn Claim>> {
        let mut claims: Vec<Box<dyn Claim>> = Vec::new();
        for (i, cell) in cells().iter().enumerate() {
            if claims.len() >= room {
                break;
            }
            let claimed = cell.with(|d| {
                (d.state == RequestState::Pending && d.db == db).then(|| {
                    d.state = RequestState::Working;
                    (d.seq, d.stream, d.capacity, d.count as usize, d.items)
                })
            });
            if let Some((seq, stream, capacity, count, asked)) = claimed {
                claims.push(Box::new(BackfillClaim {
                    cell: i,
                    seq,
                    stream,
                    capacity,
                    wants: asked[..count.min(asked.len())]
                        .iter()
                        .map(|a| (a.bucket, a.want))
                        .collect(),
                    outcome: Err(FAULT_UNREADABLE),
                }));
            }
        }
        claims
    }

    fn fail_claimed(&self, db: u32) {
        for cell in cells() {
            let failed = cell.with(|d| {
                let mine = d.state == RequestState::Working && d.db == db;
                if mine {
                    d.fault = FAULT_WORKER_GONE;
                    d.state = RequestState::Done;
                }
                mine
            });
            if failed {
                cell.broadcast();
            }
        }
    }
}

impl Claim for BackfillClaim {
    fn allocate(&mut self, _round: &Round) {
        self.outcome = Spi::connect_mut(|client| {
            counters::reserve_blocks(client, self.stream, self.capacity, &self.wants)
        });
    }

    fn publish(self: Box<Self>) -> bool {
        let c = &cells()[self.cell];
        c.with(|d| {
            if d.seq != self.seq || d.state != RequestState::Working {
                return;
            }
            match self.outcome {
                Ok(blocks) => {
                    for (item, block) in d.items.iter_mut().zip(blocks) {
                        (item.first, item.len) = block.unwrap_or((0, 0));
                    }
                    d.fault = 0;
                }
                Err(code) => d.fault = code,
            }
            d.state = RequestState::Done;
        });
        c.broadcast();
        false
    }
}

/// The cells, one per process that may ask: laid out in the startup hook.
static mut CELLS: (*mut BackfillCell, usize) = (null_mut(), 0);

fn count() -> usize {
    // SAFETY: MaxBackends is final before the shmem request hook runs (PostgreSQL 15+).
    unsafe { pg_sys::MaxBackends as usize }
}

/// Bytes of the cells' block, with room to align it.
pub fn shmem_size() -> usize {
    64 + count() * size_of::<BackfillCell>()
}

/// Lays out (when `!found`, initialises) the cells at `base`; runs in the startup hook.
///
/// # Safety
/// `base` must point at `shmem_size()` bytes of shared memory, the same in every process.
pub unsafe fn attach(base: *mut u8, _locks: *mut pg_sys::LWLockPadded, found: bool) {
    // SAFETY: by the contract above the aligned start leaves room for every cell.
    unsafe {
        let start = base.add(base.align_offset(64)) as *mut BackfillCell;
        let n = count();
        if !found {
            std::ptr::write_bytes(start as *mut u8, 0, n * size_of::<BackfillCell>());
            for i in 0..n {
                pg_sys::ConditionVariableInit((*start.add(i)).cv());
            }
        }
        CELLS = (start, n);
    }
}

pub fn cells() -> &'static [BackfillCell] {
    // SAFETY: set in the postmaster's startup hook, before any backend exists; never changes.
    unsafe {
        let (start, n) = CELLS;
        assert!(!start.is_null(), "pg_idgen backfill memory is not attached");
        std::slice::from_raw_parts(start, n)
    }
}
