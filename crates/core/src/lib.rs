//! The pure-Rust core of pg_idgen: no pgrx, no PostgreSQL, no unsafe code. Everything here is
//! tested with plain `cargo test -p pg_idgen_core` and driven by the pgrx layer (the `pg_idgen`
//! crate).

#![cfg_attr(not(test), forbid(unsafe_code))]
// Tests may not either, but for one that must build a value from zeroed memory (shared_text.rs).
#![cfg_attr(test, deny(unsafe_code))]

pub mod backfill;
pub mod backfill_homes;
pub mod civil;
pub mod codec;
pub mod ff1;
pub mod field;
pub mod files;
pub mod generator;
pub mod histogram;
pub mod horizon;
pub mod layout;
pub mod layout_history;
pub mod lease;
pub mod local_time;
pub mod mark;
#[cfg(test)]
mod models;
pub mod msgid;
pub mod origins;
pub mod presets;
pub mod privilege_message;
pub mod public_id;
pub mod segment;
pub mod sequence_blocks;
pub mod shared_text;
pub mod time_bounds;
pub mod typeid;
pub mod uuidv7;
