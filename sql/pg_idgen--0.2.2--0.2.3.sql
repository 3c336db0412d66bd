-- pg_idgen 0.2.2 -> 0.2.3: a business type created while a drop of the same name is still open
-- goes on above what that drop retired (segments_resume read segments_retired before the INSERT
-- waited for the drop, and the type started again at its start_id).
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
