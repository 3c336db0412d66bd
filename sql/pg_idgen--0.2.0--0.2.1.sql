-- pg_idgen 0.2.0 -> 0.2.1, written by hand (a released upgrade script is never edited; see
-- sql/released.sha256). 0.2.1 fixes idgen.worker_acquire(), which under load could tell an
-- acquirer that no worker id was free while ids never leased remained: it gave up after 64 ids
-- that others had claimed or were claiming. Now it skips up to 4096 ids being claimed, looks for
-- the highest leased id again when one it tries was taken meanwhile, and tries again (up to 8
-- times, a few ms apart) while the range still has an id never leased.
-- It also keeps the highest ID of a dropped business type (idgen.segments_retired), so that a
-- type created again under its name goes on above it instead of handing its IDs out again.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.2.1'" to load this file. \quit

CREATE OR REPLACE FUNCTION idgen.worker_acquire(
    code text, ttl interval DEFAULT '60 seconds', min_id integer DEFAULT NULL, max_id integer DEFAULT NULL,
    OUT worker_id integer, OUT lease bigint, OUT expires_at timestamptz, OUT start_after timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    lo integer;
    hi integer;
    grace interval := current_setting('idgen.worker_lease_grace')::interval;
    r idgen.workers;
    gap integer;
    pass integer;
    top integer;
    starts integer[];
    c integer;
    tries integer;
    skipped integer;
    attempt integer;
    n_held bigint;
    n_grace bigint;
    n_rows bigint;
    soonest timestamptz;
BEGIN
    hi := idgen.worker_lease_precheck('worker_acquire');
    IF code IS NULL OR length(code) NOT BETWEEN 1 AND 255 THEN
        RAISE EXCEPTION 'idgen.worker_acquire: code must be 1 to 255 characters'
            USING ERRCODE = '22023', HINT = 'Use a name unique to the holder, e.g. ''10.0.0.7:8080#a4:5e:60:b2:1c:0f'' (ip:port#mac, seed 001).';
    END IF;
    IF ttl IS NULL OR ttl < interval '1 second' OR ttl > interval '7 days' THEN
        RAISE EXCEPTION 'idgen.worker_acquire: ttl is %, it must be between 1 second and 7 days', coalesce(ttl::text, 'NULL')
            USING ERRCODE = '22023', HINT = 'Renew the lease with idgen.worker_heartbeat() several times per ttl.';
    END IF;
    lo := coalesce(min_id, 0);
    hi := coalesce(max_id, hi);
    IF lo < 0 OR hi < lo THEN
        RAISE EXCEPTION 'idgen.worker_acquire: min_id % and max_id % are not a range of worker ids', lo, hi
            USING ERRCODE = '22023', HINT = 'Give 0 <= min_id <= max_id, within the worker bits of the holders'' layout.';
    END IF;
    IF current_setting('synchronous_commit') = 'off' THEN
        -- A lease a crash could forget might be handed out twice.
        PERFORM set_config('synchronous_commit', 'local', true);
    END IF;

    -- 1. The id this code held before, if it is free (seed 001, PriorityEqualCodeWorkId).
    SELECT * INTO r FROM idgen.workers w
     WHERE w.code = code AND w.worker_id BETWEEN lo AND hi
       AND idgen.worker_free_at(w) <= clock_timestamp()
     ORDER BY w.worker_id LIMIT 1 FOR UPDATE SKIP LOCKED;
    -- 2. and 3., tried again while the range has an id never leased that others were claiming
    -- as we looked (a loser of a race must not be told "none is free" while one is).
    <<attempts>>
    FOR attempt IN 1..8 LOOP
        EXIT attempts WHEN r.worker_id IS NOT NULL;
        IF attempt > 1 THEN
            PERFORM pg_sleep(0.001 * attempt);
        END IF;
        tries := 0;
        skipped := 0;
        -- 2. An id never leased. First the cheap places: lo, and above the highest leased id
        -- (index lookups). Only when those are taken, the gaps between leased ids (a scan of the
        -- range, which then holds at most hi - lo + 1 rows).
        <<passes>>
        FOR pass IN 1..2 LOOP
            IF pass = 1 THEN
                SELECT max(w.worker_id) INTO top FROM idgen.workers w WHERE w.worker_id BETWEEN lo AND hi;
                starts := ARRAY[lo] || CASE WHEN top < hi THEN ARRAY[top + 1] ELSE '{}'::integer[] END;
            ELSE
                starts := ARRAY(
                    SELECT w.worker_id + 1 FROM idgen.workers w
                     WHERE w.worker_id >= lo AND w.worker_id < hi
                       AND NOT EXISTS (SELECT 1 FROM idgen.workers x WHERE x.worker_id = w.worker_id + 1)
                     ORDER BY 1 LIMIT 16);
            END IF;
            FOREACH gap IN ARRAY starts LOOP
                c := gap;
                WHILE c <= hi AND tries < 64 AND skipped < 4096 LOOP
                    -- Another acquirer claiming c holds this lock until it commits: skip, as SKIP
                    -- LOCKED does for rows (cheap, and bounded by the number of acquirers at
                    -- once). ON CONFLICT finds ids committed since we looked.
                    IF NOT pg_try_advisory_xact_lock(1768161281, c) THEN
                        skipped := skipped + 1;
                    ELSE
                        tries := tries + 1;
                        INSERT INTO idgen.workers AS w (worker_id, code, host, pid, lease, ttl,
                                                        acquired_at, heartbeat_at, expires_at)
                        VALUES (c, code, coalesce(host(inet_client_addr()), 'local'), pg_backend_pid(), 1, ttl,
                                clock_timestamp(), clock_timestamp(), clock_timestamp() + ttl)
                        ON CONFLICT ON CONSTRAINT workers_pkey DO NOTHING
                        RETURNING w.worker_id, w.lease, w.expires_at INTO worker_id, lease, expires_at;
                        IF FOUND THEN
                            start_after := NULL;
                            RETURN;
                        END IF;
                        -- c is taken; the ids right above it probably are too: go to the next start.
                        EXIT WHEN pass = 1 AND gap = lo;
                        IF pass = 1 THEN
                            -- Others committed ids above the top we saw: look for the top again
                            -- rather than walk behind them one id at a time.
                            SELECT max(w.worker_id) INTO top FROM idgen.workers w WHERE w.worker_id BETWEEN lo AND hi;
                            c := greatest(c, top);
                        END IF;
                    END IF;
                    c := c + 1;
                END LOOP;
                EXIT passes WHEN tries >= 64 OR skipped >= 4096;
            END LOOP;
        END LOOP;
        -- 3. The id that has been free the longest.
        SELECT * INTO r FROM idgen.workers w
         WHERE w.worker_id BETWEEN lo AND hi
           AND idgen.worker_free_at(w) <= clock_timestamp()
         ORDER BY idgen.worker_free_at(w), w.worker_id LIMIT 1 FOR UPDATE SKIP LOCKED;
        -- Nothing free: true when every id of the range has a row; otherwise another acquirer
        -- holds the advisory lock of each id not yet leased, and may yet roll back.
        EXIT attempts WHEN r.worker_id IS NULL
            AND (SELECT count(*) FROM idgen.workers w WHERE w.worker_id BETWEEN lo AND hi) > hi - lo;
    END LOOP;
    IF r.worker_id IS NULL THEN
        SELECT count(*) FILTER (WHERE w.released_at IS NULL AND w.expires_at > clock_timestamp()),
               count(*) FILTER (WHERE w.released_at IS NULL AND w.expires_at <= clock_timestamp()),
               min(idgen.worker_free_at(w)) FILTER (WHERE w.released_at IS NULL),
               count(*)
          INTO n_held, n_grace, soonest, n_rows
          FROM idgen.workers w WHERE w.worker_id BETWEEN lo AND hi;
        RAISE EXCEPTION 'no worker id is free between % and %: % held, % expired and waiting out the grace period',
                lo, hi, n_held, n_grace
            USING ERRCODE = '53000',
                  DETAIL = format('An expired lease can be taken again %s s after it expires (idgen.worker_lease_grace). The soonest is free at %s.',
                                  extract(epoch FROM grace)::float8, coalesce(soonest::text, 'no time yet'))
                           || CASE WHEN n_rows <= hi - lo THEN format(' The other %s ids of the range were being claimed by other acquirers, which may yet roll back: try again.', hi - lo + 1 - n_rows) ELSE '' END,
                  HINT = 'Release ids that are no longer used (idgen.worker_release), let leases expire, or widen min_id/max_id.';
    END IF;
    start_after := idgen.worker_start_after(r);
    UPDATE idgen.workers w
       SET code = code, host = coalesce(host(inet_client_addr()), 'local'), pid = pg_backend_pid(),
           lease = w.lease + 1, ttl = ttl, acquired_at = clock_timestamp(), heartbeat_at = clock_timestamp(),
           expires_at = clock_timestamp() + ttl, released_at = NULL, last_ts = start_after
     WHERE w.worker_id = r.worker_id
    RETURNING w.worker_id, w.lease, w.expires_at INTO worker_id, lease, expires_at;
END
$$;

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

CREATE FUNCTION idgen.segments_retire() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$
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
    FOR EACH ROW EXECUTE FUNCTION idgen.segments_retire();
CREATE TRIGGER segments_retire_all BEFORE TRUNCATE ON idgen.segments
    FOR EACH STATEMENT EXECUTE FUNCTION idgen.segments_retire();

CREATE FUNCTION idgen.segments_resume() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
    m bigint;
BEGIN
    SELECT r.max_id INTO m FROM idgen.segments_retired r WHERE r.biz_type = NEW.biz_type;
    IF m > NEW.max_id AND NOT EXISTS (SELECT 1 FROM idgen.segments s WHERE s.biz_type = NEW.biz_type) THEN
        RAISE NOTICE 'business type "%" existed before and reached ID %: it goes on above that ID, not above %',
                NEW.biz_type, m, NEW.max_id
            USING DETAIL = 'IDs of a dropped type are never handed out again (idgen.segments_retired).';
        NEW.max_id := m;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER segments_resume BEFORE INSERT OR UPDATE OF biz_type ON idgen.segments
    FOR EACH ROW EXECUTE FUNCTION idgen.segments_resume();

COMMENT ON FUNCTION idgen.segment_drop(text) IS
  'Removes a business type and forgets its cached ranges. Its highest ID stays in idgen.segments_retired: created again, the type goes on above it.';
COMMENT ON FUNCTION idgen.segments_retire() IS
  'Trigger function: remembers the highest ID of a business type deleted, renamed or truncated away from idgen.segments, in idgen.segments_retired.';
COMMENT ON FUNCTION idgen.segments_resume() IS
  'Trigger function: a business type created (or renamed) under the name of a dropped one starts above the highest ID that one reached.';

REVOKE ALL ON idgen.segments_retired FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION idgen.segments_retire(), idgen.segments_resume() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.segments_retire(), idgen.segments_resume() TO idgen_admin;
GRANT SELECT, INSERT, UPDATE, DELETE ON idgen.segments_retired TO idgen_admin;
