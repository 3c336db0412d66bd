//! `idgen_internal.backfill_counters`, the counters of backfill blocks (core::backfill): every
//! statement pg_idgen runs on it is here, run by the allocator worker in its transaction.

use pgrx::pg_sys;
use pgrx::spi::SpiClient;

use super::faults::{FAULT_ELSEWHERE, FAULT_LEASED, FAULT_NOT_INSTALLED, FAULT_UNREADABLE};
use crate::node::backfills;
use pg_idgen_core::backfill::{reserve, UUID_STREAM};
use pg_idgen_core::backfill_homes::Home;

/// Reserves a block per `(bucket, want)` of `stream` in the allocator's transaction: reads each
/// bucket's counter (locked), moves it past the block, and gives `(first, len)`, or None for a
/// bucket with no number left below `capacity`. Each bucket sees the blocks reserved before it in
/// the same transaction. Err is a fault code (the table is missing or does not read as created).
pub fn reserve_blocks(
    client: &mut SpiClient<'_>,
    stream: i32,
    capacity: u32,
    wants: &[(u64, u32)],
) -> Result<Vec<Option<(u32, u32)>>, u32> {
    // The table must be pg_idgen's own, made by CREATE EXTENSION: in a database without the
    // extension, its owner could make a table of that name with triggers, which this worker (a
    // superuser) would run.
    let installed = client
        .select(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d \
                 JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid \
                 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass \
                   AND d.objid OPERATOR(pg_catalog.=) pg_catalog.to_regclass('idgen_internal.backfill_counters') \
                   AND d.deptype OPERATOR(pg_catalog.=) 'e' AND e.extname OPERATOR(pg_catalog.=) 'pg_idgen')",
            Some(1),
            &[],
        )
        .and_then(|t| t.first().get::<bool>(1))
        .map_err(unreadable)?;
    if installed != Some(true) {
        return Err(FAULT_NOT_INSTALLED);
    }
    // A backfill worker id's counters live in one table; another's would start at 0 again.
    // (UUIDv7s have no such id; their 59 random bits keep them apart.)
    if stream != UUID_STREAM {
        let table = client
            .select(
                "SELECT 'idgen_internal.backfill_counters'::pg_catalog.regclass::pg_catalog.oid",
                Some(1),
                &[],
            )
            .and_then(|t| t.first().get::<pg_sys::Oid>(1))
            .map_err(unreadable)?
            .ok_or_else(|| unreadable("no oid"))?;
        let home = Home {
            // SAFETY: set for a background worker once it has connected to its database.
            db: unsafe { pg_sys::MyDatabaseId }.to_u32(),
            table: table.to_u32(),
        };
        // The allocator's database may be the lease coordinator's (the caller's database is
        // checked by the caller): an id leased there has a holder that made live IDs with it.
        let leased = client
            .select(
                "SELECT EXISTS (SELECT 1 FROM idgen.workers WHERE worker_id OPERATOR(pg_catalog.=) $1)",
                Some(1),
                &[stream.into()],
            )
            .and_then(|t| t.first().get::<bool>(1))
            .map_err(unreadable)?;
        if leased == Some(true) {
            return Err(FAULT_LEASED);
        }
        match backfills::bind(stream, home) {
            Ok(None) => {}
            Ok(Some(_)) => return Err(FAULT_ELSEWHERE),
            Err(e) => return Err(unreadable(e)),
        }
    }
    let mut out = Vec::with_capacity(wants.len());
    for &(bucket, want) in wants {
        let bucket = i64::try_from(bucket).map_err(|_| FAULT_UNREADABLE)?;
        let next = client
            .update(
                "SELECT next_seq FROM idgen_internal.backfill_counters \
                 WHERE stream = $1 AND bucket = $2 FOR UPDATE",
                Some(1),
                &[stream.into(), bucket.into()],
            )
            .and_then(|t| {
                if t.is_empty() {
                    Ok(Some(0))
                } else {
                    t.first().get::<i32>(1)
                }
            })
            .map_err(unreadable)?
            .ok_or_else(|| unreadable("a NULL next_seq"))?;
        let next = u32::try_from(next).map_err(|_| unreadable("a negative next_seq"))?;
        let block = reserve(next, want, capacity);
        if let Some((first, len)) = block {
            client
                .update(
                    "INSERT INTO idgen_internal.backfill_counters AS c (stream, bucket, next_seq) \
                     VALUES ($1, $2, $3) ON CONFLICT (stream, bucket) \
                     DO UPDATE SET next_seq = excluded.next_seq, updated_at = pg_catalog.now()",
                    None,
                    &[stream.into(), bucket.into(), ((first + len) as i32).into()],
                )
                .map_err(unreadable)?;
        }
        out.push(block);
    }
    Ok(out)
}

fn unreadable(e: impl std::fmt::Display) -> u32 {
    pgrx::warning!("pg_idgen allocator: idgen_internal.backfill_counters: {e}");
    FAULT_UNREADABLE
}
