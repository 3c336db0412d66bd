//! The pure-Rust core of pg_idgen: no pgrx, no PostgreSQL. Everything here is tested with plain
//! `cargo test` and driven by the thin pgrx layer in the rest of the crate.

pub mod civil;
pub mod codec;
pub mod generator;
pub mod layout;
pub mod layout_history;
pub mod lease;
pub mod mark;
#[cfg(test)]
mod models;
pub mod msgid;
pub mod presets;
pub mod segment;
