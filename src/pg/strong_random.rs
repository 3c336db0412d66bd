//! Random bits from PostgreSQL's cryptographically secure source, `pg_strong_random()` (OpenSSL's
//! `RAND_bytes`, or `/dev/urandom` in a build without OpenSSL: what `gen_random_uuid()` uses),
//! read 4 KiB at a time into a buffer of this process, so a UUID costs a few nanoseconds of
//! random bits instead of a call into OpenSSL each.
//!
//! The buffer is filled on first use in the process that uses it, never in the postmaster, so
//! no two backends (forked from it) can share bytes; each byte is handed out once.

use pgrx::{pg_sys, PgSqlErrorCode};

use crate::pg::backend_local::BackendLocal;
use crate::pg::errors::IdError;

const WORDS: usize = 512;

struct Pool {
    words: [u64; WORDS],
    /// The next unused word; `WORDS` when all are used (and at the start).
    next: usize,
}

static POOL: BackendLocal<Pool> = BackendLocal::new(Pool {
    words: [0; WORDS],
    next: WORDS,
});

/// 64 random bits.
#[inline]
pub fn next_u64() -> u64 {
    POOL.with(|pool| {
        if pool.next == WORDS {
            refill(pool);
        }
        let v = pool.words[pool.next];
        pool.next += 1;
        v
    })
}

/// `next_u64`, or None when the buffer is used up (or in use): never calls PostgreSQL or raises.
#[inline(always)]
pub fn try_next_u64() -> Option<u64> {
    POOL.try_with(|pool| {
        let v = *pool.words.get(pool.next)?;
        pool.next += 1;
        Some(v)
    })
    .flatten()
}

#[cold]
fn refill(pool: &mut Pool) {
    // SAFETY: writes exactly size_of_val(words) bytes into the buffer it is given.
    let ok = unsafe {
        pg_sys::pg_strong_random(
            pool.words.as_mut_ptr().cast(),
            std::mem::size_of_val(&pool.words),
        )
    };
    if !ok {
        IdError::new(
            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
            "could not generate random values",
        )
        .hint("pg_strong_random() failed: the operating system's or OpenSSL's random source is not available.")
        .raise();
    }
    pool.next = 0;
}
