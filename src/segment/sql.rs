//! Segment administration in schema `idgen`: the Tinyid table, create / alter / drop, whole
//! ranges for clients, and what the cache holds. Names are always bound as parameters.

// pgrx needs the column tuples of TableIterator spelled out in each signature (no type alias).
#![allow(clippy::type_complexity)]

use pgrx::prelude::*;
use pgrx::{pg_sys, PgTryBuilder};

use crate::pg::spi_read::{one_i64, Arg};

/// Whether a business type exists, as the caller's transaction sees it. Everyone may call
/// segment_next(), but only administrators may read idgen.segments: the lookup runs as the
/// bootstrap superuser, with every operator schema-qualified so the caller's search_path cannot
/// put its own code in it. Read-only SPI, which takes no transaction id: segment_next() runs in
/// the leader of parallel plans (pg/spi_read.rs). (No SQL helper: this binary must also serve an
/// extension whose SQL is still at an older version, before ALTER EXTENSION ... UPDATE.)
pub(super) fn type_exists(name: &str) -> bool {
    let (mut user, mut context) = (pg_sys::Oid::INVALID, 0);
    // SAFETY: saving and switching the current user id, as SECURITY DEFINER functions do; an
    // ERROR in between is unwound by PgTryBuilder's finally, and (sub)transaction abort restores
    // it as well.
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut user, &mut context);
        pg_sys::SetUserIdAndSecContext(
            pg_sys::Oid::from(pg_sys::BOOTSTRAP_SUPERUSERID),
            context | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32,
        );
    }
    let found = PgTryBuilder::new(|| {
        one_i64(
            "SELECT 1 FROM idgen.segments WHERE biz_type OPERATOR(pg_catalog.=) $1",
            &[Arg::Text(name)],
        )
    })
    .finally(|| {
        // SAFETY: restores what was saved above.
        unsafe { pg_sys::SetUserIdAndSecContext(user, context) }
    })
    .execute();
    match found {
        Ok(found) => found.is_some(),
        Err(e) => crate::errors::not_ready(format!("pg_idgen: could not read idgen.segments: {e}"))
            .raise(),
    }
}

/// The highest value held by the integer columns of this database whose default is
/// `segment_next('<name>')` (0 if none): a type created (again) goes on above them. After a
/// restore that could not bring `idgen.segments` back (a database owner who may not write it), or
/// a type deleted with its retired row, this is what keeps `segment_create` from starting below
/// IDs the application already holds. Read as the caller: a column it may not read is an error.
fn above_columns(name: &str) -> i64 {
    let queries = Spi::connect(|c| {
        c.select(
            "SELECT format('SELECT max(%I)::bigint FROM %s', a.attname, cl.oid::pg_catalog.regclass),
                    format('%s.%I', cl.oid::pg_catalog.regclass, a.attname)
               FROM pg_catalog.pg_attrdef d
               JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
               JOIN pg_catalog.pg_class cl ON cl.oid = d.adrelid
              WHERE cl.relkind IN ('r', 'p') AND NOT cl.relispartition AND NOT a.attisdropped
                AND a.atttypid IN ('pg_catalog.int8'::pg_catalog.regtype, 'pg_catalog.int4'::pg_catalog.regtype,
                                   'pg_catalog.numeric'::pg_catalog.regtype)
                AND pg_catalog.strpos(pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                                      'segment_next(' OPERATOR(pg_catalog.||) pg_catalog.quote_literal($1)
                                      OPERATOR(pg_catalog.||) '::text)') > 0",
            None,
            &[name.into()],
        )?
        .map(|row| Ok((row.get::<String>(1)?, row.get::<String>(2)?)))
        .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .unwrap_or_else(|e| {
        crate::errors::internal(format!("idgen.segment_create: could not look for columns using \"{name}\": {e}"))
            .raise()
    });
    let mut top = 0;
    for (query, column) in queries {
        let (Some(query), Some(column)) = (query, column) else {
            continue;
        };
        let held = Spi::get_one::<i64>(&query).unwrap_or_else(|e| {
            crate::errors::internal(format!(
                "idgen.segment_create: could not read {column}: {e}"
            ))
            .raise()
        });
        if let Some(held) = held.filter(|h| *h > top) {
            pgrx::notice!(
                "business type \"{name}\": column {column} (default segment_next('{name}')) already holds IDs up to {held}: the type starts above them"
            );
            top = held;
        }
    }
    top
}

#[pg_schema]
mod idgen {
    use pgrx::prelude::*;
    use pgrx::PgSqlErrorCode;

    use crate::errors::{invalid, out_of_range, required, IdError};
    use crate::segment::{alloc_range, forget, key_of, reset_step, unknown_type, unreadable_row};
    use pg_idgen_core::segment::check_type_settings;

    /// Registers a business type whose IDs start above `start_id`.
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
        let start_id = start_id.max(super::above_columns(name));
        let inserted = Spi::connect_mut(|c| {
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
        });
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

    /// Changes a type's step (it applies from the next range) or description. Its position
    /// (`max_id`) never moves backwards: a trigger on idgen.segments refuses that too.
    #[pg_extern(volatile, parallel_unsafe)]
    fn segment_alter(
        biz_type: Option<&str>,
        step: default!(Option<i32>, "NULL"),
        description: default!(Option<&str>, "NULL"),
    ) {
        const F: &str = "idgen.segment_alter";
        key_of(F, biz_type);
        let name = biz_type.unwrap_or_default();
        let row = Spi::connect_mut(|c| {
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
            Ok::<_, pgrx::spi::Error>(
                match (t.get::<i64>(1)?, t.get::<i32>(2)?, t.get::<i32>(3)?) {
                    (Some(m), Some(d), Some(r)) => Some((m, d, r)),
                    _ => None,
                },
            )
        })
        .unwrap_or_else(|e| unreadable_row(F, name, e).raise());
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
        let result = Spi::run_with_args(
            "UPDATE idgen.segments SET step = COALESCE($2, step), \
             description = COALESCE($3, description), updated_at = now() WHERE biz_type = $1",
            &[name.into(), step.into(), description.into()],
        );
        if let Err(e) = result {
            unreadable_row(F, name, e).raise();
        }
        if step.is_some() {
            // The next range uses the new step, not one grown from the old.
            reset_step(name);
        }
    }

    /// Removes a business type and forgets its cached ranges.
    #[pg_extern(volatile, parallel_unsafe)]
    fn segment_drop(biz_type: Option<&str>) {
        const F: &str = "idgen.segment_drop";
        key_of(F, biz_type);
        let name = biz_type.unwrap_or_default();
        let deleted = Spi::connect_mut(|c| {
            c.update(
                "DELETE FROM idgen.segments WHERE biz_type = $1 RETURNING 1",
                None,
                &[name.into()],
            )
            .map(|t| !t.is_empty())
        });
        match deleted {
            Ok(true) => forget(name),
            Ok(false) => unknown_type(name).raise(),
            Err(e) => invalid(format!("{F}: {e}")).raise(),
        }
    }

    /// A whole range for a client that hands IDs out itself: the IDs `x` with
    /// `start_id < x <= end_id` and `x % delta = remainder`, committed before it is returned.
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
    use crate::segment::cache_rows;

    /// What this database's business types hold in the shared cache.
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

extension_sql!(
    r#"
CREATE TABLE idgen.segments (
    biz_type    text PRIMARY KEY CHECK (octet_length(biz_type) BETWEEN 1 AND 63),
    max_id      bigint NOT NULL CHECK (max_id >= 0),
    step        integer NOT NULL CHECK (step > 0),
    delta       integer NOT NULL DEFAULT 1 CHECK (delta > 0),
    remainder   integer NOT NULL DEFAULT 0 CHECK (remainder >= 0 AND remainder < delta),
    version     bigint NOT NULL DEFAULT 0,
    description text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (step >= delta)
);
COMMENT ON TABLE idgen.segments IS 'Segment mode (Tinyid/Leaf, seed 002): per business type, the highest ID handed out in ranges (max_id), the range size (step), and the split across databases (IDs are = remainder mod delta).';

-- max_id only moves forward: moving it back would hand out IDs again.
CREATE FUNCTION idgen_internal.segments_guard() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    IF NEW.max_id < OLD.max_id THEN
        RAISE EXCEPTION 'max_id of business type "%" cannot move backwards (from % to %)', OLD.biz_type, OLD.max_id, NEW.max_id
            USING ERRCODE = '22023',
                  HINT = 'IDs up to max_id may have been handed out; to start over, create a new business type.';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER segments_max_id_forward BEFORE UPDATE OF max_id ON idgen.segments
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.segments_guard();

-- pg_dump keeps the rows, so IDs after a restore continue above what was handed out.
SELECT pg_catalog.pg_extension_config_dump('idgen.segments', '');

-- A type's IDs are never handed out again, not even after it is dropped (or renamed, or the
-- table truncated) and created again under the same name: the highest ID it reached stays here,
-- and a type created under that name goes on above it.
CREATE TABLE idgen.segments_retired (
    biz_type   text PRIMARY KEY,
    max_id     bigint NOT NULL,
    retired_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE idgen.segments_retired IS 'Business types dropped (or renamed away) from idgen.segments, with the highest ID each had reached: a type created again under the name goes on above it. Deleting a row here allows that type''s IDs to be handed out again.';
SELECT pg_catalog.pg_extension_config_dump('idgen.segments_retired', '');

CREATE FUNCTION idgen_internal.segments_retire() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        INSERT INTO idgen.segments_retired AS r (biz_type, max_id)
        SELECT s.biz_type, s.max_id FROM idgen.segments s
        ON CONFLICT (biz_type) DO UPDATE SET max_id = greatest(r.max_id, excluded.max_id), retired_at = now();
    ELSIF TG_OP = 'DELETE' OR NEW.biz_type IS DISTINCT FROM OLD.biz_type THEN
        INSERT INTO idgen.segments_retired AS r (biz_type, max_id) VALUES (OLD.biz_type, OLD.max_id)
        ON CONFLICT (biz_type) DO UPDATE SET max_id = greatest(r.max_id, excluded.max_id), retired_at = now();
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER segments_retire AFTER DELETE OR UPDATE OF biz_type ON idgen.segments
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.segments_retire();
CREATE TRIGGER segments_retire_all BEFORE TRUNCATE ON idgen.segments
    FOR EACH STATEMENT EXECUTE FUNCTION idgen_internal.segments_retire();

CREATE FUNCTION idgen_internal.segments_resume() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
    m bigint;
BEGIN
    -- An upsert, not a plain read: it waits for a concurrent drop of the name to commit and then
    -- sees what that drop retired (READ COMMITTED), or fails with 40001 where the transaction's
    -- snapshot cannot see it (REPEATABLE READ, SERIALIZABLE). A plain read here ran before the
    -- INSERT waited for the drop, and the type started again below IDs it had handed out.
    INSERT INTO idgen.segments_retired AS r (biz_type, max_id) VALUES (NEW.biz_type, -1)
        ON CONFLICT (biz_type) DO UPDATE SET max_id = r.max_id
        RETURNING r.max_id INTO m;
    IF m = -1 THEN
        -- Nothing retired under this name: the row was this upsert's own.
        DELETE FROM idgen.segments_retired r WHERE r.biz_type = NEW.biz_type;
        RETURN NEW;
    END IF;
    IF m > NEW.max_id AND NOT EXISTS (SELECT 1 FROM idgen.segments s WHERE s.biz_type = NEW.biz_type) THEN
        RAISE NOTICE 'business type "%" existed before and reached ID %: it goes on above that ID, not above %',
                NEW.biz_type, m, NEW.max_id
            USING DETAIL = 'IDs of a dropped type are never handed out again (idgen.segments_retired).';
        NEW.max_id := m;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER segments_resume BEFORE INSERT OR UPDATE OF biz_type ON idgen.segments
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.segments_resume();

CREATE VIEW idgen.segment_status AS
SELECT s.biz_type, s.max_id, s.step AS configured_step, s.delta, s.remainder,
       c.biz_type IS NOT NULL AS cached,
       c.current_step, c.current_start, c.current_end, c.current_next, c.next_start, c.next_end,
       COALESCE(c.ids_left, 0) AS ids_left, COALESCE(c.refill, 'idle') AS refill,
       COALESCE(c.refills_ahead, 0) AS refills_ahead, COALESCE(c.refills_waited, 0) AS refills_waited,
       COALESCE(c.ids_issued, 0) AS ids_issued, c.last_refill_at, s.description
FROM idgen.segments s LEFT JOIN idgen_internal.segment_cache() c ON c.biz_type = s.biz_type
ORDER BY s.biz_type;
COMMENT ON VIEW idgen.segment_status IS 'Per business type: its row in idgen.segments and what the shared cache holds (current and next range, IDs left, step in use, refills done ahead of need and refills a caller waited for).';

-- After a point-in-time recovery (or a restore of an older backup), ranges committed after the
-- recovery point are gone from idgen.segments although their IDs may be out there: one command
-- moves every type (or one) past them by a margin the operator chooses.
CREATE FUNCTION idgen.segment_advance(margin bigint, biz_type text DEFAULT NULL)
RETURNS TABLE (business_type text, retired boolean, old_max_id bigint, new_max_id bigint)
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
    one_type text := biz_type;
    top bigint;
BEGIN
    IF margin IS NULL THEN
        RAISE EXCEPTION 'idgen.segment_advance: margin must not be NULL' USING ERRCODE = '22004',
            HINT = 'Give the number of IDs the types may have handed out after the recovery point, with room to spare.';
    END IF;
    IF margin <= 0 THEN
        RAISE EXCEPTION 'idgen.segment_advance: margin is %; it must be greater than 0', margin USING ERRCODE = '22023';
    END IF;
    IF one_type IS NOT NULL AND NOT EXISTS (SELECT 1 FROM idgen.segments s WHERE s.biz_type = one_type) THEN
        RAISE EXCEPTION 'business type "%" does not exist', one_type USING ERRCODE = '42704';
    END IF;
    SELECT max(m) INTO top FROM (
        SELECT s.max_id FROM idgen.segments s WHERE one_type IS NULL OR s.biz_type = one_type
        UNION ALL
        SELECT r.max_id FROM idgen.segments_retired r WHERE one_type IS NULL) x(m);
    IF top > 9223372036854775807 - margin THEN
        RAISE EXCEPTION 'idgen.segment_advance: a type at % cannot move % further', top, margin
            USING ERRCODE = '22003', HINT = 'Choose a smaller margin.';
    END IF;
    RETURN QUERY
    WITH moved AS (
        UPDATE idgen.segments s SET max_id = s.max_id + margin, version = s.version + 1, updated_at = now()
         WHERE one_type IS NULL OR s.biz_type = one_type
        RETURNING s.biz_type, false, s.max_id - margin, s.max_id
    ), moved_retired AS (
        UPDATE idgen.segments_retired r SET max_id = r.max_id + margin
         WHERE one_type IS NULL
        RETURNING r.biz_type, true, r.max_id - margin, r.max_id
    )
    SELECT * FROM moved UNION ALL SELECT * FROM moved_retired ORDER BY 2, 1;
END $$;
"#,
    name = "segments_table",
    requires = [idgen_internal::segment_cache],
);

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    fn one<T: IntoDatum + FromDatum>(sql: &str) -> Option<T> {
        Spi::get_one::<T>(sql).unwrap()
    }

    #[pg_test]
    fn create_fills_the_tinyid_row() {
        Spi::run("SELECT idgen.segment_create('invoice', 500, 2000, 4, 3, 'invoices')").unwrap();
        let row = Spi::get_three::<i64, i32, i64>(
            "SELECT max_id, step, version FROM idgen.segments WHERE biz_type = 'invoice'",
        )
        .unwrap();
        assert_eq!(row, (Some(500), Some(2000), Some(0)));
        assert_eq!(
            one::<String>("SELECT description FROM idgen.segments WHERE biz_type = 'invoice'"),
            Some("invoices".into())
        );
        // Not in the cache until used; the view still lists it.
        assert_eq!(
            one::<bool>("SELECT cached FROM idgen.segment_status WHERE biz_type = 'invoice'"),
            Some(false)
        );
    }

    #[pg_test(error = "business type \"invoice\" already exists")]
    fn a_type_is_created_once() {
        Spi::run("SELECT idgen.segment_create('invoice')").unwrap();
        Spi::run("SELECT idgen.segment_create('invoice')").unwrap();
    }

    #[pg_test]
    fn alter_changes_step_and_text_but_not_the_position() {
        Spi::run("SELECT idgen.segment_create('t', 42)").unwrap();
        Spi::run("SELECT idgen.segment_alter('t', step => 5000)").unwrap();
        Spi::run("SELECT idgen.segment_alter('t', description => 'text')").unwrap();
        let row = Spi::get_three::<i64, i32, String>(
            "SELECT max_id, step, description FROM idgen.segments WHERE biz_type = 't'",
        )
        .unwrap();
        assert_eq!(row, (Some(42), Some(5000), Some("text".into())));
    }

    #[pg_test(
        error = "idgen.segment_alter: step is 2 and delta is 3; a step below delta can make a range with no ID in it"
    )]
    fn alter_keeps_every_range_non_empty() {
        Spi::run("SELECT idgen.segment_create('t', step => 9, delta => 3)").unwrap();
        Spi::run("SELECT idgen.segment_alter('t', step => 2)").unwrap();
    }

    #[pg_test(error = "max_id of business type \"t\" cannot move backwards (from 150 to 149)")]
    fn max_id_never_moves_backwards() {
        Spi::run("SELECT idgen.segment_create('t', 100)").unwrap();
        Spi::run("UPDATE idgen.segments SET max_id = 150 WHERE biz_type = 't'").unwrap();
        Spi::run("UPDATE idgen.segments SET max_id = 150, step = 7 WHERE biz_type = 't'").unwrap();
        Spi::run("UPDATE idgen.segments SET max_id = 149 WHERE biz_type = 't'").unwrap();
    }

    #[pg_test]
    fn drop_removes_the_row() {
        Spi::run("SELECT idgen.segment_create('gone')").unwrap();
        Spi::run("SELECT idgen.segment_drop('gone')").unwrap();
        assert_eq!(
            one::<i64>("SELECT count(*) FROM idgen.segments WHERE biz_type = 'gone'"),
            Some(0)
        );
    }

    fn max_id_of(name: &str) -> Option<i64> {
        Spi::get_one_with_args::<i64>(
            "SELECT max_id FROM idgen.segments WHERE biz_type = $1",
            &[name.into()],
        )
        .unwrap()
    }

    #[pg_test]
    fn a_dropped_type_created_again_goes_on_above_its_old_ids() {
        Spi::run("SELECT idgen.segment_create('again', 500)").unwrap();
        Spi::run("UPDATE idgen.segments SET max_id = 700 WHERE biz_type = 'again'").unwrap();
        Spi::run("SELECT idgen.segment_drop('again')").unwrap();
        assert_eq!(
            one::<i64>("SELECT max_id FROM idgen.segments_retired WHERE biz_type = 'again'"),
            Some(700)
        );
        Spi::run("SELECT idgen.segment_create('again')").unwrap();
        assert_eq!(max_id_of("again"), Some(700));
        // Created again with a start above the old IDs: that start is kept as given.
        Spi::run("DELETE FROM idgen.segments WHERE biz_type = 'again'").unwrap();
        Spi::run("SELECT idgen.segment_create('again', 9000)").unwrap();
        assert_eq!(max_id_of("again"), Some(9000));
        // An administrator who deletes the retired row allows the old IDs again, knowingly.
        Spi::run("DELETE FROM idgen.segments WHERE biz_type = 'again'").unwrap();
        Spi::run("DELETE FROM idgen.segments_retired WHERE biz_type = 'again'").unwrap();
        Spi::run("SELECT idgen.segment_create('again')").unwrap();
        assert_eq!(max_id_of("again"), Some(0));
    }

    #[pg_test]
    fn renamed_and_truncated_types_are_retired_too() {
        Spi::run("SELECT idgen.segment_create('old_name', 300)").unwrap();
        Spi::run("SELECT idgen.segment_create('other', 40)").unwrap();
        Spi::run("UPDATE idgen.segments SET biz_type = 'new_name' WHERE biz_type = 'old_name'")
            .unwrap();
        Spi::run("SELECT idgen.segment_create('old_name')").unwrap();
        assert_eq!(max_id_of("old_name"), Some(300));
        assert_eq!(max_id_of("new_name"), Some(300));
        Spi::run("TRUNCATE idgen.segments").unwrap();
        Spi::run("SELECT idgen.segment_create('other')").unwrap();
        Spi::run("SELECT idgen.segment_create('new_name', 5)").unwrap();
        assert_eq!(max_id_of("other"), Some(40));
        assert_eq!(max_id_of("new_name"), Some(300));
        // Renaming onto a retired name also goes on above that name's old IDs.
        Spi::run("INSERT INTO idgen.segments_retired (biz_type, max_id) VALUES ('target', 9999)")
            .unwrap();
        Spi::run("UPDATE idgen.segments SET biz_type = 'target' WHERE biz_type = 'other'").unwrap();
        assert_eq!(max_id_of("target"), Some(9999));
    }

    #[pg_test(error = "business type \"dup\" already exists")]
    fn creating_an_existing_type_still_fails_after_a_drop() {
        Spi::run("SELECT idgen.segment_create('dup', 10)").unwrap();
        Spi::run("SELECT idgen.segment_drop('dup')").unwrap();
        Spi::run("SELECT idgen.segment_create('dup')").unwrap();
        Spi::run("SELECT idgen.segment_create('dup')").unwrap();
    }

    // Test transactions never commit, and ranges are only ever taken from committed rows: the
    // allocator, in its own transaction, does not see this type.
    #[pg_test(error = "business type \"uncommitted\" does not exist")]
    fn a_type_is_usable_once_committed() {
        Spi::run("SELECT idgen.segment_create('uncommitted')").unwrap();
        Spi::run("SELECT segment_next('uncommitted')").unwrap();
    }

    #[pg_test(error = "segment_next(biz_type): biz_type must be 1 to 63 bytes long, not 64")]
    fn long_names_are_refused() {
        Spi::run("SELECT segment_next(repeat('x', 64))").unwrap();
    }

    #[pg_test(error = "idgen.segment_alloc: biz_type must not be NULL")]
    fn alloc_refuses_null() {
        Spi::run("SELECT * FROM idgen.segment_alloc(NULL)").unwrap();
    }

    #[pg_test]
    fn names_are_data_never_sql() {
        let name = "x'); DROP TABLE idgen.segments; --";
        Spi::run_with_args("SELECT idgen.segment_create($1)", &[name.into()]).unwrap();
        assert_eq!(
            Spi::get_one_with_args::<i64>(
                "SELECT count(*) FROM idgen.segments WHERE biz_type = $1",
                &[name.into()]
            )
            .unwrap(),
            Some(1)
        );
    }
}
