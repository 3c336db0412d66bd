//! The backfills' door into the node (src/backfill/): the checks an ID at a past time passes,
//! the durable mark moved over it (`cover_ms`), and which table holds each backfill worker id's
//! counters (core::backfill_homes, the file `pg_idgen.backfill_homes` in the data directory): the
//! allocator binds a worker id to its database's `idgen_internal.backfill_counters` before it
//! commits the first block, and refuses blocks of a bound worker id from any other table (another
//! database, or the same one after the extension was dropped and created again), whose counters
//! would start at 0 again.

use std::sync::atomic::Ordering::Relaxed;

use pg_idgen_core::backfill_homes::{Binding, Home, Homes};
use pg_idgen_core::layout::Layout;

use super::checks::{check_can_generate, check_layout_accepted};
use super::generator::node;
use super::origin_check;
use super::shared;
use super::stream::Stream;
use crate::pg::data_dir;
use crate::pg::lwlock::LwLockGuard;

pub use super::reservation::cover_ms;
pub use super::worker_unset::ever_leased;

/// What Snowflake IDs at past times check first: a primary with a readable mark, a database
/// holding no other system's IDs (after pg_upgrade without the node's files, the layout history
/// among them, or restored from another system, every Snowflake ID of the node is refused), an
/// accepted layout. Returns the node's layout, and the time (ms) from which it makes IDs: an ID
/// of it before that could equal one of an earlier layout (0: no bound).
pub fn check_snowflake() -> (&'static Layout, i64) {
    let shared = shared::shared();
    check_can_generate(shared, None);
    origin_check::check(Stream::Snowflake);
    check_layout_accepted(shared);
    (&node().layout, shared.layout_start_ms.load(Relaxed))
}

/// What UUIDv7s at past times check first: a primary with a readable mark, and a database
/// holding no other system's IDs.
pub fn check_uuidv7() {
    check_can_generate(shared::shared(), None);
    origin_check::check(Stream::Uuidv7);
}

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
