-- Segment mode: the tables idgen.segments and idgen.segments_retired with their triggers, the view
-- idgen.segment_status and idgen.segment_advance. Part of the install script (src/segment/sql.rs
-- loads it); released versions are frozen in sql/released, so a change here needs a new version.

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
COMMENT ON TABLE idgen.segments IS 'Segment mode (Didi Tinyid, Meituan Leaf): per business type, the highest ID handed out in ranges (max_id), the range size (step), and the split across databases (IDs are = remainder mod delta).';

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

-- A type's position moved by anyone but this database's allocator (idgen.segment_advance after a
-- point-in-time recovery, an administrator's UPDATE): ranges this node has cached may lie among IDs
-- handed out before the move, so they are forgotten (idgen_internal.segment_moved). AFTER the row
-- is updated, so its lock is held: a refill that starts now waits for the move and plans above it.
CREATE FUNCTION idgen_internal.segments_moved() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM idgen_internal.segment_moved(NEW.biz_type);
    RETURN NULL;
END $$;
CREATE TRIGGER segments_moved AFTER UPDATE OF max_id ON idgen.segments
    FOR EACH ROW WHEN (NEW.max_id IS DISTINCT FROM OLD.max_id) EXECUTE FUNCTION idgen_internal.segments_moved();

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
CREATE VIEW idgen.segment_allocators AS SELECT * FROM idgen_internal.segment_allocator_usage();
COMMENT ON VIEW idgen.segment_allocators IS 'The allocator workers of the whole cluster (one per database that uses segment mode or holds the backfill counters): how many run, how many may (32), how often a caller found every slot taken by other databases, and how often no background-worker slot was free to start one (max_worker_processes).';
COMMENT ON COLUMN idgen.segment_allocators.allocators IS 'Allocator workers running or starting in the cluster.';
COMMENT ON COLUMN idgen.segment_allocators.allocator_slots IS 'How many may run at once.';
COMMENT ON COLUMN idgen.segment_allocators.slot_waits IS 'Times since the server started that a caller found every allocator slot taken by other databases (it waits, then 53000).';
COMMENT ON COLUMN idgen.segment_allocators.start_failures IS 'Times since the server started that no background-worker slot was free to start an allocator (raise max_worker_processes).';

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
