//! PostgreSQL plumbing that knows no feature of pg_idgen.

pub mod as_owner;
pub mod backend_local;
pub mod dropdb_hook;
pub mod fast_entry;
pub mod lwlock;
pub mod privilege_hint;
pub mod shared_text;
pub mod spi_read;
pub mod strong_random;
pub mod syncrep;
pub mod time;
pub mod worker_loop;
