//! Segment ranges as a client of the allocator (src/allocator/): a round claims the refills that
//! slots ask for and the whole ranges asked for in request cells, moves each type's `max_id`
//! (table.rs) in the worker's transaction, and once that has committed, installs the ranges in
//! the slots and cells that wait for them.

use pgrx::prelude::*;

use super::cache::{self, Key};
use super::table::{self, Locked};
use crate::allocator::{Claim, Client, RequestState, Round};
use crate::gucs;
use crate::pg::time::now_us;
use pg_idgen_core::segment::{next_step, plan_range, rate_floor, Fault, Range, Refill};

/// The allocator's client for segment ranges (registered by segment::init).
pub static SEGMENTS: Segments = Segments;

pub struct Segments;

/// What a backend asked for: a refill of its type's slot, or a whole range in its request cell.
#[derive(Clone, Copy)]
enum Ask {
    Refill {
        slot: usize,
        generation: u64,
        prev_step: i64,
        /// µs since the last range was installed, and IDs handed out since.
        lasted_us: i64,
        used: i64,
    },
    Alloc {
        cell: usize,
        seq: u64,
    },
}

/// What one allocation came to.
enum Outcome {
    Range(Range, i64),
    Fault(Fault),
    /// The row is locked by another transaction (an admin's UPDATE, segment_drop): try later.
    Locked,
}

struct SegmentClaim {
    ask: Ask,
    key: Key,
    outcome: Outcome,
}

impl Client for Segments {
    fn collect(&self, db: u32, room: usize) -> Vec<Box<dyn Claim>> {
        let mut claims: Vec<Box<dyn Claim>> = Vec::new();
        for (i, slot) in cache::slots().iter().enumerate() {
            if claims.len() >= room {
                return claims;
            }
            let claimed = slot.with(|d| {
                (d.in_use && d.key.db == db && d.state.claim()).then_some((
                    Ask::Refill {
                        slot: i,
                        generation: d.generation,
                        prev_step: d.state.step,
                        lasted_us: now_us() - d.state.last_refill_us,
                        used: (d.state.issued - d.state.issued_at_refill) as i64,
                    },
                    d.key,
                ))
            });
            claims.extend(claimed.map(|(ask, key)| claim(ask, key)));
        }
        for (i, cell) in cache::requests().iter().enumerate() {
            if claims.len() >= room {
                break;
            }
            let claimed = cell.with(|d| {
                (d.state == RequestState::Pending && d.key.db == db).then(|| {
                    d.state = RequestState::Working;
                    (
                        Ask::Alloc {
                            cell: i,
                            seq: d.seq,
                        },
                        d.key,
                    )
                })
            });
            claims.extend(claimed.map(|(ask, key)| claim(ask, key)));
        }
        claims
    }

    fn fail_claimed(&self, db: u32) {
        for slot in cache::slots() {
            let failed = slot.with(|d| {
                let mine = d.in_use && d.key.db == db && d.state.refill == Refill::InProgress;
                if mine {
                    d.state.fail(Fault::WorkerGone);
                }
                mine
            });
            if failed {
                slot.broadcast();
            }
        }
        for cell in cache::requests() {
            let failed = cell.with(|d| {
                let mine = d.state == RequestState::Working && d.key.db == db;
                if mine {
                    d.fault = Fault::WorkerGone as u32;
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

fn claim(ask: Ask, key: Key) -> Box<dyn Claim> {
    Box::new(SegmentClaim {
        ask,
        key,
        outcome: Outcome::Locked,
    })
}

impl Claim for SegmentClaim {
    fn allocate(&mut self, round: &Round) {
        self.outcome = allocate(&self.ask, &self.key, round.commit_latency_us);
    }

    fn publish(self: Box<Self>) -> bool {
        let locked = matches!(self.outcome, Outcome::Locked);
        publish(self.ask, self.outcome);
        locked
    }
}

/// An SPI failure that is not a PostgreSQL ERROR (those abort the worker's transaction on their
/// own): a row whose columns no longer read as pg_idgen wrote them. Logged with its cause, and
/// reported to the caller as what it is, never as a missing or locked type.
fn unreadable(name: &str, e: impl std::fmt::Display) -> Outcome {
    pgrx::warning!("pg_idgen allocator: the row of \"{name}\" in idgen.segments: {e}");
    Outcome::Fault(Fault::RowUnreadable)
}

/// Moves one type's `max_id` forward inside the worker's transaction. The row is locked with
/// SKIP LOCKED, so a row held by someone else's open transaction delays only its own type.
fn allocate(ask: &Ask, key: &Key, commit_latency_us: i64) -> Outcome {
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
        let step = match *ask {
            Ask::Refill {
                prev_step,
                lasted_us,
                used,
                ..
            } => {
                let max_step = gucs::segment_max_step();
                let target_ms = gucs::segment_step_target_ms();
                let leaf = next_step(prev_step, configured, max_step, lasted_us / 1000, target_ms);
                // Only once there is a previous range of this cache slot to measure.
                let floor = if prev_step > 0 && target_ms > 0 {
                    let percent = gucs::segment_prefetch_percent();
                    rate_floor(used, lasted_us, commit_latency_us, percent).min(max_step)
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
fn publish(ask: Ask, outcome: Outcome) {
    match ask {
        Ask::Refill {
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
                    Outcome::Locked => d.state.unclaim(),
                }
            });
            s.broadcast();
        }
        Ask::Alloc { cell, seq } => {
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
                    Outcome::Locked => d.state = RequestState::Pending,
                }
            });
            c.broadcast();
        }
    }
}
