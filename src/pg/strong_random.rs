//! Random bits from PostgreSQL's cryptographically secure source, `pg_strong_random()` (OpenSSL's
//! `RAND_bytes`, or `/dev/urandom` in a build without OpenSSL: what `gen_random_uuid()` uses),
//! read 4 KiB at a time into a buffer of this process, so a UUID costs a few nanoseconds of
//! random bits instead of a call into OpenSSL each.
//!
//! The buffer is filled on first use in the process that uses it, never in the postmaster, so
//! no two backends (forked from it) can share bytes; each byte is handed out once.

use std::cell::{Cell, RefCell};

use pgrx::{pg_sys, PgSqlErrorCode};

use crate::errors::IdError;

const WORDS: usize = 512;

thread_local! {
    static POOL: RefCell<[u64; WORDS]> = const { RefCell::new([0; WORDS]) };
    /// The next unused word of `POOL`; `WORDS` when it is used up (and at the start).
    static NEXT: Cell<usize> = const { Cell::new(WORDS) };
}

/// 64 random bits.
#[inline]
pub fn next_u64() -> u64 {
    let i = NEXT.get();
    if i == WORDS {
        refill();
    }
    let i = NEXT.get();
    NEXT.set(i + 1);
    POOL.with_borrow(|pool| pool[i])
}

#[cold]
fn refill() {
    POOL.with_borrow_mut(|pool| {
        // SAFETY: writes exactly size_of_val(pool) bytes into the buffer it is given.
        let ok = unsafe {
            pg_sys::pg_strong_random(pool.as_mut_ptr().cast(), std::mem::size_of_val(pool))
        };
        if !ok {
            IdError::new(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                "could not generate random values",
            )
            .hint("pg_strong_random() failed: the operating system's or OpenSSL's random source is not available.")
            .raise();
        }
    });
    NEXT.set(0);
}
