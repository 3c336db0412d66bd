//! IDs at a past time, for imports and backfills: `snowflake_at(ts)` and `uuidv7_at(ts)`, one ID
//! or an array of them. A backfilled Snowflake ID is the instant's tick, the node's backfill worker
//! id (`idgen.backfill_worker_id`, which no node makes live IDs with) and a sequence number from a
//! block of the node's backfill counters; a backfilled UUIDv7 is the instant's millisecond, a
//! counter from the same blocks (their own stream) and 59 random bits. The blocks are committed by
//! the allocator of `idgen.backfill_database` before any number of them is used (blocks.rs asks,
//! cells.rs is the allocator's client, counters.rs the table; the arithmetic and its model:
//! core::backfill). docs/backfill.md is the user's side.

mod blocks;
mod cells;
mod counters;
mod faults;

use std::sync::atomic::AtomicI64;
use std::sync::atomic::Ordering::Relaxed;

use pgrx::prelude::*;
use pgrx::Uuid;
use pgrx::{pg_sys, PgSqlErrorCode};

use crate::gucs;
use crate::node::backfills::{self, cover_ms, ever_leased};
use crate::node::take::{node_worker, NodeWorker};
use crate::pg::backend_local::BackendLocal;
use crate::pg::errors::{invalid, not_null, not_ready, out_of_range, IdError};
use crate::pg::strong_random;
use crate::pg::time::{ms_of_ts, now_ms, shown_ts};
use cells::BACKFILL_ITEMS;
use pg_idgen_core::backfill::{
    bucket_of, min_block, plan, BlockKey, Blocks, BUCKET_TICKS, UUID_STREAM,
};
use pg_idgen_core::civil::format_utc_ms;
use pg_idgen_core::field::Field;
use pg_idgen_core::layout::Layout;
use pg_idgen_core::uuidv7;

extension_sql_file!("../../sql/install/backfill.sql", name = "backfill");

/// From _PG_init: the backfill cells' shared block, and their client of the allocator.
pub fn init() {
    crate::pg::shmem::add_region(crate::pg::shmem::Region {
        name: c"pg_idgen backfill cells",
        size: cells::shmem_size,
        lwlocks: 0,
        attach: cells::attach,
    });
    crate::allocator::register(&cells::BACKFILLS);
}

/// This backend's committed blocks.
static BLOCKS: BackendLocal<Blocks> = BackendLocal::new(Blocks::new());

/// A Snowflake ID whose time is ts (an instant that has passed, within this node's layout), with
/// the node's backfill worker id (idgen.backfill_worker_id) and a sequence number committed in
/// idgen.backfill_database before it is returned: never equal to an ID any node makes live or any
/// backfill made. Between the live IDs of the ticks before and after ts.
#[pg_extern(volatile, parallel_restricted, strict)]
fn snowflake_at(ts: TimestampWithTimeZone) -> i64 {
    snowflake_ids("snowflake_at(ts)", &[ts])[0]
}

/// A Snowflake ID at each instant of the array, in its order (IDs at one instant ascend in that
/// order); a NULL element is 22004. For imports: one request to the allocator per 128 buckets of
/// about a second.
#[pg_extern(volatile, parallel_restricted, strict)]
fn snowflake_at_batch(ts: Array<'_, TimestampWithTimeZone>) -> Vec<i64> {
    snowflake_ids(
        "snowflake_at_batch(ts)",
        &elements("snowflake_at_batch(ts)", ts),
    )
}

/// A UUIDv7 whose time is ts (to the millisecond, an instant that has passed): its counter
/// committed in idgen.backfill_database before it is returned (unique among this node's backfills),
/// 59 random bits (unique against live UUIDv7s as live ones are across nodes).
#[pg_extern(volatile, parallel_restricted, strict)]
fn uuidv7_at(ts: TimestampWithTimeZone) -> Uuid {
    Uuid::from_bytes(uuid_ids("uuidv7_at(ts)", &[ts])[0])
}

/// A UUIDv7 at each instant of the array, in its order; a NULL element is 22004.
#[pg_extern(volatile, parallel_restricted, strict)]
fn uuidv7_at_batch(ts: Array<'_, TimestampWithTimeZone>) -> Vec<Uuid> {
    uuid_ids("uuidv7_at_batch(ts)", &elements("uuidv7_at_batch(ts)", ts))
        .into_iter()
        .map(Uuid::from_bytes)
        .collect()
}

fn elements(func: &str, ts: Array<'_, TimestampWithTimeZone>) -> Vec<TimestampWithTimeZone> {
    ts.iter()
        .map(|t| {
            t.unwrap_or_else(|| {
                not_null(format!("{func}: the array must not contain NULL"))
                    .hint("Filter the NULL times out, or give those rows IDs of their own.")
                    .raise()
            })
        })
        .collect()
}

fn snowflake_ids(func: &str, stamps: &[TimestampWithTimeZone]) -> Vec<i64> {
    let (layout, since_ms) = backfills::check_snowflake();
    let worker = backfill_worker(func, layout);
    let now = now_ms();
    let ticks: Vec<u64> = stamps
        .iter()
        .map(|ts| {
            let ms = past_ms(func, *ts, now);
            if ms < since_ms {
                invalid(format!(
                    "{func}: {} is before this node's layout took effect ({})",
                    shown_ts(*ts),
                    format_utc_ms(since_ms)
                ))
                .detail("IDs before that time were made with an earlier layout (pg_idgen.layouts in the data directory); an ID of this layout at such a time could equal one of them.")
                .hint("Backfill only times after the layout change.")
                .raise();
            }
            match layout.tick_of_ms(ms) {
                Some(t) if t < layout.ticks_limit() => t,
                Some(_) => out_of_range(format!(
                    "{func}: {} is past the end of the layout",
                    shown_ts(*ts)
                ))
                .raise(),
                None => out_of_range(format!(
                    "{func}: {} is before the layout's epoch",
                    shown_ts(*ts)
                ))
                .hint("IDs of this layout start at its epoch (idgen.status shows it).")
                .raise(),
            }
        })
        .collect();
    // A later change of layout starts above the mark, so the mark must cover these IDs too (it
    // covers the present whenever live IDs are made, but a node may only backfill).
    if let Some(latest) = ticks.iter().max() {
        if let Err(e) = cover_ms(layout.ms_of_tick(*latest)) {
            not_ready(format!(
                "{func}: the durable mark could not be written: {e}"
            ))
            .hint("The server log says why; pg_idgen.mark in the data directory must be writable.")
            .raise();
        }
    }
    let capacity = layout.per_tick().min(i32::MAX as u64) as u32;
    let datacenter = gucs::datacenter_id() as u64;
    let now_tick = layout.tick_of_ms(now).unwrap_or(0);
    let numbers = numbers(func, worker as i32, capacity, &ticks, now_tick, |tick| {
        (
            format!(
                "all {capacity} sequence numbers of backfill worker id {worker} at {} are taken",
                format_utc_ms(layout.ms_of_tick(tick))
            ),
            "Set idgen.backfill_worker_id to another worker id that no node has used and reload: its backfills start afresh.",
        )
    });
    ticks
        .iter()
        .zip(numbers)
        .map(|(tick, n)| layout.pack(*tick, datacenter, worker, 0, u64::from(n)))
        .collect()
}

fn uuid_ids(func: &str, stamps: &[TimestampWithTimeZone]) -> Vec<[u8; 16]> {
    backfills::check_uuidv7();
    let now = now_ms();
    let ms: Vec<u64> = stamps
        .iter()
        .map(|ts| {
            let ms = past_ms(func, *ts, now);
            u64::try_from(ms)
                .ok()
                .filter(|ms| ms >> 48 == 0)
                .unwrap_or_else(|| {
                    out_of_range(format!(
                        "{func}: {} is outside the UUIDv7 time range (1970 to 10889)",
                        shown_ts(*ts)
                    ))
                    .raise()
                })
        })
        .collect();
    let capacity = 1u32 << uuidv7::COUNTER_BITS;
    let numbers = numbers(func, UUID_STREAM, capacity, &ms, now.max(0) as u64, |ms| {
        (
            format!(
                "all {capacity} UUIDv7 counters at {} are taken",
                format_utc_ms(ms as i64)
            ),
            "A millisecond holds 32,768 backfilled UUIDv7s; spread the rows over several milliseconds.",
        )
    });
    ms.iter()
        .zip(numbers)
        .map(|(ms, n)| {
            uuidv7::compose(
                (ms << uuidv7::COUNTER_BITS) | u64::from(n),
                strong_random::next_u64(),
            )
        })
        .collect()
}

/// The milliseconds of an instant that has passed: 22003 for an infinite one, 22023 for one
/// later than the clock.
fn past_ms(func: &str, ts: TimestampWithTimeZone, now: i64) -> i64 {
    let ms = ms_of_ts(ts).unwrap_or_else(|e| e.raise());
    if ms > now {
        invalid(format!("{func}: {} is in the future", shown_ts(ts)))
            .hint("IDs of the present come from snowflake_next() and uuidv7_next(); backfills are for times that have passed.")
            .raise();
    }
    ms
}

/// The node's backfill worker id: set, within the layout's worker bits, and not a worker id this
/// node makes or may make live IDs with.
fn backfill_worker(func: &str, layout: &Layout) -> u64 {
    let largest = layout.max_value(Field::Worker);
    let Some(w) = gucs::backfill_worker_id() else {
        not_ready(format!("{func}: idgen.backfill_worker_id is not set"))
            .hint(format!("Set it to a worker id that no node and no app server makes IDs with, ever (for example the layout's largest, {largest}), set idgen.backfill_database, and reload; docs/backfill.md explains."))
            .raise()
    };
    if w > largest {
        invalid(format!(
            "idgen.backfill_worker_id {w} does not fit the layout's worker bits (0 to {largest})"
        ))
        .hint("Set a worker id within the layout and reload.")
        .raise();
    }
    let refuse = |why: String| -> ! {
        invalid(format!("{func}: idgen.backfill_worker_id {w} {why}"))
            .hint("A backfill worker id must be one no node and no app server makes live IDs with: choose another and reload.")
            .raise()
    };
    match node_worker() {
        NodeWorker::Lease => {
            let (lo, hi) = gucs::worker_lease_range(largest.min(i32::MAX as u64) as i32);
            if (lo as u64..=hi as u64).contains(&w) {
                refuse(format!(
                    "is in the range this node leases its worker id from ({lo} to {hi})"
                ));
            }
        }
        NodeWorker::Citus(own) => {
            if own.unwrap_or_else(|e| e.raise()) == w {
                refuse("is this node's worker id (its Citus group)".to_string());
            }
        }
        NodeWorker::Setting(own) => {
            if own == w {
                refuse("is this node's own worker id (idgen.worker_id)".to_string());
            }
        }
    }
    // A lease coordinator never leases its backfill worker id (idgen.worker_acquire), but one
    // leased before it became the backfill worker id has a holder that made live IDs with it.
    if LEASE_CHECKED.load(Relaxed) != w as i64 {
        let leased = ever_leased(w as i64);
        if leased {
            refuse("has been leased to a holder in this database (idgen.workers): its holder made live IDs with it".to_string());
        }
        LEASE_CHECKED.store(w as i64, Relaxed);
    }
    w
}

/// The backfill worker id this backend found never leased in its database (-1: none yet). Once
/// it is the backfill worker id, idgen.worker_acquire never leases it.
static LEASE_CHECKED: AtomicI64 = AtomicI64::new(-1);

/// The database that holds the node's counters: (oid, name).
fn counters_database(func: &str) -> (pg_sys::Oid, String) {
    let Some(name) = gucs::backfill_database() else {
        not_ready(format!("{func}: idgen.backfill_database is not set"))
            .hint("Set it to the one database of this node that holds its backfill counters (it needs CREATE EXTENSION pg_idgen), and reload; every database of the node backfills through it.")
            .raise()
    };
    let c = std::ffi::CString::new(name.clone()).unwrap_or_default();
    // SAFETY: a catalog lookup by name; missing_ok true returns InvalidOid instead of an ERROR.
    let oid = unsafe { pg_sys::get_database_oid(c.as_ptr(), true) };
    if oid == pg_sys::Oid::INVALID {
        IdError::new(
            PgSqlErrorCode::ERRCODE_INVALID_CATALOG_NAME,
            format!("database \"{name}\" (idgen.backfill_database) does not exist"),
        )
        .hint("Set idgen.backfill_database to a database of this node with CREATE EXTENSION pg_idgen, and reload.")
        .raise();
    }
    (oid, name)
}

/// A sequence number for each tick, from this backend's blocks, asking for new ones as needed: a
/// request per [`BACKFILL_ITEMS`] buckets, whose ticks take their numbers before the next one (a
/// backend keeps a bounded number of blocks).
fn numbers(
    func: &str,
    stream: i32,
    capacity: u32,
    ticks: &[u64],
    now_tick: u64,
    full: impl Fn(u64) -> (String, &'static str),
) -> Vec<u32> {
    let (db, db_name) = counters_database(func);
    let key_db = db.to_u32();
    let mut out: Vec<Option<u32>> = vec![None; ticks.len()];
    let take = |out: &mut Vec<Option<u32>>, which: &[usize]| {
        BLOCKS.with(|b| {
            for &i in which {
                if out[i].is_none() {
                    out[i] = b.take(key_db, stream, ticks[i]);
                }
            }
        })
    };
    let all: Vec<usize> = (0..ticks.len()).collect();
    take(&mut out, &all);
    loop {
        // What is still missing, in bucket order.
        let mut missing: Vec<usize> = (0..ticks.len()).filter(|i| out[*i].is_none()).collect();
        if missing.is_empty() {
            return out.into_iter().map(|n| n.unwrap_or_default()).collect();
        }
        missing.sort_by_key(|i| ticks[*i]);
        let mut wants = plan(
            &missing.iter().map(|i| ticks[*i]).collect::<Vec<_>>(),
            min_block(capacity),
            capacity,
        );
        BLOCKS.with(|b| {
            b.read_ahead(
                key_db,
                stream,
                &mut wants,
                bucket_of(now_tick),
                min_block(capacity),
            )
        });
        let mut from = 0;
        for chunk in wants.chunks(BACKFILL_ITEMS) {
            let got = blocks::reserve(db, &db_name, stream, capacity, chunk);
            BLOCKS.with(|b| b.make_room(chunk.len()));
            for ((bucket, _), block) in chunk.iter().zip(got) {
                let Some((first, len)) = block else {
                    let tick = missing
                        .iter()
                        .map(|i| ticks[*i])
                        .find(|t| bucket_of(*t) == *bucket)
                        .unwrap_or(bucket * BUCKET_TICKS);
                    let (message, hint) = full(tick);
                    IdError::new(
                        PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                        format!("{func}: {message}"),
                    )
                    .hint(hint)
                    .raise()
                };
                let key = BlockKey {
                    db: key_db,
                    stream,
                    bucket: *bucket,
                };
                BLOCKS.with(|b| b.install(key, first, len));
            }
            // The ticks of this chunk's buckets take their numbers now.
            let last = chunk.last().map(|(b, _)| *b).unwrap_or_default();
            let to = from
                + missing[from..]
                    .iter()
                    .take_while(|i| bucket_of(ticks[**i]) <= last)
                    .count();
            take(&mut out, &missing[from..to]);
            from = to;
        }
    }
}
