//! The lease's door into the node (src/lease/): the cell every Snowflake take checks in lease
//! mode (`pg_idgen_core::lease::LeaseCell`), which the keeper grants, extends and revokes; the
//! keeper's report beside it (node/lease_status.rs); and the clock a lease moves: a new lease
//! starts above its worker id's last holder, and a holder reports its last ID's time.

use pg_idgen_core::lease::LeaseCell;

use super::shared;
use super::stream::Stream;

pub use super::lease_status::{keeper_error, KeeperState, LeaseStatus};

/// The node's lease in shared memory: the cell, and the keeper's report.
#[derive(Clone, Copy)]
pub struct Lease {
    pub cell: &'static LeaseCell,
    pub status: &'static LeaseStatus,
}

/// The node's lease; only after startup, which every backend and worker has passed.
pub fn lease() -> Lease {
    let shared = shared::shared();
    Lease {
        cell: &shared.lease,
        status: &shared.lease_status,
    }
}

/// Raises the Snowflake stream so that its next IDs are later than `ms`: a new lease's
/// `start_after`.
pub fn raise_floor_to_ms(ms: i64) {
    shared::shared().clock(Stream::Snowflake).raise_past_ms(ms);
}

/// The last millisecond of the newest Snowflake ID handed out, if any: the `last_ts` a lease
/// holder reports.
pub fn last_id_ms() -> Option<i64> {
    let snowflake = shared::shared().clock(Stream::Snowflake);
    snowflake
        .end_ms(snowflake.state.last().0)
        .map(|end| end - 1)
}

/// The largest worker id the node's layout holds.
pub fn max_worker_id() -> u64 {
    super::generator::node()
        .layout
        .max_value(pg_idgen_core::layout::Field::Worker)
}
