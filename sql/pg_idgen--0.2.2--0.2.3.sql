-- pg_idgen 0.2.2 -> 0.2.3:
-- - a business type created while a drop of the same name is still open goes on above what that
--   drop retired (segments_resume read segments_retired before the INSERT waited for the drop);
-- - idgen.segment_advance(margin): after a point-in-time recovery, moves every type past the
--   ranges committed after the recovery point.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.2.3'" to load this file. \quit

CREATE OR REPLACE FUNCTION idgen.segments_resume() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$
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

-- After a point-in-time recovery: move every type past the ranges committed after the recovery point.
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

COMMENT ON FUNCTION idgen.segment_advance(bigint, text) IS
  'Moves every business type (or one), and every retired one, margin IDs further: after a point-in-time recovery or the restore of an older backup, past the ranges committed after the recovery point, which the recovered idgen.segments no longer shows.';
REVOKE EXECUTE ON FUNCTION idgen.segment_advance(bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.segment_advance(bigint, text) TO idgen_admin;
