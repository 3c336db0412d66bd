//! A backend's side of backfill blocks (IDs at a past time, src/backfill.rs): it asks the
//! allocator of the database that holds the node's counters for blocks of buckets through its
//! backfill cell, and waits until the allocator has committed them (allocation.rs,
//! backfill_counters.rs). The arithmetic of blocks is `core::backfill`.

use pgrx::{pg_sys, PgSqlErrorCode};

use super::backend::{ask, await_answer, my_proc_number};
pub use super::cache::BACKFILL_ITEMS;
use super::cache::{self, BackfillItem, FAULT_NOT_INSTALLED, FAULT_UNREADABLE};
use crate::gucs;
use crate::pg::errors::{not_ready, IdError};

/// Blocks of `stream` for `wants` (bucket, numbers wanted), committed in database `db` before this
/// returns: per bucket `(first, len)`, or None when the bucket has no number left.
pub fn reserve(
    db: pg_sys::Oid,
    db_name: &str,
    stream: i32,
    capacity: u32,
    wants: &[(u64, u32)],
) -> Vec<Option<(u32, u32)>> {
    let mut out = Vec::with_capacity(wants.len());
    for chunk in wants.chunks(BACKFILL_ITEMS) {
        out.extend(reserve_chunk(db.to_u32(), db_name, stream, capacity, chunk));
    }
    out
}

fn reserve_chunk(
    db: u32,
    db_name: &str,
    stream: i32,
    capacity: u32,
    wants: &[(u64, u32)],
) -> Vec<Option<(u32, u32)>> {
    let me = my_proc_number();
    let Some(cell) = cache::backfill_cells().get(me) else {
        not_ready("this process cannot ask for backfill blocks").raise()
    };
    let seq = ask(cell, |d| {
        d.db = db;
        d.stream = stream;
        d.capacity = capacity;
        d.count = wants.len() as u32;
        for (item, (bucket, want)) in d.items.iter_mut().zip(wants) {
            *item = BackfillItem {
                bucket: *bucket,
                want: *want,
                first: 0,
                len: 0,
            };
        }
        d.fault = 0;
    });
    let (fault, items) = await_answer(
        cell,
        db,
        seq,
        |d| (d.fault, d.items),
        || {
            not_ready(format!(
                "timed out waiting for the segment allocator of database \"{db_name}\" to commit backfill counters"
            ))
            .detail(format!(
                "Waited idgen.segment_wait_timeout ({} ms).",
                gucs::segment_wait_timeout_ms()
            ))
            .hint("A long transaction may hold rows of idgen_internal.backfill_counters locked there (see pg_locks), or the server log says why the allocator is failing.")
        },
    );
    if fault != 0 {
        fault_error(fault, db_name).raise();
    }
    items[..wants.len()]
        .iter()
        .map(|i| (i.len > 0).then_some((i.first, i.len)))
        .collect()
}

fn fault_error(fault: u32, db_name: &str) -> IdError {
    match fault {
        FAULT_NOT_INSTALLED => IdError::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("database \"{db_name}\" (idgen.backfill_database) has no backfill counters"),
        )
        .hint(format!(
            "Run CREATE EXTENSION pg_idgen (version 0.2.5 or later) in database \"{db_name}\", or set idgen.backfill_database to a database that has it, and reload."
        )),
        FAULT_UNREADABLE => IdError::new(
            PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
            format!("the segment allocator of database \"{db_name}\" could not read or write idgen_internal.backfill_counters"),
        )
        .hint("The server log says why (a WARNING of the allocator); the table must keep the columns and types pg_idgen created."),
        _ => not_ready(format!(
            "the segment allocator of database \"{db_name}\" exited before it committed backfill counters"
        ))
        .hint("See the server log for the reason; the next call starts a new allocator."),
    }
}
