//! PostgreSQL plumbing that knows no feature of pg_idgen.

pub mod lwlock;
pub mod shared_text;
pub mod syncrep;
