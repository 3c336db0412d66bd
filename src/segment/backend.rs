//! A backend's side of segment mode: it finds its type's slot in the shared cache once (and
//! remembers it), takes IDs under the slot's spinlock, and when the cache is dry waits on the
//! slot's condition variable for the allocator (src/allocator/), which commits the next range
//! before publishing it. Whole ranges for clients go through a request cell the same way. Also
//! what the admin functions tell the cache (a type dropped or moved, a step changed).

use pgrx::{pg_sys, PgSqlErrorCode};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::cache::{self, Key};
use super::errors::{segment_fault_error, timed_out, unknown_type};
use super::table;
use crate::allocator::{self, ask, await_answer, my_proc_number, Waiter};
use crate::gucs;
use crate::pg::backend_local::BackendLocal;
use crate::pg::errors::{invalid, not_ready, required, IdError};
use pg_idgen_core::segment::{Fault, Range, SegmentState, Take};

/// A business type's name to its `(slot, generation)` in the shared cache.
type SlotMap = HashMap<Vec<u8>, (usize, u64), BuildHasherDefault<Fnv1a>>;

/// This backend's map of the types it has used.
static SLOTS: BackendLocal<SlotMap> =
    BackendLocal::new(HashMap::with_hasher(BuildHasherDefault::new()));

/// FNV-1a for SLOTS. Its keys are names this backend found in idgen.segments (a name is added
/// only once the type exists), so a keyed hash's defence against chosen collisions buys nothing
/// there, and the standard SipHash was a quarter of segment_next()'s instructions.
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

fn db() -> u32 {
    // SAFETY: set once the backend is connected to its database, before any function runs.
    unsafe { pg_sys::MyDatabaseId }.to_u32()
}

/// The name as a key, or an ERROR for NULL, empty or too long names.
pub fn key_of(func: &str, biz_type: Option<&str>) -> Key {
    let name = required(func, "biz_type", biz_type);
    Key::new(db(), name.as_bytes()).unwrap_or_else(|| {
        invalid(format!(
            "{func}: biz_type must be 1 to {} bytes long, not {}",
            cache::KEY_MAX,
            name.len()
        ))
        .raise()
    })
}

/// Ranges are committed to idgen.segments, which only a primary can write.
fn refuse_on_standby() {
    crate::pg::recovery::refuse_on_standby(
        "allocate segment IDs",
        "Call segment_next() on the primary; ranges are committed to idgen.segments there.",
    );
}

/// The slot of a business type, checking that the type exists on first use in this backend.
fn resolve(key: &Key, name: &str) -> (usize, u64) {
    if let Some(hit) = SLOTS.with(|m| m.get(key.name_bytes()).copied()) {
        return hit;
    }
    if !table::type_exists(name) {
        unknown_type(name).raise();
    }
    let found = cache::find_or_insert(key).unwrap_or_else(|| {
        IdError::new(
            PgSqlErrorCode::ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
            "the segment cache is full: every slot is waiting for a range",
        )
        .hint("Raise idgen.segment_cache_size (a restart is needed) above the number of business types in use at once.")
        .raise()
    });
    SLOTS.with(|m| m.insert(key.name_bytes().to_vec(), found));
    found
}

/// Up to `want` IDs of one type: `(first, count, delta)`, waiting for a range if none is cached.
pub fn take(key: &Key, name: &str, want: i64) -> (i64, i64, i64) {
    let (mut slot, mut generation) = resolve(key, name);
    let prefetch_percent = gucs::segment_prefetch_percent();
    let mut waiter: Option<Waiter> = None;
    loop {
        let s = &cache::slots()[slot];
        s.touch();
        let took =
            s.with(|d| (d.generation == generation).then(|| d.state.take(want, prefetch_percent)));
        match took {
            None => {
                // Evicted or dropped meanwhile: look the type up again.
                drop(waiter.take());
                SLOTS.with(|m| m.remove(key.name_bytes()));
                (slot, generation) = resolve(key, name);
            }
            Some(Take::Got {
                first,
                count,
                delta,
                prefetch,
            }) => {
                if prefetch {
                    // Best effort: if the worker cannot start now, a caller that runs dry
                    // tries again and reports why.
                    let _ = allocator::wake(key.db);
                }
                return (first, count, delta);
            }
            Some(Take::Failed(f)) => {
                drop(waiter.take());
                segment_fault_error(f, name).raise();
            }
            Some(Take::Wait { .. }) => {
                refuse_on_standby();
                allocator::refuse_in_single_user();
                // No worker slot free (53000): wait for one like for a range, trying again on
                // each round, and report that reason if the time runs out.
                let woke = allocator::wake(key.db);
                if !waiter.get_or_insert_with(Waiter::new).sleep(s.cv()) {
                    drop(waiter.take());
                    match woke {
                        Err(e) => e.raise(),
                        Ok(()) => timed_out("a range", name).raise(),
                    }
                }
            }
        }
    }
}

/// A whole committed range for a client that hands IDs out itself (tinyid-client).
pub fn alloc_range(key: &Key, name: &str) -> Range {
    refuse_on_standby();
    let me = my_proc_number();
    let Some(cell) = cache::requests().get(me) else {
        not_ready("this process cannot allocate segment ranges").raise()
    };
    let seq = ask(cell, |d| {
        d.key = *key;
        d.fault = 0;
    });
    let (range, code) = await_answer(
        cell,
        key.db,
        seq,
        |d| (d.range, d.fault),
        || timed_out("a whole range", name),
    );
    if code != 0 {
        segment_fault_error(Fault::from_code(code).unwrap_or(Fault::WorkerGone), name).raise();
    }
    range
}

pub fn forget(name: &str) {
    if let Some(key) = Key::new(db(), name.as_bytes()) {
        cache::forget(&key);
        SLOTS.with(|m| m.remove(key.name_bytes()));
    }
}

pub fn reset_step(name: &str) {
    if let Some(key) = Key::new(db(), name.as_bytes()) {
        if let Some((i, generation)) = cache::find(&key) {
            cache::slots()[i].with(|d| {
                if d.generation == generation {
                    d.state.step = 0;
                }
            });
        }
    }
}

pub fn cache_rows() -> Vec<(String, SegmentState)> {
    let db = db();
    cache::slots()
        .iter()
        .filter_map(|s| s.with(|d| (d.in_use && d.key.db == db).then(|| (d.key.name(), d.state))))
        .collect()
}
