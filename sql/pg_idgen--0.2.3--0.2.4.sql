-- pg_idgen 0.2.3 -> 0.2.4: the functions behind the idgen views and tables move to the schema
-- idgen_internal, out of the way of \df idgen.* (issue 15.6); every column of the idgen views and
-- tables gets a comment. No behaviour changes.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.2.4'" to load this file. \quit

CREATE SCHEMA idgen_internal;
COMMENT ON SCHEMA idgen_internal IS
  'pg_idgen''s functions behind the idgen views and tables (set-returning functions, triggers, lease helpers): not for direct use.';
GRANT USAGE ON SCHEMA idgen_internal TO PUBLIC;

-- Moved with their privileges and comments; views and triggers follow them (they refer to them by
-- oid). Functions whose bodies name them are replaced below.
ALTER FUNCTION idgen.layout_catalog() SET SCHEMA idgen_internal;
ALTER FUNCTION idgen.node_status() SET SCHEMA idgen_internal;
ALTER FUNCTION idgen.worker_lease_state() SET SCHEMA idgen_internal;
ALTER FUNCTION idgen.segment_cache() SET SCHEMA idgen_internal;
ALTER FUNCTION idgen.segments_guard() SET SCHEMA idgen_internal;
ALTER FUNCTION idgen.segments_retire() SET SCHEMA idgen_internal;
ALTER FUNCTION idgen.segments_resume() SET SCHEMA idgen_internal;
ALTER FUNCTION idgen.worker_lease_precheck(text) SET SCHEMA idgen_internal;
ALTER FUNCTION idgen.worker_lease_lost(idgen.workers, integer, text, bigint) SET SCHEMA idgen_internal;
ALTER FUNCTION idgen.worker_free_at(idgen.workers) SET SCHEMA idgen_internal;
ALTER FUNCTION idgen.worker_start_after(idgen.workers) SET SCHEMA idgen_internal;
COMMENT ON FUNCTION idgen_internal.worker_lease_lost(idgen.workers, integer, text, bigint) IS
  'Why a holder''s heartbeat or release on a lease row fails, or NULL if the lease is still theirs.';
COMMENT ON FUNCTION idgen_internal.worker_lease_precheck(text) IS
  'Refuses a lease call inside a transaction block (a ROLLBACK would undo the lease while its holder uses it); returns this layout''s largest worker id.';

-- The same bodies as before, naming the functions in their new schema.
CREATE OR REPLACE FUNCTION idgen_internal.worker_start_after(w idgen.workers) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN w.released_at IS NOT NULL THEN greatest(w.last_ts, w.released_at)
        ELSE greatest(w.last_ts + w.ttl + pg_catalog.current_setting('idgen.worker_lease_grace')::interval,
                      idgen_internal.worker_free_at(w))
    END
$$;

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
    -- Lease numbers grow by a random step of up to 2^40 (from the strong random source behind
    -- gen_random_uuid()): they stay a fencing token, later holders have larger ones, and only
    -- the holder knows its own, which is what heartbeat and release check.
    step bigint := ('x' || left(replace(gen_random_uuid()::text, '-', ''), 10))::bit(40)::bigint + 1;
BEGIN
    hi := idgen_internal.worker_lease_precheck('worker_acquire');
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
                    -- Another acquirer claiming c holds this lock until it commits: skip, as SKIP
                    -- LOCKED does for rows (cheap, and bounded by the number of acquirers at
                    -- once). ON CONFLICT finds ids committed since we looked.
                    IF NOT pg_try_advisory_xact_lock(1768161281, c) THEN
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
           AND idgen_internal.worker_free_at(w) <= clock_timestamp()
         ORDER BY idgen_internal.worker_free_at(w), w.worker_id LIMIT 1 FOR UPDATE SKIP LOCKED;
        -- Nothing free: true when every id of the range has a row; otherwise another acquirer
        -- holds the advisory lock of each id not yet leased, and may yet roll back.
        EXIT attempts WHEN r.worker_id IS NULL
            AND (SELECT count(*) FROM idgen.workers w WHERE w.worker_id BETWEEN lo AND hi) > hi - lo;
    END LOOP;
    IF r.worker_id IS NULL THEN
        SELECT count(*) FILTER (WHERE w.released_at IS NULL AND w.expires_at > clock_timestamp()),
               count(*) FILTER (WHERE w.released_at IS NULL AND w.expires_at <= clock_timestamp()),
               min(idgen_internal.worker_free_at(w)) FILTER (WHERE w.released_at IS NULL),
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

CREATE OR REPLACE FUNCTION idgen.worker_heartbeat(worker_id integer, code text, last_ts timestamptz DEFAULT NULL, lease bigint DEFAULT NULL)
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
        RAISE EXCEPTION 'lease lost: %', lost
            USING ERRCODE = '55000',
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

-- Columns, for \d+ (each view's and table's columns say what they hold).
COMMENT ON COLUMN idgen.layouts.name IS 'Preset name, or the spec of this node''s layout when it is no preset.';
COMMENT ON COLUMN idgen.layouts.is_node_layout IS 'True for the layout this node generates with (idgen.layout); that row comes first.';
COMMENT ON COLUMN idgen.layouts.unit IS 'Length of one tick of the time field: ms, s, min, hour, day, or a number of ms (10ms).';
COMMENT ON COLUMN idgen.layouts.epoch IS 'The instant the time field counts from.';
COMMENT ON COLUMN idgen.layouts.time_bits IS 'Bits of the time field (ticks since the epoch).';
COMMENT ON COLUMN idgen.layouts.datacenter_bits IS 'Bits of the data-centre field (0 when the layout has none).';
COMMENT ON COLUMN idgen.layouts.worker_bits IS 'Bits of the worker-id field.';
COMMENT ON COLUMN idgen.layouts.rollback_bits IS 'Bits of the rollback flag (0 or 1), flipped by clock_policy = rollback_flag when the clock steps back.';
COMMENT ON COLUMN idgen.layouts.sequence_bits IS 'Bits of the sequence within one tick.';
COMMENT ON COLUMN idgen.layouts.reserved_bits IS 'Bits with a fixed value (0 to 5).';
COMMENT ON COLUMN idgen.layouts.field_order IS 'The fields from the highest bits to the lowest, comma-separated.';
COMMENT ON COLUMN idgen.layouts.ids_per_tick IS 'IDs one worker can make per tick (2^sequence_bits).';
COMMENT ON COLUMN idgen.layouts.ids_per_second IS 'IDs one worker can make per second (its capacity).';
COMMENT ON COLUMN idgen.layouts.years IS 'Years from the epoch until the time field runs out (for a wrapping layout, its cycle).';
COMMENT ON COLUMN idgen.layouts.ends IS 'When the time field runs out; NULL when it wraps or lies beyond PostgreSQL''s timestamps.';
COMMENT ON COLUMN idgen.layouts.js_safe IS 'True when every ID stays below 2^53, so JavaScript numbers (JSON.parse) hold it exactly.';
COMMENT ON COLUMN idgen.layouts.can_generate IS 'True when a node could generate with it now (its time field has not run out and does not wrap).';
COMMENT ON COLUMN idgen.layouts.description IS 'The layout in words: fields, capacity and range.';

COMMENT ON COLUMN idgen.status.layout IS 'Name of this node''s layout (idgen.layout).';
COMMENT ON COLUMN idgen.status.layout_spec IS 'The layout as written in idgen.layout.';
COMMENT ON COLUMN idgen.status.worker_id IS 'The worker id in this node''s IDs; NULL in lease mode while no lease is held.';
COMMENT ON COLUMN idgen.status.datacenter_id IS 'The data-centre id in this node''s IDs (idgen.datacenter_id), for layouts with that field.';
COMMENT ON COLUMN idgen.status.worker_id_source IS 'Where the worker id comes from: the setting idgen.worker_id, or a lease from the coordinator (with its code).';
COMMENT ON COLUMN idgen.status.clock_policy IS 'What happens when the clock steps back (idgen.clock_policy): continue (count on from the last ID), wait, error or rollback_flag.';
COMMENT ON COLUMN idgen.status.max_drift_ms IS 'How far IDs may run ahead of the wall clock, in ms (idgen.max_drift).';
COMMENT ON COLUMN idgen.status.last_id IS 'The last Snowflake ID this node made; NULL before the first.';
COMMENT ON COLUMN idgen.status.last_id_time IS 'The time inside the last ID (start of its tick).';
COMMENT ON COLUMN idgen.status.wall_clock IS 'The wall clock when the row was read.';
COMMENT ON COLUMN idgen.status.drift_ms IS 'How far the logical clock runs ahead of the wall clock, in ms; 0 when it does not (never negative).';
COMMENT ON COLUMN idgen.status.persisted_mark IS 'The durable (WAL-logged) high-water mark: after a crash or restart, IDs start above it. NULL before the first reservation.';
COMMENT ON COLUMN idgen.status.ids_issued IS 'Snowflake IDs made since the server started.';
COMMENT ON COLUMN idgen.status.overflow_waits IS 'Times a caller waited for the next tick because a tick''s sequence was used up and idgen.max_drift allowed no borrowing.';
COMMENT ON COLUMN idgen.status.clock_behind_waits IS 'Times a caller waited for the wall clock to catch up after it stepped back (clock_policy = wait, or drift beyond idgen.max_drift).';
COMMENT ON COLUMN idgen.status.clock_errors IS 'Times snowflake_next() raised an error because the clock stepped back (clock_policy = error).';
COMMENT ON COLUMN idgen.status.backward_steps IS 'Times the wall clock was seen to step back.';
COMMENT ON COLUMN idgen.status.largest_backward_step_ms IS 'The largest backward step of the wall clock seen, in ms.';
COMMENT ON COLUMN idgen.status.rollback_flips IS 'Times the rollback flag was flipped (clock_policy = rollback_flag).';
COMMENT ON COLUMN idgen.status.segment_cache_used IS 'Business types that hold a slot of the shared segment cache now, all databases together.';
COMMENT ON COLUMN idgen.status.segment_cache_size IS 'Slots of the shared segment cache (idgen.segment_cache_size).';
COMMENT ON COLUMN idgen.status.segment_evictions IS 'Idle business types evicted from the segment cache to make room.';
COMMENT ON COLUMN idgen.status.problem IS 'Why this node cannot make IDs, or runs too far ahead of its clock; NULL when all is well. Alert on it.';

COMMENT ON COLUMN idgen.worker_status.source IS 'Where this node''s worker id comes from: setting or lease.';
COMMENT ON COLUMN idgen.worker_status.state IS 'fixed for a worker id from the setting; in lease mode the keeper''s state: starting, acquiring, leased, renewal failing, lapsed or stopped.';
COMMENT ON COLUMN idgen.worker_status.worker_id IS 'The worker id in use; NULL in lease mode while no valid lease is held.';
COMMENT ON COLUMN idgen.worker_status.code IS 'The code this node leases with (its holder name at the coordinator).';
COMMENT ON COLUMN idgen.worker_status.lease IS 'The lease number (fencing token) of the lease held; visible to roles that may read idgen.worker_lease_conninfo.';
COMMENT ON COLUMN idgen.worker_status.can_generate IS 'True when snowflake_next() can make IDs now.';
COMMENT ON COLUMN idgen.worker_status.valid_for_ms IS 'How long the lease stays valid without another renewal, in ms, on this node''s monotonic clock.';
COMMENT ON COLUMN idgen.worker_status.acquired_at IS 'When the lease held was acquired.';
COMMENT ON COLUMN idgen.worker_status.expires_at IS 'The lease''s expiry as the coordinator last answered it.';
COMMENT ON COLUMN idgen.worker_status.last_heartbeat IS 'When the lease was last renewed.';
COMMENT ON COLUMN idgen.worker_status.start_after IS 'The time this node''s IDs start after, as the coordinator gave it with the lease.';
COMMENT ON COLUMN idgen.worker_status.acquisitions IS 'Leases acquired since the server started.';
COMMENT ON COLUMN idgen.worker_status.renewals IS 'Heartbeats that renewed the lease.';
COMMENT ON COLUMN idgen.worker_status.failures IS 'Failed attempts to acquire or renew (coordinator unreachable, refused, lease lost).';
COMMENT ON COLUMN idgen.worker_status.first_lease_ms IS 'Time from the keeper''s start to its first lease, in ms.';
COMMENT ON COLUMN idgen.worker_status.last_error IS 'The keeper''s last error; hidden from roles that may not read idgen.worker_lease_conninfo.';

COMMENT ON COLUMN idgen.worker_leases.worker_id IS 'The worker id.';
COMMENT ON COLUMN idgen.worker_leases.code IS 'Its last holder''s code.';
COMMENT ON COLUMN idgen.worker_leases.state IS 'held, grace (expired, not yet free: its holder may still be running), expired (free) or released (free).';
COMMENT ON COLUMN idgen.worker_leases.lease IS 'The lease number (fencing token) of its last holder.';
COMMENT ON COLUMN idgen.worker_leases.host IS 'The client address its last holder acquired it from.';
COMMENT ON COLUMN idgen.worker_leases.pid IS 'The backend process id of its last holder''s acquire.';
COMMENT ON COLUMN idgen.worker_leases.ttl IS 'How long the lease lasts without a renewal.';
COMMENT ON COLUMN idgen.worker_leases.acquired_at IS 'When its last holder acquired it.';
COMMENT ON COLUMN idgen.worker_leases.heartbeat_at IS 'Its last renewal.';
COMMENT ON COLUMN idgen.worker_leases.expires_at IS 'When the lease expires without another renewal.';
COMMENT ON COLUMN idgen.worker_leases.released_at IS 'When its holder released it; NULL while not released.';
COMMENT ON COLUMN idgen.worker_leases.last_ts IS 'The time of the last ID its holder reported making.';
COMMENT ON COLUMN idgen.worker_leases.next_start_after IS 'The time the next holder''s IDs must start after.';

COMMENT ON COLUMN idgen.workers.worker_id IS 'The worker id.';
COMMENT ON COLUMN idgen.workers.code IS 'Its last holder''s code (for a node in lease mode: idgen.worker_lease_code, by default its system identifier and port).';
COMMENT ON COLUMN idgen.workers.host IS 'The client address its last holder acquired it from.';
COMMENT ON COLUMN idgen.workers.pid IS 'The backend process id of its last holder''s acquire.';
COMMENT ON COLUMN idgen.workers.lease IS 'The lease number: a fencing token, larger for each later holder by a random step; heartbeat and release take it as proof of the holder.';
COMMENT ON COLUMN idgen.workers.ttl IS 'How long the lease lasts without a renewal.';
COMMENT ON COLUMN idgen.workers.acquired_at IS 'When its last holder acquired it.';
COMMENT ON COLUMN idgen.workers.heartbeat_at IS 'Its last renewal.';
COMMENT ON COLUMN idgen.workers.expires_at IS 'When the lease expires without another renewal.';
COMMENT ON COLUMN idgen.workers.released_at IS 'When its holder released it; NULL while not released.';
COMMENT ON COLUMN idgen.workers.last_ts IS 'The time of the last ID its holder reported making: the next holder starts after it.';

COMMENT ON COLUMN idgen.segments.biz_type IS 'The business type (1 to 63 bytes).';
COMMENT ON COLUMN idgen.segments.max_id IS 'The highest ID of every range handed out so far (never moves back); the next range starts above it.';
COMMENT ON COLUMN idgen.segments.step IS 'The size of a range, in the type''s number space (the next range''s, when changed).';
COMMENT ON COLUMN idgen.segments.delta IS 'IDs of this database are = remainder (mod delta): the number of databases sharing the type.';
COMMENT ON COLUMN idgen.segments.remainder IS 'This database''s share of the type (0 to delta - 1).';
COMMENT ON COLUMN idgen.segments.version IS 'Ranges handed out so far (Tinyid''s optimistic-lock version).';
COMMENT ON COLUMN idgen.segments.description IS 'Free text.';
COMMENT ON COLUMN idgen.segments.created_at IS 'When the type was created.';
COMMENT ON COLUMN idgen.segments.updated_at IS 'When its last range was handed out, or it was last changed.';

COMMENT ON COLUMN idgen.segments_retired.biz_type IS 'The business type dropped, renamed away or truncated.';
COMMENT ON COLUMN idgen.segments_retired.max_id IS 'The highest ID it had reached: created again, the type goes on above it.';
COMMENT ON COLUMN idgen.segments_retired.retired_at IS 'When it was retired.';

COMMENT ON COLUMN idgen.segment_status.biz_type IS 'The business type.';
COMMENT ON COLUMN idgen.segment_status.max_id IS 'Its max_id in idgen.segments.';
COMMENT ON COLUMN idgen.segment_status.configured_step IS 'Its step in idgen.segments.';
COMMENT ON COLUMN idgen.segment_status.delta IS 'Its delta: IDs are = remainder (mod delta).';
COMMENT ON COLUMN idgen.segment_status.remainder IS 'Its remainder.';
COMMENT ON COLUMN idgen.segment_status.cached IS 'True when the shared cache holds ranges of it now.';
COMMENT ON COLUMN idgen.segment_status.current_step IS 'The step in use, raised and lowered with demand (dynamic step), or the configured one.';
COMMENT ON COLUMN idgen.segment_status.current_start IS 'The current range: IDs above current_start ...';
COMMENT ON COLUMN idgen.segment_status.current_end IS '... up to current_end.';
COMMENT ON COLUMN idgen.segment_status.current_next IS 'The next ID of the current range to hand out.';
COMMENT ON COLUMN idgen.segment_status.next_start IS 'The range fetched ahead of need: IDs above next_start ...';
COMMENT ON COLUMN idgen.segment_status.next_end IS '... up to next_end.';
COMMENT ON COLUMN idgen.segment_status.ids_left IS 'IDs left in the cached ranges.';
COMMENT ON COLUMN idgen.segment_status.refill IS 'The refill of the next range: idle, requested (no allocator has taken it yet) or inprogress (being committed).';
COMMENT ON COLUMN idgen.segment_status.refills_ahead IS 'Refills committed before they were needed.';
COMMENT ON COLUMN idgen.segment_status.refills_waited IS 'Refills a caller had to wait for; if it grows, raise the step or idgen.segment_prefetch.';
COMMENT ON COLUMN idgen.segment_status.ids_issued IS 'IDs of the type handed out from the cache since the server started.';
COMMENT ON COLUMN idgen.segment_status.last_refill_at IS 'When the last range was committed.';
COMMENT ON COLUMN idgen.segment_status.description IS 'Its description in idgen.segments.';
