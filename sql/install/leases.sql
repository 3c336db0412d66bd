-- Worker-id leases on the coordinator: the table idgen.workers, idgen.worker_acquire / heartbeat /
-- release, and the view idgen.worker_leases. Part of the install script (src/lease/sql.rs loads
-- it); released versions are frozen in sql/released, so a change here needs a new version.

CREATE TABLE idgen.workers (
    worker_id    integer PRIMARY KEY CHECK (worker_id >= 0),
    code         text NOT NULL CHECK (length(code) BETWEEN 1 AND 255),
    host         text,
    pid          integer,
    lease        bigint NOT NULL DEFAULT 1 CHECK (lease > 0),
    ttl          interval NOT NULL CHECK (ttl > interval '0'),
    acquired_at  timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    released_at  timestamptz,
    last_ts      timestamptz
);
CREATE INDEX workers_code ON idgen.workers (code);
COMMENT ON TABLE idgen.workers IS 'Worker-id leases (raindrop''s worker table): one row per worker id ever leased, with its last holder (code), the lease number (a fencing token: larger for each later holder, by a random step, so that only its holder knows it), expiry, last heartbeat, and last_ts, the time the next holder starts after.';
SELECT pg_catalog.pg_extension_config_dump('idgen.workers', '');

-- When a lease may be handed out again. A released one at once. An expired one once its holder
-- has surely stopped: its own deadline is its last renewal + ttl (even if expires_at was moved
-- earlier by hand), and the grace period covers the clock difference between holder and here.
CREATE FUNCTION idgen_internal.worker_free_at(w idgen.workers) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN w.released_at IS NOT NULL THEN w.released_at
        ELSE greatest(w.expires_at, w.heartbeat_at + w.ttl)
             + pg_catalog.current_setting('idgen.worker_lease_grace')::interval
    END
$$;

-- When the next holder of a lease may start making IDs: after every ID of its previous holders.
-- A released lease: after the holder's last reported time, or the release. An expired one: the
-- holder may have gone on for a ttl after its last report, with its clock off by the grace period.
CREATE FUNCTION idgen_internal.worker_start_after(w idgen.workers) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN w.released_at IS NOT NULL THEN greatest(w.last_ts, w.released_at)
        ELSE greatest(w.last_ts + w.ttl + pg_catalog.current_setting('idgen.worker_lease_grace')::interval,
                      idgen_internal.worker_free_at(w))
    END
$$;

CREATE FUNCTION idgen.worker_acquire(
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
    -- bigint: a range may end at the largest integer, and c walks one past it.
    c bigint;
    tries integer;
    skipped integer;
    attempt integer;
    -- The worker id this server makes its own Snowflake IDs with, when an operator set it: a
    -- coordinator that also makes IDs never leases its own id to another holder.
    own integer := CASE WHEN current_setting('idgen.worker_id_source') = 'setting'
                         AND (SELECT s.source FROM pg_settings s WHERE s.name = 'idgen.worker_id') <> 'default'
                        THEN current_setting('idgen.worker_id')::integer END;
    -- The worker id of its IDs at a past time (snowflake_at), when it backfills: no live holder
    -- may ever make IDs with it.
    backfill integer := nullif(coalesce(current_setting('idgen.backfill_worker_id', true), '-1')::integer, -1);
    -- The ids this server keeps for itself, never leased.
    kept integer[] := array_remove(ARRAY[own, backfill], NULL);
    span bigint;
    n_held bigint;
    n_grace bigint;
    n_rows bigint;
    soonest timestamptz;
    -- Lease numbers grow by a random step of up to 2^40 (from the strong random source behind
    -- gen_random_uuid()): they stay a fencing token, later holders have larger ones, and only
    -- the holder knows its own, which is what heartbeat and release check.
    step bigint := ('x' || left(replace(gen_random_uuid()::text, '-', ''), 10))::bit(40)::bigint + 1;
BEGIN
    hi := idgen_internal.worker_lease_precheck('worker_acquire');
    IF code IS NULL OR length(code) NOT BETWEEN 1 AND 255 THEN
        RAISE EXCEPTION 'idgen.worker_acquire: code must be 1 to 255 characters'
            USING ERRCODE = '22023', HINT = 'Use a name unique to the holder, e.g. ''10.0.0.7:8080#a4:5e:60:b2:1c:0f'' (ip:port#mac, as raindrop does).';
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
    span := hi::bigint - lo + 1 - (SELECT count(DISTINCT k) FROM unnest(kept) k WHERE k BETWEEN lo AND hi);
    IF span = 0 AND own BETWEEN lo AND hi THEN
        RAISE EXCEPTION 'no worker id is free between % and %: % is this server''s own worker id', lo, hi, own
            USING ERRCODE = '53000',
                  DETAIL = 'This server makes Snowflake IDs with idgen.worker_id = ' || own || ', so it never leases that id to another holder.',
                  HINT = 'Widen min_id/max_id, or give this server a worker id outside the range its holders lease in.';
    ELSIF span = 0 THEN
        RAISE EXCEPTION 'no worker id is free between % and %: % is this server''s backfill worker id', lo, hi, backfill
            USING ERRCODE = '53000',
                  DETAIL = 'This server makes IDs at a past time with idgen.backfill_worker_id = ' || backfill || ', so it never leases that id to another holder.',
                  HINT = 'Widen min_id/max_id, or give this server a backfill worker id outside the range its holders lease in.';
    END IF;
    IF current_setting('synchronous_commit') = 'off' THEN
        -- A lease a crash could forget might be handed out twice.
        PERFORM set_config('synchronous_commit', 'local', true);
    END IF;

    -- 1. The id this code held before, if it is free (raindrop's PriorityEqualCodeWorkId).
    SELECT * INTO r FROM idgen.workers w
     WHERE w.code = code AND w.worker_id BETWEEN lo AND hi AND w.worker_id <> ALL (kept)
       AND idgen_internal.worker_free_at(w) <= clock_timestamp()
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
                    IF c = ANY (kept) THEN
                        c := c + 1;
                        CONTINUE;
                    END IF;
                    -- Another acquirer claiming c holds this lock until it commits: skip, as SKIP
                    -- LOCKED does for rows (cheap, and bounded by the number of acquirers at
                    -- once). ON CONFLICT finds ids committed since we looked.
                    IF NOT pg_try_advisory_xact_lock(1768161281, c::integer) THEN
                        skipped := skipped + 1;
                    ELSE
                        tries := tries + 1;
                        INSERT INTO idgen.workers AS w (worker_id, code, host, pid, lease, ttl,
                                                        acquired_at, heartbeat_at, expires_at)
                        VALUES (c, code, coalesce(host(inet_client_addr()), 'local'), pg_backend_pid(), step, ttl,
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
                            c := greatest(c, top::bigint);
                        END IF;
                    END IF;
                    c := c + 1;
                END LOOP;
                EXIT passes WHEN tries >= 64 OR skipped >= 4096;
            END LOOP;
        END LOOP;
        -- 3. The id that has been free the longest.
        SELECT * INTO r FROM idgen.workers w
         WHERE w.worker_id BETWEEN lo AND hi AND w.worker_id <> ALL (kept)
           AND idgen_internal.worker_free_at(w) <= clock_timestamp()
         ORDER BY idgen_internal.worker_free_at(w), w.worker_id LIMIT 1 FOR UPDATE SKIP LOCKED;
        -- Nothing free: true when every id of the range has a row; otherwise another acquirer
        -- holds the advisory lock of each id not yet leased, and may yet roll back.
        EXIT attempts WHEN r.worker_id IS NULL
            AND (SELECT count(*) FROM idgen.workers w
                  WHERE w.worker_id BETWEEN lo AND hi AND w.worker_id <> ALL (kept)) >= span;
    END LOOP;
    IF r.worker_id IS NULL THEN
        SELECT count(*) FILTER (WHERE w.released_at IS NULL AND w.expires_at > clock_timestamp()),
               count(*) FILTER (WHERE w.released_at IS NULL AND w.expires_at <= clock_timestamp()),
               min(idgen_internal.worker_free_at(w)) FILTER (WHERE w.released_at IS NULL),
               count(*)
          INTO n_held, n_grace, soonest, n_rows
          FROM idgen.workers w WHERE w.worker_id BETWEEN lo AND hi AND w.worker_id <> ALL (kept);
        RAISE EXCEPTION 'no worker id is free between % and %: % held, % expired and waiting out the grace period',
                lo, hi, n_held, n_grace
            USING ERRCODE = '53000',
                  DETAIL = format('An expired lease can be taken again %s s after it expires (idgen.worker_lease_grace). The soonest is free at %s.',
                                  extract(epoch FROM grace)::float8, coalesce(soonest::text, 'no time yet'))
                           || CASE WHEN n_rows < span THEN format(' The other %s ids of the range were being claimed by other acquirers, which may yet roll back: try again.', span - n_rows) ELSE '' END
                           || CASE WHEN own BETWEEN lo AND hi THEN format(' Id %s is this server''s own worker id (idgen.worker_id), never leased.', own) ELSE '' END
                           || CASE WHEN backfill BETWEEN lo AND hi THEN format(' Id %s is this server''s backfill worker id (idgen.backfill_worker_id), never leased.', backfill) ELSE '' END,
                  HINT = 'Release ids that are no longer used (idgen.worker_release), let leases expire, or widen min_id/max_id.';
    END IF;
    IF r.lease > 9223372036854775807 - step THEN
        RAISE EXCEPTION 'worker id % has been leased too many times: its lease numbers are used up', r.worker_id
            USING ERRCODE = '22003', HINT = 'Lease another id (min_id/max_id), or retire this one.';
    END IF;
    start_after := idgen_internal.worker_start_after(r);
    UPDATE idgen.workers w
       SET code = code, host = coalesce(host(inet_client_addr()), 'local'), pid = pg_backend_pid(),
           lease = w.lease + step, ttl = ttl, acquired_at = clock_timestamp(), heartbeat_at = clock_timestamp(),
           expires_at = clock_timestamp() + ttl, released_at = NULL, last_ts = start_after
     WHERE w.worker_id = r.worker_id
    RETURNING w.worker_id, w.lease, w.expires_at INTO worker_id, lease, expires_at;
END
$$;

-- Why a holder's call on a lease fails; NULL when `r` is that holder's live lease.
CREATE FUNCTION idgen_internal.worker_lease_lost(r idgen.workers, worker_id integer, code text, lease bigint)
RETURNS text LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE
        WHEN r.worker_id IS NULL THEN format('worker id %s was never leased', worker_id)
        WHEN r.code <> code OR r.lease <> coalesce(lease, r.lease) THEN
            format('worker id %s was leased again (by another holder, or a newer lease of this code)', worker_id)
        WHEN r.released_at IS NOT NULL THEN format('the lease of worker id %s was released', worker_id)
        WHEN r.expires_at <= clock_timestamp() THEN format('the lease of worker id %s expired', worker_id)
    END
$$;

CREATE FUNCTION idgen.worker_heartbeat(worker_id integer, code text, last_ts timestamptz DEFAULT NULL, lease bigint DEFAULT NULL)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    r idgen.workers;
    lost text;
    expiry timestamptz;
BEGIN
    PERFORM idgen_internal.worker_lease_precheck('worker_heartbeat');
    IF worker_id IS NULL OR code IS NULL THEN
        RAISE EXCEPTION 'idgen.worker_heartbeat: worker_id and code must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF lease IS NULL THEN
        -- The lease number is the proof of holding the lease; the code is only a name, which
        -- other roles can read (and guess). Calls without it renewed or ended other holders'
        -- live leases before 0.2.5.
        RAISE EXCEPTION 'idgen.worker_heartbeat: the lease number is required'
            USING ERRCODE = '42501',
                  DETAIL = 'A lease is renewed only with the lease number idgen.worker_acquire() returned to its holder: the code alone is no proof of holding it.',
                  HINT = 'Pass lease => the lease number from idgen.worker_acquire(). An administrator (idgen_admin) reads it in idgen.worker_leases.';
    END IF;
    IF last_ts > clock_timestamp() + interval '1 hour' THEN
        RAISE EXCEPTION 'idgen.worker_heartbeat: last_ts % is more than an hour ahead of this server''s clock', last_ts
            USING ERRCODE = '22023', HINT = 'Report the time of the last ID made, from a clock kept by NTP.';
    END IF;
    IF current_setting('synchronous_commit') = 'off' THEN
        PERFORM set_config('synchronous_commit', 'local', true);
    END IF;
    SELECT * INTO r FROM idgen.workers w WHERE w.worker_id = worker_id FOR UPDATE;
    lost := idgen_internal.worker_lease_lost(r, worker_id, code, lease);
    IF lost IS NOT NULL THEN
        -- CONSTRAINT names the condition for programs (the lease keeper of a node of any later
        -- version), so that none of them has to read the message, whose wording may change.
        RAISE EXCEPTION 'lease lost: %', lost
            USING ERRCODE = '55000', CONSTRAINT = 'idgen_lease_lost',
                  -- Never another holder's code or lease number: they are what proves a holder.
                  DETAIL = format('Holder "%s" may no longer make IDs with worker id %s.', code, worker_id)
                           || CASE WHEN r.code = code AND r.lease = coalesce(lease, r.lease)
                                   THEN format(' Its lease expired at %s%s.', r.expires_at,
                                               coalesce(', released at ' || r.released_at::text, ''))
                                   ELSE '' END,
                  HINT = 'Stop making IDs with this worker id now, then lease one again with idgen.worker_acquire() and start after its start_after.';
    END IF;
    UPDATE idgen.workers w
       SET heartbeat_at = clock_timestamp(), expires_at = clock_timestamp() + w.ttl,
           last_ts = greatest(w.last_ts, last_ts), pid = pg_backend_pid(),
           host = coalesce(host(inet_client_addr()), 'local')
     WHERE w.worker_id = worker_id
    RETURNING w.expires_at INTO expiry;
    RETURN expiry;
END
$$;

CREATE FUNCTION idgen.worker_release(worker_id integer, code text, last_ts timestamptz DEFAULT NULL, lease bigint DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
    r idgen.workers;
BEGIN
    IF worker_id IS NULL OR code IS NULL THEN
        RAISE EXCEPTION 'idgen.worker_release: worker_id and code must not be NULL' USING ERRCODE = '22004';
    END IF;
    IF lease IS NULL THEN
        -- The lease number is the proof of holding the lease; the code is only a name, which
        -- other roles can read (and guess). Calls without it renewed or ended other holders'
        -- live leases before 0.2.5.
        RAISE EXCEPTION 'idgen.worker_release: the lease number is required'
            USING ERRCODE = '42501',
                  DETAIL = 'A lease is ended only with the lease number idgen.worker_acquire() returned to its holder: the code alone is no proof of holding it.',
                  HINT = 'Pass lease => the lease number from idgen.worker_acquire(). An administrator (idgen_admin) reads it in idgen.worker_leases; to take a lease away from a holder that may still be running, expire it instead (UPDATE idgen.workers SET expires_at = now()): its id is then free only after the holder has surely stopped.';
    END IF;
    SELECT * INTO r FROM idgen.workers w WHERE w.worker_id = worker_id FOR UPDATE;
    IF r.worker_id IS NULL THEN
        RAISE EXCEPTION 'idgen.worker_release: worker id % was never leased', worker_id USING ERRCODE = '42704';
    END IF;
    IF r.code <> code OR r.lease <> coalesce(lease, r.lease) THEN
        -- Never the holder's code or lease number: they are what proves a holder.
        RAISE EXCEPTION 'idgen.worker_release: worker id % is not leased by "%"%', worker_id, code,
                CASE WHEN lease IS NULL THEN '' ELSE format(' under lease %s', lease) END
            USING ERRCODE = '55000', HINT = 'Only the holder gives a lease back; an expired one becomes free by itself.';
    END IF;
    IF r.released_at IS NOT NULL THEN
        RETURN false;
    END IF;
    UPDATE idgen.workers w SET released_at = clock_timestamp(), last_ts = greatest(w.last_ts, last_ts)
     WHERE w.worker_id = worker_id;
    RETURN true;
END
$$;

CREATE VIEW idgen.worker_leases AS
SELECT w.worker_id, w.code,
       CASE WHEN w.released_at IS NOT NULL THEN 'released'
            WHEN w.expires_at > clock_timestamp() THEN 'held'
            WHEN idgen_internal.worker_free_at(w) > clock_timestamp() THEN 'grace'
            ELSE 'expired' END AS state,
       w.lease, w.host, w.pid, w.ttl, w.acquired_at, w.heartbeat_at, w.expires_at, w.released_at, w.last_ts,
       idgen_internal.worker_start_after(w) AS next_start_after
FROM idgen.workers w ORDER BY w.worker_id;
COMMENT ON VIEW idgen.worker_leases IS 'The lease of each worker id ever leased from this database: held, grace (expired, not yet reusable), expired or released, and the time its next holder starts after.';
