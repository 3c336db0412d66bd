//! Which table holds each backfill worker id's counters (core::backfill_homes, the file
//! `pg_idgen.backfill_homes` in the data directory): the allocator binds a worker id to its
//! database's `idgen_internal.backfill_counters` before it commits the first block, and refuses
//! blocks of a bound worker id from any other table (another database, or the same one after
//! the extension was dropped and created again), whose counters would start at 0 again.

use pg_idgen_core::backfill_homes::{Binding, Home, Homes};

use super::shared;
use crate::pg::data_dir;
use crate::pg::lwlock::LwLockGuard;

/// Binds `worker` to `home` unless it is bound already; durable before it returns. Ok(None): its
/// counters are here; Ok(Some(h)): they are in `h`, and none may be taken here.
pub fn bind(worker: i32, home: Home) -> Result<Option<Home>, String> {
    let dir = data_dir();
    // SAFETY: the reservation lock, an LWLock of pg_idgen's tranche in shared memory, serialises
    // every writer of the node's files; held for a read and at most one durable write.
    let _lock = unsafe { LwLockGuard::exclusive(shared::reserve_lock()) };
    let homes = Homes::load(&dir)?;
    match homes.bind(worker, home) {
        Binding::Here => Ok(None),
        Binding::Elsewhere(h) => Ok(Some(h)),
        Binding::New(next) => {
            next.store(&dir)?;
            Ok(None)
        }
    }
}

/// The table `worker` is bound to, if any (for messages; the file is replaced atomically).
pub fn home_of(worker: i32) -> Option<Home> {
    Homes::load(&data_dir()).ok()?.home_of(worker)
}
