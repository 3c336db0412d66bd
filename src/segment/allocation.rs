//! One allocation round of the allocator worker (allocator_worker.rs): claim what this database's
//! backends asked for, move each type's `max_id` (table.rs) and each backfill bucket's counter
//! (backfill_counters.rs) in the worker's transaction, and once it has committed, publish the
//! ranges and blocks to the slots and cells that wait for them.

use pgrx::prelude::*;

use super::backfill_counters;
use super::cache::{self, Key, RequestState};
use super::table::{self, Locked};
use crate::gucs;
use crate::pg::time::now_us;
use pg_idgen_core::segment::{next_step, plan_range, rate_floor, Fault, Range};

/// Most items committed in one transaction.
const BATCH: usize = 256;

/// What one allocation came to.
pub enum Outcome {
    Range(Range, i64),
    Fault(Fault),
    /// The row is locked by another transaction (an admin's UPDATE, segment_drop): try later.
    Locked,
    /// Backfill blocks, per bucket asked for (None: the bucket is full), or a fault code.
    Blocks(Result<Vec<Option<(u32, u32)>>, u32>),
}

/// What a backend asked for: a refill of its type's slot, a whole range in its request cell, or
/// blocks of backfill counters in its backfill cell.
pub enum Item {
    Refill {
        slot: usize,
        generation: u64,
        key: Key,
        prev_step: i64,
        /// µs since the last range was installed, and IDs handed out since.
        lasted_us: i64,
        used: i64,
    },
    Alloc {
        cell: usize,
        seq: u64,
        key: Key,
    },
    /// Blocks of backfill counters for a backend of any database (backfill.rs).
    Backfill {
        cell: usize,
        seq: u64,
        stream: i32,
        capacity: u32,
        wants: Vec<(u64, u32)>,
    },
}

/// Claims what this database's backends asked for, up to [`BATCH`] items.
pub fn collect(db: u32) -> Vec<Item> {
    let mut items = Vec::new();
    for (i, slot) in cache::slots().iter().enumerate() {
        if items.len() >= BATCH {
            return items;
        }
        let claimed = slot.with(|d| {
            (d.in_use && d.key.db == db && d.state.claim()).then_some(Item::Refill {
                slot: i,
                generation: d.generation,
                key: d.key,
                prev_step: d.state.step,
                lasted_us: now_us() - d.state.last_refill_us,
                used: (d.state.issued - d.state.issued_at_refill) as i64,
            })
        });
        items.extend(claimed);
    }
    for (i, cell) in cache::requests().iter().enumerate() {
        if items.len() >= BATCH {
            break;
        }
        let claimed = cell.with(|d| {
            (d.state == RequestState::Pending && d.key.db == db).then(|| {
                d.state = RequestState::Working;
                Item::Alloc {
                    cell: i,
                    seq: d.seq,
                    key: d.key,
                }
            })
        });
        items.extend(claimed);
    }
    for (i, cell) in cache::backfill_cells().iter().enumerate() {
        if items.len() >= BATCH {
            break;
        }
        let claimed = cell.with(|d| {
            (d.state == RequestState::Pending && d.db == db).then(|| {
                d.state = RequestState::Working;
                (d.seq, d.stream, d.capacity, d.count as usize, d.items)
            })
        });
        if let Some((seq, stream, capacity, count, asked)) = claimed {
            items.push(Item::Backfill {
                cell: i,
                seq,
                stream,
                capacity,
                wants: asked[..count.min(asked.len())]
                    .iter()
                    .map(|a| (a.bucket, a.want))
                    .collect(),
            });
        }
    }
    items
}

/// An SPI failure that is not a PostgreSQL ERROR (those abort the worker's transaction on their
/// own): a row whose columns no longer read as pg_idgen wrote them. Logged with its cause, and
/// reported to the caller as what it is, never as a missing or locked type.
fn unreadable(name: &str, e: impl std::fmt::Display) -> Outcome {
    pgrx::warning!("pg_idgen segment allocator: the row of \"{name}\" in idgen.segments: {e}");
    Outcome::Fault(Fault::RowUnreadable)
}

/// Moves one type's `max_id` forward inside the worker's transaction. The row is locked with
/// SKIP LOCKED, so a row held by someone else's open transaction delays only its own type.
pub fn allocate(item: &Item, refill_latency_us: i64) -> Outcome {
    let key = match item {
        Item::Refill { key, .. } | Item::Alloc { key, .. } => key,
        Item::Backfill {
            stream,
            capacity,
            wants,
            ..
        } => {
            return Outcome::Blocks(Spi::connect_mut(|client| {
                backfill_counters::reserve_blocks(client, *stream, *capacity, wants)
            }))
        }
    };
    let name = key.name();
    Spi::connect_mut(|client| {
        let row = match table::lock_for_allocation(client, &name) {
            Ok(Locked::Row(row)) => row,
            Ok(Locked::Busy) => return Outcome::Locked,
            Ok(Locked::NotFound) => return Outcome::Fault(Fault::NotFound),
            Err(e) => return unreadable(&name, e),
        };
        let (max_id, configured, delta, remainder) =
            (row.max_id, row.step, row.delta, row.remainder);
        let step = match item {
            Item::Refill {
                prev_step,
                lasted_us,
                used,
                ..
            } => {
                let max_step = gucs::segment_max_step();
                let target_ms = gucs::segment_step_target_ms();
                let leaf = next_step(
                    *prev_step,
                    configured,
                    max_step,
                    lasted_us / 1000,
                    target_ms,
                );
                // Only once there is a previous range of this cache slot to measure.
                let floor = if *prev_step > 0 && target_ms > 0 {
                    let percent = gucs::segment_prefetch_percent();
                    rate_floor(*used, *lasted_us, refill_latency_us, percent).min(max_step)
                } else {
                    0
                };
                leaf.max(floor)
            }
            _ => configured,
        };
        // Near the top of bigint a grown step shrinks back towards the configured one.
        let step = step.min(i64::MAX.saturating_sub(max_id)).max(configured);
        let range = match plan_range(max_id, step, delta, remainder) {
            Ok(r) => r,
            Err(f) => return Outcome::Fault(f),
        };
        let updated = table::advance(client, &name, range.end);
        match updated {
            Ok(_) => Outcome::Range(range, step),
            Err(e) => unreadable(&name, e),
        }
    })
}

/// Hands a committed outcome to the slot or request cell that asked for it, and wakes its waiters.
pub fn publish(item: &Item, outcome: Outcome) {
    match *item {
        Item::Refill {
            slot, generation, ..
        } => {
            let s = &cache::slots()[slot];
            s.with(|d| {
                // A slot forgotten or given to another type meanwhile: the range is a gap.
                if d.generation != generation {
                    return;
                }
                match outcome {
                    Outcome::Range(range, step) => d.state.install(range, step, now_us()),
                    Outcome::Fault(f) => d.state.fail(f),
                    Outcome::Locked | Outcome::Blocks(_) => d.state.unclaim(),
                }
            });
            s.broadcast();
        }
        Item::Alloc { cell, seq, .. } => {
            let c = &cache::requests()[cell];
            c.with(|d| {
                if d.seq != seq || d.state != RequestState::Working {
                    return;
                }
                match outcome {
                    Outcome::Range(range, _) => {
                        d.range = range;
                        d.fault = 0;
                        d.state = RequestState::Done;
                    }
                    Outcome::Fault(f) => {
                        d.fault = f as u32;
                        d.state = RequestState::Done;
                    }
                    Outcome::Locked | Outcome::Blocks(_) => d.state = RequestState::Pending,
                }
            });
            c.broadcast();
        }
        Item::Backfill { cell, seq, .. } => {
            let c = &cache::backfill_cells()[cell];
            c.with(|d| {
                if d.seq != seq || d.state != RequestState::Working {
                    return;
                }
                match outcome {
                    Outcome::Blocks(Ok(blocks)) => {
                        for (item, block) in d.items.iter_mut().zip(blocks) {
                            (item.first, item.len) = block.unwrap_or((0, 0));
                        }
                        d.fault = 0;
                    }
                    Outcome::Blocks(Err(code)) => d.fault = code,
                    _ => d.fault = cache::FAULT_UNREADABLE,
                }
                d.state = RequestState::Done;
            });
            c.broadcast();
        }
    }
}
