//! A backend's side of backfill blocks (IDs at a past time, mod.rs): it asks the allocator of the
//! database that holds the node's counters for blocks of buckets through its backfill cell
//! (cells.rs), and waits until the allocator has committed them (counters.rs). The arithmetic of
//! blocks is `core::backfill`.

use pgrx::{pg_sys, PgSqlErrorCode};

use super::cells::{cells, BackfillItem, BACKFILL_ITEMS};
use super::faults::{FAULT_ELSEWHERE, FAULT_LEASED, FAULT_NOT_INSTALLED, FAULT_UNREADABLE};
use crate::allocator::{ask, await_answer, my_proc_number};
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
    let Some(cell) = cells().get(me) else {
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
                "timed out waiting for the allocator of database \"{db_name}\" to commit backfill counters"
            ))
            .detail(format!(
                "Waited idgen.segment_wait_timeout ({} ms).",
                gucs::segment_wait_timeout_ms()
            ))
            .hint("A long transaction may hold rows of idgen_internal.backfill_counters locked there (see pg_locks), or the server log says why the allocator is failing.")
        },
    );
    if fault != 0 {
        fault_error(fault, db_name, stream).raise();
    }
    items[..wants.len()]
        .iter()
        .map(|i| (i.len > 0).then_some((i.first, i.len)))
        .collect()
}

fn fault_error(fault: u32, db_name: &str, stream: i32) -> IdError {
    match fault {
        FAULT_ELSEWHERE => elsewhere(db_name, stream),
        FAULT_LEASED => IdError::new(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("idgen.backfill_worker_id {stream} has been leased to a holder in database \"{db_name}\" (idgen.workers): its holder made live IDs with it"),
        )
        .hint("A backfill worker id must be one no node and no app server makes live IDs with: choose another and reload."),
        FAULT_NOT_INSTALLED => IdError::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("database \"{db_name}\" (idgen.backfill_database) has no backfill counters"),
        )
        .hint(format!(
            "Run CREATE EXTENSION pg_idgen (version 0.2.5 or later) in database \"{db_name}\", or set idgen.backfill_database to a database that has it, and reload."
        )),
        FAULT_UNREADABLE => IdError::new(
            PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
            format!("the allocator of database \"{db_name}\" could not read or write idgen_internal.backfill_counters"),
        )
        .hint("The server log says why (a WARNING of the allocator); the table must keep the columns and types pg_idgen created."),
        _ => not_ready(format!(
            "the allocator of database \"{db_name}\" exited before it committed backfill counters"
        ))
        .hint("See the server log for the reason; the next call starts a new allocator."),
    }
}

/// The refusal of a block of `stream` from `db_name`'s counters: they are bound elsewhere.
fn elsewhere(db_name: &str, stream: i32) -> IdError {
    let home = crate::node::backfills::home_of(stream);
    let name = home.and_then(|h| {
        // SAFETY: a catalog lookup by oid; NULL when no such database exists.
        let p = unsafe { pg_sys::get_database_name(pg_sys::Oid::from(h.db)) };
        // SAFETY: a palloc'd C string, or NULL.
        (!p.is_null()).then(|| {
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        })
    });
    let place = match (home, name) {
        (Some(h), Some(n)) if n == db_name => format!(
            "an earlier idgen_internal.backfill_counters of database \"{n}\" (table oid {}, gone: the extension was dropped and created again)",
            h.table
        ),
        (Some(_), Some(n)) => format!("database \"{n}\""),
        (Some(h), None) => format!("database oid {}, which no longer exists", h.db),
        (None, _) => "another table".to_string(),
    };
    IdError::new(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("backfill worker id {stream} has its counters in {place}, not in database \"{db_name}\" (idgen.backfill_database)"),
    )
    .detail("A backfilled ID's sequence number comes from its bucket's counter, which only moves forward in the table that holds it; the counters of another table start at 0 again and would repeat IDs already made. pg_idgen.backfill_homes in the data directory records where each backfill worker id's counters are.")
    .hint("Set idgen.backfill_database back to the database that holds them, or set idgen.backfill_worker_id to a worker id no node and no app server has ever used, and reload; docs/backfill.md explains.")
}
