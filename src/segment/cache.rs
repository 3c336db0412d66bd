//! The shared-memory side of segment mode: one slot per cached business type (a double buffer
//! from `core::segment` in the allocator's `Locked` cell), and one request cell per backend for
//! whole-range allocations.
//!
//! Locking: a slot's key and generation change only under the directory LWLock held exclusively
//! *and* the slot's spinlock; its buffers change under the spinlock alone. Spinlocks guard a few
//! lines of arithmetic: no allocation, no `ereport`, no SPI while one is held.

use std::ptr::null_mut;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};

use pgrx::pg_sys;

use crate::allocator::{Locked, RequestCell, RequestState};
use crate::gucs;
use pg_idgen_core::segment::{Range, SegmentState};

/// Longest business type name in bytes (Tinyid's `biz_type varchar(63)`).
pub const KEY_MAX: usize = 63;
/// A business type within a database.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Key {
    pub db: u32,
    len: u8,
    bytes: [u8; KEY_MAX],
}

impl Key {
    /// None if the name is empty or longer than [`KEY_MAX`] bytes.
    pub fn new(db: u32, name: &[u8]) -> Option<Key> {
        if name.is_empty() || name.len() > KEY_MAX {
            return None;
        }
        let mut bytes = [0u8; KEY_MAX];
        bytes[..name.len()].copy_from_slice(name);
        Some(Key {
            db,
            len: name.len() as u8,
            bytes,
        })
    }

    pub fn name_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    pub fn name(&self) -> String {
        String::from_utf8_lossy(self.name_bytes()).into_owned()
    }

    pub fn is(&self, db: u32, name: &[u8]) -> bool {
        self.db == db && self.name_bytes() == name
    }
}

/// A cached business type.
#[repr(C)]
pub struct SlotData {
    /// Bumped whenever the slot is given to another type or forgotten; a backend's cached
    /// `(slot, generation)` is valid only while it matches.
    pub generation: u64,
    pub in_use: bool,
    pub key: Key,
    pub state: SegmentState,
}

pub type Slot = Locked<SlotData>;

/// A whole-range allocation (`idgen.segment_alloc`) asked for by one backend.
#[repr(C)]
pub struct RequestData {
    pub state: RequestState,
    /// Bumped per request, so a late answer to an abandoned request is never read as the
    /// answer to a newer one.
    pub seq: u64,
    pub key: Key,
    pub range: Range,
    pub fault: u32,
}

pub type Request = Locked<RequestData>;

impl RequestCell for RequestData {
    fn header(&mut self) -> (&mut u64, &mut RequestState) {
        (&mut self.seq, &mut self.state)
    }
}

#[repr(C)]
struct Header {
    slot_count: u32,
    request_count: u32,
    hand: AtomicU32,
    evictions: AtomicU64,
}

struct Area {
    header: *mut Header,
    slots: *mut Slot,
    requests: *mut Request,
}

static mut AREA: Area = Area {
    header: null_mut(),
    slots: null_mut(),
    requests: null_mut(),
};

const ALIGN: usize = 64;

fn round_up(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

fn counts() -> (usize, usize) {
    // SAFETY: MaxBackends is final before the shmem request hook runs (PostgreSQL 15+).
    let backends = unsafe { pg_sys::MaxBackends } as usize;
    (gucs::segment_cache_size(), backends)
}

/// Bytes to request for segment mode, with room to align the start.
pub fn shmem_size() -> usize {
    let (slots, requests) = counts();
    ALIGN
        + round_up(size_of::<Header>())
        + slots * size_of::<Slot>()
        + requests * size_of::<Request>()
}

/// The LWLock over the directory (which slot holds which business type), the region's one lock.
static mut DIR_LOCK: *mut pg_sys::LWLock = std::ptr::null_mut();

fn dir_lock() -> *mut pg_sys::LWLock {
    // SAFETY: set once in the postmaster's startup hook, before any backend is forked.
    unsafe { DIR_LOCK }
}

/// Lays out (when `!found`, initialises) the area at `base`; runs in the startup hook.
///
/// # Safety
/// `base` must point at `shmem_size()` bytes of shared memory, the same in every process, and
/// `locks` at the region's one LWLock.
pub unsafe fn attach(base: *mut u8, locks: *mut pg_sys::LWLockPadded, found: bool) {
    // SAFETY: by the contract above every offset stays within the block.
    unsafe {
        let start = base.add(base.align_offset(ALIGN));
        let (slot_count, request_count) = counts();
        let header = start as *mut Header;
        let slots = start.add(round_up(size_of::<Header>())) as *mut Slot;
        let requests = slots.add(slot_count) as *mut Request;
        if !found {
            std::ptr::write_bytes(start, 0, shmem_size() - ALIGN);
            (*header).slot_count = slot_count as u32;
            (*header).request_count = request_count as u32;
            for i in 0..slot_count {
                pg_sys::ConditionVariableInit((*slots.add(i)).cv());
            }
            for i in 0..request_count {
                pg_sys::ConditionVariableInit((*requests.add(i)).cv());
            }
        }
        DIR_LOCK = &raw mut (*locks).lock;
        AREA = Area {
            header,
            slots,
            requests,
        };
    }
}

fn header() -> &'static Header {
    // SAFETY: set in the postmaster's startup hook, before any backend exists; never changes.
    unsafe {
        let h = AREA.header;
        assert!(!h.is_null(), "pg_idgen segment memory is not attached");
        &*h
    }
}

pub fn slots() -> &'static [Slot] {
    let h = header();
    // SAFETY: `slot_count` slots were laid out after the header at startup.
    unsafe { std::slice::from_raw_parts(AREA.slots, h.slot_count as usize) }
}

pub fn requests() -> &'static [Request] {
    let h = header();
    // SAFETY: `request_count` cells were laid out after the slots at startup.
    unsafe { std::slice::from_raw_parts(AREA.requests, h.request_count as usize) }
}

/// `(slots in use, slots, evictions so far)` over the whole cluster.
pub fn usage() -> (i64, i64, i64) {
    let used = slots().iter().filter(|s| s.with(|d| d.in_use)).count();
    (
        used as i64,
        slots().len() as i64,
        header().evictions.load(Relaxed) as i64,
    )
}

/// Finds the slot of `key` under the directory lock (shared): `(index, generation)`.
pub fn find(key: &Key) -> Option<(usize, u64)> {
    let _dir = DirLock::new(pg_sys::LWLockMode::LW_SHARED);
    find_locked(key)
}

fn find_locked(key: &Key) -> Option<(usize, u64)> {
    slots().iter().enumerate().find_map(|(i, s)| {
        s.with(|d| (d.in_use && d.key.is(key.db, key.name_bytes())).then_some((i, d.generation)))
    })
}

/// The slot of `key`, giving it a free slot or evicting a cold one if it has none.
/// None when every slot is busy refilling (the caller reports the cache as full).
pub fn find_or_insert(key: &Key) -> Option<(usize, u64)> {
    if let Some(found) = find(key) {
        return Some(found);
    }
    let _dir = DirLock::new(pg_sys::LWLockMode::LW_EXCLUSIVE);
    if let Some(found) = find_locked(key) {
        return Some(found);
    }
    let slots = slots();
    let take = |i: usize| {
        slots[i].with(|d| {
            d.generation += 1;
            d.in_use = true;
            d.key = *key;
            d.state = SegmentState::default();
            d.generation
        })
    };
    if let Some(i) = slots.iter().position(|s| s.with(|d| !d.in_use)) {
        return Some((i, take(i)));
    }
    // CLOCK: sweep twice at most; skip slots whose next range is on its way, so a worker's
    // answer is never lost on a type somebody is waiting for.
    let h = header();
    for _ in 0..slots.len() * 2 {
        let i = h.hand.fetch_add(1, Relaxed) as usize % slots.len();
        let s = &slots[i];
        if s.take_referenced() {
            continue;
        }
        let idle =
            s.with(|d| d.state.refill == pg_idgen_core::segment::Refill::Idle && !d.state.waiting);
        if idle {
            h.evictions.fetch_add(1, Relaxed);
            let generation = take(i);
            s.broadcast();
            return Some((i, generation));
        }
    }
    None
}

/// Forgets a type's cached ranges (after `segment_drop`); they become a gap, never a repeat.
pub fn forget(key: &Key) {
    let _dir = DirLock::new(pg_sys::LWLockMode::LW_EXCLUSIVE);
    if let Some((i, _)) = find_locked(key) {
        let s = &slots()[i];
        s.with(|d| {
            d.generation += 1;
            d.in_use = false;
            d.state = SegmentState::default();
        });
        s.broadcast();
    }
}

/// Holds the segment directory LWLock for a scope.
struct DirLock(*mut pg_sys::LWLock);

impl DirLock {
    fn new(mode: pg_sys::LWLockMode::Type) -> DirLock {
        let lock = dir_lock();
        // SAFETY: a valid LWLock of our tranche; released in Drop, also when unwinding.
        unsafe { pg_sys::LWLockAcquire(lock, mode) };
        DirLock(lock)
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // SAFETY: acquired in `new`. On an ERROR PostgreSQL releases all LWLocks itself, but
        // nothing under this lock can raise one.
        unsafe { pg_sys::LWLockRelease(self.0) };
    }
}
