//! The allocator: commit before anything is handed out. One background worker per database
//! (worker.rs) runs rounds: it claims what that database's backends asked its clients for,
//! allocates all of it in one transaction of its own, and only once that has committed publishes
//! the answers and wakes the askers. A caller's transaction never writes what was allocated, so
//! its ROLLBACK cannot give anything back, and a crash before the commit hands nothing out.
//!
//! Its clients register while preloading and implement `Client` (collect, fail at the worker's
//! exit) and `Claim` (allocate in the worker's transaction, publish after the commit): segment
//! ranges (src/segment/allocation.rs) and backfill blocks (src/backfill/cells.rs). What they
//! share: the cells their requests live in and the registry of workers (shared.rs), and a
//! backend's side of a request (cells.rs).

mod cells;
mod shared;
mod worker;

use std::sync::Mutex;

pub use cells::{ask, await_answer, my_proc_number, refuse_in_single_user, Waiter};
pub use shared::{Locked, RequestCell, RequestState};
pub use worker::{is_this_process, wake};

/// A kind of request the allocator answers.
pub trait Client: Sync {
    /// Claims what backends asked of database `db`'s allocator, at most `room` requests, each
    /// marked as being worked on so that nobody claims it twice.
    fn collect(&self, db: u32, room: usize) -> Vec<Box<dyn Claim>>;
    /// At the worker's exit: fails what it had claimed for `db`, and wakes whoever waits for it.
    fn fail_claimed(&self, db: u32);
}

/// One claimed request.
pub trait Claim {
    /// Allocates it inside the worker's transaction (which an ERROR aborts, and the worker with
    /// it: then `fail_claimed` answers).
    fn allocate(&mut self, round: &Round);
    /// Hands the answer over once the transaction has committed; true to have the worker come
    /// back soon (what it needed was locked by another transaction).
    fn publish(self: Box<Self>) -> bool;
}

/// What a round tells its claims.
pub struct Round {
    /// How long the worker's last transaction took, from the first allocation to the commit.
    pub commit_latency_us: i64,
}

static CLIENTS: Mutex<Vec<&'static dyn Client>> = Mutex::new(Vec::new());

/// A client, while preloading (the workers are forked from the postmaster, and find it there).
pub fn register(client: &'static dyn Client) {
    CLIENTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(client);
}

fn clients() -> Vec<&'static dyn Client> {
    CLIENTS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// From _PG_init: the registry's shared block, and an allocator leaves its database as soon as a
/// DROP DATABASE of it starts.
pub fn init() {
    crate::pg::shmem::add_region(crate::pg::shmem::Region {
        name: c"pg_idgen allocators",
        size: shared::registry_size,
        lwlocks: 0,
        attach: shared::attach_registry,
    });
    crate::pg::dropdb_hook::before_drop_database(worker::leave);
}

/// The allocator workers of the whole cluster: `(running or starting, slots, waits for a slot,
/// failed starts)`.
pub fn usage() -> (i64, i64, i64, i64) {
    shared::usage()
}
