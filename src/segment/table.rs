//! `idgen.segments`, the Tinyid table: every statement pg_idgen runs on it is here. Business types
//! are always bound as parameters, never written into SQL.

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::SpiClient;

use crate::pg::latest_scan::scan_latest;

/// Whether a business type exists. Everyone may call segment_next(), but only administrators may
/// read idgen.segments: the row is looked for as PostgreSQL reads a catalog (pg/latest_scan.rs),
/// which checks no privilege and runs no code of any role, under the latest snapshot (a type
/// created and committed by the time of the call is found). Not a query: a backend's first
/// segment_next() of a type would parse and plan one. (This binary must also serve an extension
/// whose SQL is still at an older version, before ALTER EXTENSION ... UPDATE: the table has had
/// this shape since the first.)
pub fn type_exists(name: &str) -> bool {
    let mut found = false;
    scan_latest(c"idgen", c"segments", |col| {
        // biz_type, the first column, a text of the default collation, which is deterministic:
        // equal texts are equal bytes.
        if let Some(d) = col(1) {
            // SAFETY: a text datum of the scanned tuple, detoasted into the current context.
            let text = unsafe { pg_sys::text_to_cstring(d.cast_mut_ptr()) };
            // SAFETY: text_to_cstring returns a NUL-terminated palloc'd copy.
            found |= unsafe { std::ffi::CStr::from_ptr(text) }.to_bytes() == name.as_bytes();
        }
    });
    found
}

/// What the allocator reads of a type's row to plan its next range.
pub struct Position {
    pub max_id: i64,
    pub step: i64,
    pub delta: i64,
    pub remainder: i64,
}

/// What locking a type's row for the allocator came to.
pub enum Locked {
    Row(Position),
    /// Another transaction holds the row (an admin's UPDATE, segment_drop).
    Busy,
    NotFound,
}

/// Locks a type's row in the allocator's transaction, with SKIP LOCKED, so that a row held by
/// someone else's open transaction delays only its own type. An error is a row whose columns no
/// longer read as pg_idgen wrote them.
pub fn lock_for_allocation(client: &mut SpiClient<'_>, name: &str) -> Result<Locked, String> {
    let row = client
        .update(
            "SELECT max_id, step, delta, remainder FROM idgen.segments \
             WHERE biz_type = $1 FOR UPDATE SKIP LOCKED",
            Some(1),
            &[name.into()],
        )
        .and_then(|t| {
            if t.is_empty() {
                return Ok(None);
            }
            let t = t.first();
            Ok(Some((
                t.get::<i64>(1)?,
                t.get::<i32>(2)?,
                t.get::<i32>(3)?,
                t.get::<i32>(4)?,
            )))
        })
        .map_err(|e| e.to_string())?;
    match row {
        Some((Some(max_id), Some(s), Some(d), Some(r))) => Ok(Locked::Row(Position {
            max_id,
            step: s as i64,
            delta: d as i64,
            remainder: r as i64,
        })),
        // NOT NULL columns: a NULL here means the table was changed by hand.
        Some(_) => Err("a NULL in max_id, step, delta or remainder".to_string()),
        None => {
            let exists = client
                .select(
                    "SELECT 1 FROM idgen.segments WHERE biz_type = $1",
                    Some(1),
                    &[name.into()],
                )
                .map_err(|e| e.to_string())?;
            Ok(if exists.is_empty() {
                Locked::NotFound
            } else {
                Locked::Busy
            })
        }
    }
}

/// Moves a type's `max_id` to `end`, the end of the range the allocator commits.
pub fn advance(client: &mut SpiClient<'_>, name: &str, end: i64) -> Result<(), String> {
    client
        .update(
            "UPDATE idgen.segments SET max_id = $2, version = version + 1, updated_at = now() \
             WHERE biz_type = $1",
            None,
            &[name.into(), end.into()],
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A new type's row; false when the type exists already.
pub fn insert(
    name: &str,
    start_id: i64,
    step: i32,
    delta: i32,
    remainder: i32,
    description: Option<&str>,
) -> Result<bool, pgrx::spi::Error> {
    Spi::connect_mut(|c| {
        c.update(
            "INSERT INTO idgen.segments (biz_type, max_id, step, delta, remainder, description) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (biz_type) DO NOTHING RETURNING 1",
            None,
            &[
                name.into(),
                start_id.into(),
                step.into(),
                delta.into(),
                remainder.into(),
                description.into(),
            ],
        )
        .map(|t| !t.is_empty())
    })
}

/// Locks a type's row for a change by an administrator: `(max_id, delta, remainder)`, or None
/// when the type does not exist (or a column is NULL, which only a change by hand can make).
pub fn lock_for_alter(name: &str) -> Result<Option<(i64, i32, i32)>, pgrx::spi::Error> {
    Spi::connect_mut(|c| {
        let t = c
            .update(
                "SELECT max_id, delta, remainder FROM idgen.segments WHERE biz_type = $1 FOR UPDATE",
                Some(1),
                &[name.into()],
            )?
            .first();
        if t.is_empty() {
            return Ok(None);
        }
        Ok(
            match (t.get::<i64>(1)?, t.get::<i32>(2)?, t.get::<i32>(3)?) {
                (Some(m), Some(d), Some(r)) => Some((m, d, r)),
                _ => None,
            },
        )
    })
}

/// Changes a type's step and description (NULL: unchanged).
pub fn alter(
    name: &str,
    step: Option<i32>,
    description: Option<&str>,
) -> Result<(), pgrx::spi::Error> {
    Spi::run_with_args(
        "UPDATE idgen.segments SET step = COALESCE($2, step), \
         description = COALESCE($3, description), updated_at = now() WHERE biz_type = $1",
        &[name.into(), step.into(), description.into()],
    )
}

/// Deletes a type's row; false when there was none.
pub fn delete(name: &str) -> Result<bool, pgrx::spi::Error> {
    Spi::connect_mut(|c| {
        c.update(
            "DELETE FROM idgen.segments WHERE biz_type = $1 RETURNING 1",
            None,
            &[name.into()],
        )
        .map(|t| !t.is_empty())
    })
}
