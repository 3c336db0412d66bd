//! The node: the clock state every time-based generator of this server shares. (Growing: the
//! clock streams, the mark and the reserver move here from `snowflake.rs` and `shmem.rs`.)

pub mod backend_generator;
pub mod horizon;
pub mod lease_status;
pub mod origins;
pub mod worker_unset;
