//! Segment administration in schema `idgen`: the Tinyid table, create / alter / drop, whole
//! ranges for clients, and what the cache holds. Names are always bound as parameters.

// pgrx needs the column tuples of TableIterator spelled out in each signature (no type alias).
#![allow(clippy::type_complexity)]

use pgrx::prelude::*;

#[pg_schema]
mod idgen {
    use pgrx::prelude::*;
    use pgrx::PgSqlErrorCode;

    use crate::pg::errors::{invalid, out_of_range, required, IdError};
    use crate::segment::backend::{alloc_range, forget, key_of, reset_step};
    use crate::segment::errors::{unknown_type, unreadable_row};
    use crate::segment::table;
    use pg_idgen_core::segment::check_type_settings;

    /// Registers a business type: IDs above start_id, in ranges of step, each = remainder (mod
    /// delta) for odd/even or mod-N splits across databases. 42710 if it exists.
    #[pg_extern(volatile, parallel_unsafe)]
    fn segment_create(
        biz_type: Option<&str>,
        start_id: default!(Option<i64>, 0),
        step: default!(Option<i32>, 1000),
        delta: default!(Option<i32>, 1),
        remainder: default!(Option<i32>, 0),
        description: default!(Option<&str>, "NULL"),
    ) {
        const F: &str = "idgen.segment_create";
        key_of(F, biz_type);
        let name = biz_type.unwrap_or_default();
        let start_id = required(F, "start_id", start_id);
        let step = required(F, "step", step);
        let delta = required(F, "delta", delta);
        let remainder = required(F, "remainder", remainder);
        if let Err(msg) = check_type_settings(start_id, step as i64, delta as i64, remainder as i64)
        {
            invalid(format!("{F}: {msg}")).raise();
        }
        if start_id.checked_add(step as i64).is_none() {
            out_of_range(format!(
                "{F}: start_id {start_id} plus step {step} passes 9223372036854775807"
            ))
            .raise();
        }
        let start_id = start_id.max(crate::segment::columns::above_columns(name));
        let inserted = table::insert(name, start_id, step, delta, remainder, description);
        match inserted {
            Ok(true) => {}
            Ok(false) => IdError::new(
                PgSqlErrorCode::ERRCODE_DUPLICATE_OBJECT,
                format!("business type \"{name}\" already exists"),
            )
            .hint("Change it with idgen.segment_alter, or pick another name.")
            .raise(),
            Err(e) => invalid(format!("{F}: {e}")).raise(),
        }
    }

    /// Changes a business type's step (from its next range) or description; its position never
    /// moves backwards.
    ///
    /// A trigger on idgen.segments refuses a move backwards too.
    #[pg_extern(volatile, parallel_unsafe)]
    fn segment_alter(
        biz_type: Option<&str>,
        step: default!(Option<i32>, "NULL"),
        description: default!(Option<&str>, "NULL"),
    ) {
        const F: &str = "idgen.segment_alter";
        key_of(F, biz_type);
        let name = biz_type.unwrap_or_default();
        let row =
            table::lock_for_alter(name).unwrap_or_else(|e| unreadable_row(F, name, e).raise());
        let Some((max_id, delta, remainder)) = row else {
            unknown_type(name).raise()
        };
        if let Some(step) = step {
            if let Err(msg) =
                check_type_settings(max_id, step as i64, delta as i64, remainder as i64)
            {
                invalid(format!("{F}: {msg}")).raise();
            }
        }
        let result = table::alter(name, step, description);
        if let Err(e) = result {
            unreadable_row(F, name, e).raise();
        }
        if step.is_some() {
            // The next range uses the new step, not one grown from the old.
            reset_step(name);
        }
    }

    /// Removes a business type and forgets its cached ranges. Its highest ID stays in
    /// idgen.segments_retired: created again, the type goes on above it.
    #[pg_extern(volatile, parallel_unsafe)]
    fn segment_drop(biz_type: Option<&str>) {
        const F: &str = "idgen.segment_drop";
        key_of(F, biz_type);
        let name = biz_type.unwrap_or_default();
        let deleted = table::delete(name);
        match deleted {
            Ok(true) => forget(name),
            Ok(false) => unknown_type(name).raise(),
            Err(e) => invalid(format!("{F}: {e}")).raise(),
        }
    }

    /// A whole range for a client that hands IDs out itself (tinyid-client): the IDs x with
    /// start_id < x <= end_id and x % delta = remainder. Committed before it is returned; never
    /// handed out twice.
    #[pg_extern(volatile, parallel_unsafe)]
    fn segment_alloc(
        biz_type: Option<&str>,
    ) -> TableIterator<
        'static,
        (
            name!(start_id, i64),
            name!(end_id, i64),
            name!(delta, i32),
            name!(remainder, i32),
            name!(first_id, i64),
            name!(last_id, i64),
            name!(id_count, i64),
        ),
    > {
        let key = key_of("idgen.segment_alloc", biz_type);
        let r = alloc_range(&key, biz_type.unwrap_or_default());
        TableIterator::once((
            r.start,
            r.end,
            r.delta as i32,
            r.remainder as i32,
            r.first().unwrap_or(0),
            r.last().unwrap_or(0),
            r.count(),
        ))
    }
}

/// Behind `idgen.segment_status`: in `idgen_internal`, out of the way of `\df idgen.*`.
#[pg_schema]
mod idgen_internal {
    use pgrx::prelude::*;

    use crate::pg::time::ts_of_ms;
    use crate::segment::backend::{cache_rows, forget};

    /// Forgets the ranges of a business type cached on this node, unless called by the allocator
    /// (used by the trigger segments_moved).
    ///
    /// Called by the trigger `segments_moved` when a type's `max_id` moves. A move by anyone but
    /// this database's allocator (idgen.segment_advance after a point-in-time recovery, an
    /// administrator's UPDATE) may leave ranges cached on this node among IDs handed out before:
    /// they are forgotten (a gap, never a repeat). The trigger runs after the UPDATE took the
    /// row's lock, so a refill that starts now waits for the move to commit and plans above it,
    /// and one committed before has its answer dropped (the slot's generation changed).
    #[pg_extern(volatile, parallel_unsafe)]
    fn segment_moved(biz_type: &str) {
        if !crate::allocator::is_this_process() {
            forget(biz_type);
        }
    }

    /// The row of the idgen.segment_allocators view.
    #[pg_extern(volatile, parallel_safe)]
    fn segment_allocator_usage() -> TableIterator<
        'static,
        (
            name!(allocators, i64),
            name!(allocator_slots, i64),
            name!(slot_waits, i64),
            name!(start_failures, i64),
        ),
    > {
        TableIterator::once(crate::allocator::usage())
    }

    /// What the shared cache holds for this database's business types (used by the view
    /// idgen.segment_status).
    #[pg_extern(volatile, parallel_safe)]
    fn segment_cache() -> TableIterator<
        'static,
        (
            name!(biz_type, String),
            name!(current_step, i64),
            name!(current_start, Option<i64>),
            name!(current_end, Option<i64>),
            name!(current_next, Option<i64>),
            name!(next_start, Option<i64>),
            name!(next_end, Option<i64>),
            name!(ids_left, i64),
            name!(refill, String),
            name!(refills_ahead, i64),
            name!(refills_waited, i64),
            name!(ids_issued, i64),
            name!(last_refill_at, Option<TimestampWithTimeZone>),
        ),
    > {
        let rows: Vec<_> = cache_rows()
            .into_iter()
            .map(|(name, s)| {
                let cur = (!s.current.is_empty()).then_some(s.current);
                let nxt = (!s.next.is_empty()).then_some(s.next);
                (
                    name,
                    s.step,
                    cur.map(|b| b.range.start),
                    cur.map(|b| b.range.end),
                    cur.map(|b| b.next),
                    nxt.map(|b| b.range.start),
                    nxt.map(|b| b.range.end),
                    s.ids_left(),
                    format!("{:?}", s.refill).to_lowercase(),
                    s.refills_ahead as i64,
                    s.refills_waited as i64,
                    s.issued as i64,
                    (s.last_refill_us > 0).then(|| ts_of_ms(s.last_refill_us / 1000)),
                )
            })
            .collect();
        TableIterator::new(rows)
    }
}

extension_sql_file!(
    "../../sql/install/segments.sql",
    name = "segments_table",
    requires = [
        idgen_internal::segment_cache,
        idgen_internal::segment_moved,
        idgen_internal::segment_allocator_usage
    ],
);
