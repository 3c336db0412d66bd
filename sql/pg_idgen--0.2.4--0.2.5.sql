-- pg_idgen 0.2.4 -> 0.2.5
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.2.5'" to load this file. \quit

-- Made by tools/upgrade_sql.py (make upgrade-sql) from sql/upgrade/0.2.4--0.2.5.sql, the part
-- written by hand: what changes in objects 0.2.4 already has. Everything new (UUIDv7s and ULIDs,
-- the key-type check, key conversion, idgen.streams, the read horizon, public IDs, idgen.refusals,
-- idgen.segment_allocators, partition bounds, IDs at a past time, node origins' trigger, adopted
-- sequences, online key conversion) is copied below from the install script (sql/install/ and the library's functions),
-- with every comment and the privileges of a fresh install.

-- The generators run only in the leader of a parallel query, so that the IDs of one statement
-- increase in the order its rows are produced (parallel workers interleaved them).
-- @replace function snowflake_next
CREATE OR REPLACE FUNCTION "snowflake_next"() RETURNS bigint
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c
AS 'MODULE_PATHNAME', 'snowflake_next_wrapper';
-- @replace function snowflake_next_batch
-- Skipped due to `#[pgrx(sql = false)]`

CREATE OR REPLACE FUNCTION "snowflake_next_batch"(
	"n" INT /* Option < i32 > */
) RETURNS SETOF bigint /* i64 */
VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_next_batch_wrapper';
-- @replace function msgid_next
CREATE OR REPLACE FUNCTION "msgid_next"(
	"session_type" INT, /* Option < i32 > */
	"session_id" TEXT /* Option < & str > */
) RETURNS TEXT /* String */
VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'msgid_next_wrapper';

-- idgen.worker_heartbeat and idgen.worker_release: the lease number is required (42501 without
-- it): the code is a name other roles can read, and with it alone any member of idgen_client
-- could end a live lease of another holder, whose worker id then went to a second holder. A lost
-- lease (55000, "lease lost: ...", as before) also names the condition idgen_lease_lost in the
-- error's CONSTRAINT field, which the lease keeper of a node reads instead of the message.
-- idgen.worker_acquire: its hint and a comment in its body named a design by its public name.
-- CREATE OR REPLACE keeps the functions' privileges and comments.
-- @replace function idgen.worker_heartbeat
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
-- @replace function idgen.worker_release
CREATE OR REPLACE FUNCTION idgen.worker_release(worker_id integer, code text, last_ts timestamptz DEFAULT NULL, lease bigint DEFAULT NULL)
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
-- @replace function idgen.worker_acquire
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

-- @new objects
-- Skipped due to `#[pgrx(sql = false)]`

-- Skipped due to `#[pgrx(sql = false)]`

-- IDs at a past time (docs/backfill.md): the counters of backfill blocks. A row is a bucket of
-- 1,024 ticks of one stream (a backfill worker id, or -1 for UUIDv7s); next_seq is the first
-- sequence number no block of it has had. Only the allocator worker writes it, committing
-- before any number of a block is used (src/backfill/counters.rs). Readable by superusers
-- only; the counters only move forward and rows are never deleted.
CREATE TABLE idgen_internal.backfill_counters (
    stream     integer NOT NULL CHECK (stream >= -1),
    bucket     bigint NOT NULL CHECK (bucket >= 0),
    next_seq   integer NOT NULL CHECK (next_seq >= 0),
    updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (stream, bucket)
);

COMMENT ON TABLE idgen_internal.backfill_counters IS 'IDs at a past time (snowflake_at, uuidv7_at): per stream (the backfill worker id, -1 for UUIDv7s) and bucket of 1,024 ticks, the first sequence number no backfill has had. Written only by the allocator worker; never move a counter back or delete a row.';

REVOKE ALL ON idgen_internal.backfill_counters FROM PUBLIC;

-- pg_dump keeps the counters, so backfills after a restore continue above them.
SELECT pg_catalog.pg_extension_config_dump('idgen_internal.backfill_counters', '');

-- A counter moved back, or a row deleted, would hand its numbers out again.
CREATE FUNCTION idgen_internal.backfill_counters_guard() RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.stream <> OLD.stream OR NEW.bucket <> OLD.bucket OR NEW.next_seq < OLD.next_seq THEN
            RAISE EXCEPTION 'a backfill counter can only move forward'
                USING ERRCODE = '22023',
                      HINT = 'Its numbers may have been handed out; to start over, set idgen.backfill_worker_id to a worker id no node has used.';
        END IF;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'the rows of idgen_internal.backfill_counters cannot be deleted'
        USING ERRCODE = '55000',
              HINT = 'Their numbers may have been handed out; to start over, set idgen.backfill_worker_id to a worker id no node has used.';
END $$;

COMMENT ON FUNCTION idgen_internal.backfill_counters_guard() IS 'Trigger of idgen_internal.backfill_counters: a counter only moves forward, and no row is deleted (their numbers may have been handed out).';

CREATE TRIGGER backfill_counters_forward BEFORE UPDATE OR DELETE ON idgen_internal.backfill_counters
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.backfill_counters_guard();

CREATE TRIGGER backfill_counters_keep BEFORE TRUNCATE ON idgen_internal.backfill_counters
    FOR EACH STATEMENT EXECUTE FUNCTION idgen_internal.backfill_counters_guard();

CREATE  FUNCTION "snowflake_at"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_at_wrapper';

CREATE  FUNCTION "snowflake_at_batch"(
	"ts" timestamp with time zone[] /* Array < '_, TimestampWithTimeZone > */
) RETURNS bigint[] /* Vec < i64 > */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_at_batch_wrapper';

CREATE  FUNCTION "uuidv7_at"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS uuid /* Uuid */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_at_wrapper';

CREATE  FUNCTION "uuidv7_at_batch"(
	"ts" timestamp with time zone[] /* Array < '_, TimestampWithTimeZone > */
) RETURNS uuid[] /* Vec < Uuid > */
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_at_batch_wrapper';

CREATE  FUNCTION idgen_internal."id_time_lower"(
	"ts" timestamp with time zone, /* TimestampWithTimeZone */
	"inclusive" bool, /* bool */
	"layout" TEXT /* & str */
) RETURNS bigint /* Option < i64 > */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_time_lower_wrapper';

CREATE  FUNCTION idgen_internal."id_time_upper"(
	"ts" timestamp with time zone, /* TimestampWithTimeZone */
	"inclusive" bool, /* bool */
	"layout" TEXT /* & str */
) RETURNS bigint /* Option < i64 > */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_time_upper_wrapper';

CREATE  FUNCTION idgen_internal."uuidv7_time_lower"(
	"ts" timestamp with time zone, /* TimestampWithTimeZone */
	"inclusive" bool /* bool */
) RETURNS uuid /* Option < Uuid > */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_time_lower_wrapper';

CREATE  FUNCTION idgen_internal."uuidv7_time_upper"(
	"ts" timestamp with time zone, /* TimestampWithTimeZone */
	"inclusive" bool /* bool */
) RETURNS uuid /* Option < Uuid > */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_time_upper_wrapper';

CREATE  FUNCTION idgen_internal."id_time_lower"(
	"ts" timestamp, /* Timestamp */
	"inclusive" bool, /* bool */
	"layout" TEXT /* & str */
) RETURNS bigint /* Option < i64 > */
STRICT STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_time_lower_local_wrapper';

CREATE  FUNCTION idgen_internal."id_time_upper"(
	"ts" timestamp, /* Timestamp */
	"inclusive" bool, /* bool */
	"layout" TEXT /* & str */
) RETURNS bigint /* Option < i64 > */
STRICT STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_time_upper_local_wrapper';

CREATE  FUNCTION idgen_internal."id_time_lower"(
	"d" date, /* Date */
	"inclusive" bool, /* bool */
	"layout" TEXT /* & str */
) RETURNS bigint /* Option < i64 > */
STRICT STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_time_lower_date_wrapper';

CREATE  FUNCTION idgen_internal."id_time_upper"(
	"d" date, /* Date */
	"inclusive" bool, /* bool */
	"layout" TEXT /* & str */
) RETURNS bigint /* Option < i64 > */
STRICT STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_time_upper_date_wrapper';

CREATE  FUNCTION idgen_internal."uuidv7_time_lower"(
	"ts" timestamp, /* Timestamp */
	"inclusive" bool /* bool */
) RETURNS uuid /* Option < Uuid > */
STRICT STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_time_lower_local_wrapper';

CREATE  FUNCTION idgen_internal."uuidv7_time_upper"(
	"ts" timestamp, /* Timestamp */
	"inclusive" bool /* bool */
) RETURNS uuid /* Option < Uuid > */
STRICT STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_time_upper_local_wrapper';

CREATE  FUNCTION idgen_internal."uuidv7_time_lower"(
	"d" date, /* Date */
	"inclusive" bool /* bool */
) RETURNS uuid /* Option < Uuid > */
STRICT STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_time_lower_date_wrapper';

CREATE  FUNCTION idgen_internal."uuidv7_time_upper"(
	"d" date, /* Date */
	"inclusive" bool /* bool */
) RETURNS uuid /* Option < Uuid > */
STRICT STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_time_upper_date_wrapper';

CREATE  FUNCTION idgen_internal."within_range_support"(
	"request" internal /* Internal */
) RETURNS internal /* Internal */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'within_range_support_wrapper';

-- requires:
--   within_range_support
CREATE  FUNCTION idgen_internal."within_range"(
	"condition" bool /* Option < bool > */
) RETURNS bool /* Option < bool > */
IMMUTABLE PARALLEL SAFE  SUPPORT idgen_internal."within_range_support"
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'within_range_wrapper';

CREATE  FUNCTION idgen_internal."key_range_estimate_support"(
	"request" internal /* Internal */
) RETURNS internal /* Internal */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'key_range_estimate_support_wrapper';

-- requires:
--   key_range_estimate_support
CREATE  FUNCTION idgen_internal."key_range_estimate"(
	"key" uuid /* Option < Uuid > */
) RETURNS bool /* bool */
IMMUTABLE PARALLEL SAFE  SUPPORT idgen_internal."key_range_estimate_support"
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'key_range_estimate_wrapper';

CREATE  FUNCTION idgen_internal."time_local_lower"(
	"c" timestamp, /* Option < Timestamp > */
	"unit" TEXT, /* Option < & str > */
	"zone" TEXT /* Option < & str > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'time_local_lower_local_wrapper';

CREATE  FUNCTION idgen_internal."time_local_upper"(
	"c" timestamp, /* Option < Timestamp > */
	"unit" TEXT, /* Option < & str > */
	"zone" TEXT /* Option < & str > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'time_local_upper_local_wrapper';

CREATE  FUNCTION idgen_internal."time_local_lower"(
	"c" date, /* Option < Date > */
	"unit" TEXT, /* Option < & str > */
	"zone" TEXT /* Option < & str > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'time_local_lower_date_wrapper';

CREATE  FUNCTION idgen_internal."time_local_upper"(
	"c" date, /* Option < Date > */
	"unit" TEXT, /* Option < & str > */
	"zone" TEXT /* Option < & str > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'time_local_upper_date_wrapper';

CREATE  FUNCTION idgen_internal."time_trunc_lower"(
	"c" timestamp with time zone, /* Option < TimestampWithTimeZone > */
	"unit" TEXT, /* Option < & str > */
	"zone" TEXT /* Option < & str > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STABLE PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'time_trunc_lower_wrapper';

CREATE  FUNCTION idgen_internal."time_trunc_upper"(
	"c" timestamp with time zone, /* Option < TimestampWithTimeZone > */
	"unit" TEXT, /* Option < & str > */
	"zone" TEXT /* Option < & str > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STABLE PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'time_trunc_upper_wrapper';

CREATE  FUNCTION idgen_internal."time_trunc_lower"(
	"c" timestamp, /* Option < Timestamp > */
	"unit" TEXT, /* Option < & str > */
	"zone" TEXT /* Option < & str > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'time_trunc_lower_local_wrapper';

CREATE  FUNCTION idgen_internal."time_trunc_upper"(
	"c" timestamp, /* Option < Timestamp > */
	"unit" TEXT, /* Option < & str > */
	"zone" TEXT /* Option < & str > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'time_trunc_upper_local_wrapper';

CREATE  FUNCTION idgen_internal."time_trunc_lower"(
	"c" date, /* Option < Date > */
	"unit" TEXT, /* Option < & str > */
	"zone" TEXT /* Option < & str > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'time_trunc_lower_date_wrapper';

CREATE  FUNCTION idgen_internal."time_trunc_upper"(
	"c" date, /* Option < Date > */
	"unit" TEXT, /* Option < & str > */
	"zone" TEXT /* Option < & str > */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STABLE PARALLEL SAFE  
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'time_trunc_upper_date_wrapper';

CREATE  FUNCTION idgen_internal."uuid_larger"(
	"a" uuid, /* Uuid */
	"b" uuid /* Uuid */
) RETURNS uuid /* Uuid */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_larger_wrapper';

CREATE  FUNCTION idgen_internal."uuid_smaller"(
	"a" uuid, /* Uuid */
	"b" uuid /* Uuid */
) RETURNS uuid /* Uuid */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_smaller_wrapper';

-- Skipped due to `#[pgrx(sql = false)]`

CREATE  FUNCTION "id_worker_id"(
	"id" bigint /* i64 */
) RETURNS bigint /* Option < i64 > */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_worker_id_wrapper';

CREATE  FUNCTION "id_worker_id"(
	"id" bigint, /* Option < i64 > */
	"layout" TEXT /* Option < & str > */
) RETURNS bigint /* Option < i64 > */
IMMUTABLE PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_worker_id_with_wrapper';

CREATE  FUNCTION "id_range"(
	"since" timestamp with time zone, /* TimestampWithTimeZone */
	"before" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS TABLE (
	"lower" bigint,  /* i64 */
	"upper" bigint  /* i64 */
)
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_range_wrapper';

CREATE  FUNCTION "id_range"(
	"since" timestamp with time zone, /* Option < TimestampWithTimeZone > */
	"before" timestamp with time zone, /* Option < TimestampWithTimeZone > */
	"layout" TEXT /* Option < & str > */
) RETURNS TABLE (
	"lower" bigint,  /* Option < i64 > */
	"upper" bigint  /* Option < i64 > */
)
IMMUTABLE PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_range_with_wrapper';

CREATE  FUNCTION "id_span"(
	"span" interval /* Interval */
) RETURNS bigint /* i64 */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_span_wrapper';

CREATE  FUNCTION "id_span"(
	"span" interval, /* Option < Interval > */
	"layout" TEXT /* Option < & str > */
) RETURNS bigint /* Option < i64 > */
IMMUTABLE PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_span_with_wrapper';

CREATE  FUNCTION idgen_internal."column_max"(
	"tbl" oid, /* pg_sys :: Oid */
	"col" TEXT /* & str */
) RETURNS NUMERIC /* Option < AnyNumeric > */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'column_max_wrapper';

COMMENT ON TABLE idgen.workers IS 'Worker-id leases (raindrop''s worker table): one row per worker id ever leased, with its last holder (code), the lease number (a fencing token: larger for each later holder, by a random step, so that only its holder knows it), expiry, last heartbeat, and last_ts, the time the next holder starts after.';

CREATE  FUNCTION idgen."encrypt_id"(
	"id" bigint, /* Option < i64 > */
	"key" TEXT, /* Option < & str > */
	"version" INT DEFAULT NULL /* Option < i32 > */
) RETURNS bigint /* Option < i64 > */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'encrypt_id_wrapper';

CREATE  FUNCTION idgen."decrypt_id"(
	"id" bigint, /* Option < i64 > */
	"key" TEXT, /* Option < & str > */
	"version" INT DEFAULT NULL /* Option < i32 > */
) RETURNS bigint /* Option < i64 > */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'decrypt_id_wrapper';

CREATE  FUNCTION idgen."encrypt_id_js_safe"(
	"id" bigint, /* Option < i64 > */
	"key" TEXT, /* Option < & str > */
	"version" INT DEFAULT NULL /* Option < i32 > */
) RETURNS bigint /* Option < i64 > */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'encrypt_id_js_safe_wrapper';

CREATE  FUNCTION idgen."decrypt_id_js_safe"(
	"id" bigint, /* Option < i64 > */
	"key" TEXT, /* Option < & str > */
	"version" INT DEFAULT NULL /* Option < i32 > */
) RETURNS bigint /* Option < i64 > */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'decrypt_id_js_safe_wrapper';

CREATE  FUNCTION idgen."encrypt_uuid"(
	"id" uuid, /* Option < pgrx :: Uuid > */
	"key" TEXT, /* Option < & str > */
	"version" INT DEFAULT NULL /* Option < i32 > */
) RETURNS uuid /* Option < pgrx :: Uuid > */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'encrypt_uuid_wrapper';

CREATE  FUNCTION idgen."decrypt_uuid"(
	"id" uuid, /* Option < pgrx :: Uuid > */
	"key" TEXT, /* Option < & str > */
	"version" INT DEFAULT NULL /* Option < i32 > */
) RETURNS uuid /* Option < pgrx :: Uuid > */
STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'decrypt_uuid_wrapper';

CREATE  FUNCTION idgen."id_to_public"(
	"id" bigint, /* i64 */
	"key" TEXT /* & str */
) RETURNS TEXT /* String */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'id_to_public_wrapper';

CREATE  FUNCTION idgen."public_to_id"(
	"public_id" TEXT, /* & str */
	"key" TEXT /* & str */
) RETURNS bigint /* i64 */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'public_to_id_wrapper';

CREATE  FUNCTION idgen."uuid_to_public"(
	"id" uuid, /* pgrx :: Uuid */
	"key" TEXT /* & str */
) RETURNS TEXT /* String */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_to_public_wrapper';

CREATE  FUNCTION idgen."public_to_uuid"(
	"public_id" TEXT, /* & str */
	"key" TEXT /* & str */
) RETURNS uuid /* pgrx :: Uuid */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'public_to_uuid_wrapper';

CREATE  FUNCTION idgen_internal."public_key_random"() RETURNS bytea /* Vec < u8 > */
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'public_key_random_wrapper';

CREATE  FUNCTION idgen_internal."public_key_fingerprint"(
	"name" TEXT, /* & str */
	"version" INT /* i32 */
) RETURNS TEXT /* Option < String > */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'public_key_fingerprint_wrapper';

CREATE FUNCTION idgen_internal."public_keys_changed"()
	RETURNS TRIGGER
	LANGUAGE c
	AS 'MODULE_PATHNAME', 'public_keys_changed_wrapper';

-- requires:
--   public_keys_changed
--   public_key_random
--   public_key_fingerprint
--   encrypt_id
--   decrypt_id
--   encrypt_id_js_safe
--   decrypt_id_js_safe
--   encrypt_uuid
--   decrypt_uuid
--   id_to_public
--   public_to_id
--   uuid_to_public
--   public_to_uuid

-- Public IDs (README, "Public IDs"): the keys. Only the table's owner (a superuser) may read
-- idgen_internal.public_keys; administrators (idgen_admin) create, rotate and drop keys through
-- the functions below, which never return a key; everyone may encrypt and decrypt with a key by
-- its name (src/public_id.rs), and see the keys' names, prefixes, versions and fingerprints in
-- idgen.public_keys.
CREATE TABLE idgen_internal.public_keys (
    name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{0,62}$'),
    version integer NOT NULL CHECK (version BETWEEN 1 AND 1023),
    prefix text NOT NULL CHECK (prefix ~ '^([a-z][a-z0-9]{0,15})?$'),
    -- NULL once the version is dropped: the row stays, so its number is never used again.
    key bytea CHECK (length(key) IN (16, 24, 32)),
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by name NOT NULL DEFAULT session_user,
    dropped_at timestamptz,
    PRIMARY KEY (name, version)
);

COMMENT ON TABLE idgen_internal.public_keys IS 'The keys of public IDs (AES keys for FF1). Readable by superusers only; back it up as a secret.';

-- pg_dump keeps the keys (a dump made by a superuser holds them: keep it as a secret); a dump
-- made by a role that may not read them fails on this table rather than leave them out.
SELECT pg_catalog.pg_extension_config_dump('idgen_internal.public_keys', '');

REVOKE ALL ON idgen_internal.public_keys FROM PUBLIC;

CREATE TRIGGER public_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON idgen_internal.public_keys
    FOR EACH STATEMENT EXECUTE FUNCTION idgen_internal.public_keys_changed();

-- The arguments are checked before the row is written, so that no constraint's error (whose
-- DETAIL shows the failing row) can ever print a key.
CREATE FUNCTION idgen_internal.public_key_check(name text, prefix text, key bytea) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF name IS NULL OR name !~ '^[a-z][a-z0-9_]{0,62}$' THEN
        RAISE EXCEPTION 'a public key''s name is 1 to 63 of a-z, 0-9 and _, starting with a letter: %', coalesce(quote_literal(name), 'NULL')
            USING ERRCODE = '22023';
    END IF;
    IF prefix IS NULL OR prefix !~ '^([a-z][a-z0-9]{0,15})?$' THEN
        RAISE EXCEPTION 'a public ID prefix is empty or 1 to 16 of a-z and 0-9, starting with a letter: %', coalesce(quote_literal(prefix), 'NULL')
            USING ERRCODE = '22023', HINT = 'The text form is prefix_ and 22 characters; the prefix names the kind of ID (inv, usr).';
    END IF;
    IF key IS NOT NULL AND length(key) NOT IN (16, 24, 32) THEN
        RAISE EXCEPTION 'an AES key is 16, 24 or 32 bytes, not %', length(key)
            USING ERRCODE = '22023', HINT = 'Leave key out for a random 32-byte key; give the same key on every node that must read the same public IDs.';
    END IF;
END
$$;

-- A key given as a literal stays in the statement's text, which pg_stat_activity (while the
-- session is in it) and pg_stat_statements (inside a DO block or a function, and with
-- track = all) show to every member of pg_monitor: warn, so that the caller passes it as a bind
-- parameter instead (docs/public-ids.md).
CREATE FUNCTION idgen_internal.public_key_in_statement(key bytea) RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    text_of_statement text := lower(coalesce(current_query(), ''));
BEGIN
    IF key IS NOT NULL AND (position(encode(key, 'hex') IN text_of_statement) > 0
                            OR position(lower(encode(key, 'base64')) IN text_of_statement) > 0) THEN
        RAISE WARNING 'the key''s bytes are in the text of the statement'
            USING ERRCODE = '01000',
                  DETAIL = 'pg_stat_activity and pg_stat_statements keep statement texts, and every member of pg_monitor reads them: whoever read this one has the key.',
                  HINT = 'Pass the key as a bind parameter (psql 16 or later: \bind; a driver''s query parameters), never as a literal; for this key, rotate it (idgen.public_key_rotate) with bytes given that way.';
    END IF;
END
$$;

CREATE FUNCTION idgen.public_key_create(name text, prefix text DEFAULT '', key bytea DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM idgen_internal.public_key_check(public_key_create.name, public_key_create.prefix, public_key_create.key);
    PERFORM idgen_internal.public_key_in_statement(public_key_create.key);
    PERFORM pg_advisory_xact_lock(hashtext('idgen.public_keys'), hashtext(public_key_create.name));
    IF EXISTS (SELECT FROM idgen_internal.public_keys k WHERE k.name = public_key_create.name) THEN
        RAISE EXCEPTION 'public key "%" exists', public_key_create.name
            USING ERRCODE = '42710', HINT = 'Make a new version with idgen.public_key_rotate(), or drop the key first with idgen.public_key_drop().';
    END IF;
    INSERT INTO idgen_internal.public_keys (name, version, prefix, key)
    VALUES (public_key_create.name, 1, public_key_create.prefix,
            coalesce(public_key_create.key, idgen_internal.public_key_random()));
    RETURN 1;
END
$$;

CREATE FUNCTION idgen.public_key_rotate(name text, key bytea DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    r idgen_internal.public_keys;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('idgen.public_keys'), hashtext(public_key_rotate.name));
    SELECT * INTO r FROM idgen_internal.public_keys k WHERE k.name = public_key_rotate.name ORDER BY k.version DESC LIMIT 1;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'public key "%" does not exist', public_key_rotate.name
            USING ERRCODE = '42704', HINT = 'Create it with idgen.public_key_create().';
    END IF;
    PERFORM idgen_internal.public_key_check(r.name, r.prefix, public_key_rotate.key);
    PERFORM idgen_internal.public_key_in_statement(public_key_rotate.key);
    IF r.version >= 1023 THEN
        RAISE EXCEPTION 'public key "%" has had 1023 versions, the most its text forms can name', r.name
            USING ERRCODE = '54000', HINT = 'Create a key under a new name for new IDs.';
    END IF;
    INSERT INTO idgen_internal.public_keys (name, version, prefix, key)
    VALUES (r.name, r.version + 1, r.prefix, coalesce(public_key_rotate.key, idgen_internal.public_key_random()));
    RETURN r.version + 1;
END
$$;

CREATE FUNCTION idgen.public_key_drop(name text, version integer DEFAULT NULL) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    newest integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('idgen.public_keys'), hashtext(public_key_drop.name));
    SELECT max(k.version) INTO newest FROM idgen_internal.public_keys k WHERE k.name = public_key_drop.name;
    IF newest IS NULL THEN
        RAISE EXCEPTION 'public key "%" does not exist', public_key_drop.name USING ERRCODE = '42704';
    END IF;
    IF public_key_drop.version IS NULL THEN
        DELETE FROM idgen_internal.public_keys k WHERE k.name = public_key_drop.name;
        RETURN;
    END IF;
    IF public_key_drop.version = newest THEN
        RAISE EXCEPTION 'version % is the current version of public key "%"', newest, public_key_drop.name
            USING ERRCODE = '55000', HINT = 'Rotate first (idgen.public_key_rotate()), then drop the old version; or drop the whole key.';
    END IF;
    UPDATE idgen_internal.public_keys k SET key = NULL, dropped_at = now()
     WHERE k.name = public_key_drop.name AND k.version = public_key_drop.version AND k.key IS NOT NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'public key "%" has no version %', public_key_drop.name, public_key_drop.version USING ERRCODE = '42704';
    END IF;
END
$$;

CREATE VIEW idgen.public_keys AS
SELECT k.name, k.prefix, k.version,
       k.version = max(k.version) OVER (PARTITION BY k.name) AS current,
       k.created_at, k.created_by, k.dropped_at,
       CASE WHEN k.key IS NOT NULL THEN idgen_internal.public_key_fingerprint(k.name, k.version) END AS fingerprint
  FROM idgen_internal.public_keys k;

COMMENT ON FUNCTION idgen.public_key_create(text, text, bytea) IS 'Creates a key for public IDs (version 1): random unless key (16, 24 or 32 bytes) is given, as every node that reads the same public IDs must. The text forms start with prefix_. Returns the version.';

COMMENT ON FUNCTION idgen.public_key_rotate(text, bytea) IS 'Makes a new version of a key, used from now on for new public IDs; public IDs of the older versions still decrypt. Returns the new version.';

COMMENT ON FUNCTION idgen.public_key_drop(text, integer) IS 'Drops one old version of a key (public IDs made with it no longer decrypt; its number is not used again), or with version NULL the whole key.';

COMMENT ON VIEW idgen.public_keys IS 'The keys of public IDs: name, prefix, versions, and a fingerprint to compare nodes by; never the keys themselves.';

COMMENT ON COLUMN idgen.public_keys.name IS 'The key''s name, which the functions take.';

COMMENT ON COLUMN idgen.public_keys.prefix IS 'What its text forms start with (before _); empty for none.';

COMMENT ON COLUMN idgen.public_keys.version IS 'The version: its text forms carry it; the highest is current.';

COMMENT ON COLUMN idgen.public_keys.created_at IS 'When the version was made.';

COMMENT ON FUNCTION idgen_internal.public_key_check(text, text, bytea) IS 'Checks a key''s name, prefix and bytes before they are written (so that no constraint''s error shows a key).';

COMMENT ON FUNCTION idgen_internal.public_key_in_statement(bytea) IS 'Warns when a key''s bytes stand in the text of the statement that gives them (pg_monitor reads statement texts).';

COMMENT ON COLUMN idgen.public_keys.current IS 'Whether new public IDs are made with this version.';

COMMENT ON COLUMN idgen.public_keys.created_by IS 'The session user who made the version.';

COMMENT ON COLUMN idgen.public_keys.dropped_at IS 'When the version was dropped (its key is gone; its public IDs no longer decrypt).';

COMMENT ON COLUMN idgen.public_keys.fingerprint IS 'idgen.encrypt_id(0, name, version) in hex: equal on two nodes if and only if they hold the same key (but for chance).';

CREATE  FUNCTION idgen_internal."segment_moved"(
	"biz_type" TEXT /* & str */
) RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'segment_moved_wrapper';

CREATE  FUNCTION idgen_internal."segment_allocator_usage"() RETURNS TABLE (
	"allocators" bigint,  /* i64 */
	"allocator_slots" bigint,  /* i64 */
	"slot_waits" bigint,  /* i64 */
	"start_failures" bigint  /* i64 */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'segment_allocator_usage_wrapper';

COMMENT ON TABLE idgen.segments IS 'Segment mode (Didi Tinyid, Meituan Leaf): per business type, the highest ID handed out in ranges (max_id), the range size (step), and the split across databases (IDs are = remainder mod delta).';

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

CREATE VIEW idgen.segment_allocators AS SELECT * FROM idgen_internal.segment_allocator_usage();

COMMENT ON VIEW idgen.segment_allocators IS 'The allocator workers of the whole cluster (one per database that uses segment mode or holds the backfill counters): how many run, how many may (32), how often a caller found every slot taken by other databases, and how often no background-worker slot was free to start one (max_worker_processes).';

COMMENT ON COLUMN idgen.segment_allocators.allocators IS 'Allocator workers running or starting in the cluster.';

COMMENT ON COLUMN idgen.segment_allocators.allocator_slots IS 'How many may run at once.';

COMMENT ON COLUMN idgen.segment_allocators.slot_waits IS 'Times since the server started that a caller found every allocator slot taken by other databases (it waits, then 53000).';

COMMENT ON COLUMN idgen.segment_allocators.start_failures IS 'Times since the server started that no background-worker slot was free to start an allocator (raise max_worker_processes).';

CREATE  FUNCTION idgen."read_horizon"() RETURNS bigint /* i64 */
STRICT VOLATILE PARALLEL RESTRICTED 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'read_horizon_wrapper';

COMMENT ON TABLE idgen.node_origins IS 'The database systems (pg_control system identifiers) whose IDs this database may hold. When a row names another system (after pg_upgrade, a restore onto another server, a file copy), Snowflake IDs, message IDs and UUIDv7s are refused here until idgen.snowflake_start_after() moves this node past the old IDs, which leaves only this system''s row.';

-- A database's owner restores its rows with the application's (pg_restore --no-owner, the
-- managed-database recipe), so that a restore onto another server is refused there too; nobody
-- else adds rows (a row naming another system refuses the database's time-based IDs).
CREATE FUNCTION idgen_internal.node_origins_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT (pg_has_role(current_user, 'idgen_admin', 'MEMBER')
            OR pg_has_role(current_user, (SELECT d.datdba FROM pg_database d WHERE d.datname = current_database()), 'MEMBER')) THEN
        RAISE EXCEPTION 'permission denied to add rows to idgen.node_origins'
            USING ERRCODE = '42501',
                  DETAIL = 'Only the database''s owner (restoring its dump) and members of idgen_admin record the systems whose IDs a database holds.',
                  HINT = 'Restore as the database''s owner or as a member of idgen_admin.';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER node_origins_insert BEFORE INSERT ON idgen.node_origins
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.node_origins_insert();

CREATE  FUNCTION idgen_internal."stream_status"() RETURNS TABLE (
	"stream" TEXT,  /* String */
	"ids_per_second" double precision,  /* f64 */
	"last_tick_time" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"drift_ms" bigint,  /* i64 */
	"reserved_until" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"ids_issued" bigint,  /* i64 */
	"overflow_waits" bigint,  /* i64 */
	"clock_behind_waits" bigint,  /* i64 */
	"clock_errors" bigint,  /* i64 */
	"backward_steps" bigint,  /* i64 */
	"largest_backward_step_ms" bigint  /* i64 */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_status_wrapper';

CREATE  FUNCTION idgen_internal."refusal_counts"() RETURNS TABLE (
	"stream" TEXT,  /* String */
	"reason" TEXT,  /* String */
	"refusals" bigint  /* i64 */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'refusal_counts_wrapper';

CREATE  FUNCTION idgen_internal."read_horizon_holders"() RETURNS TABLE (
	"kind" TEXT,  /* String */
	"stream" TEXT,  /* Option < String > */
	"pid" INT,  /* Option < i32 > */
	"transaction" bigint,  /* Option < i64 > */
	"oldest_id" TEXT,  /* Option < String > */
	"oldest_id_time" timestamp with time zone  /* Option < TimestampWithTimeZone > */
)
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'read_horizon_holders_wrapper';

CREATE VIEW idgen.streams AS SELECT * FROM idgen_internal.stream_status();

COMMENT ON VIEW idgen.streams IS 'This node''s clock streams, a row each: Snowflake IDs, message IDs, UUIDv7s (and ULIDs). Capacity, last tick, drift from the wall clock, how far the durable mark covers, counters.';

CREATE VIEW idgen.read_horizon_holders AS
SELECT h.kind, h.stream, h.pid,
       coalesce(h.transaction::text::xid, a.backend_xid) AS transaction,
       p.gid, h.oldest_id, h.oldest_id_time,
       coalesce(a.xact_start, p.prepared) AS since
FROM idgen_internal.read_horizon_holders() AS h
LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid = h.pid
LEFT JOIN pg_catalog.pg_prepared_xacts AS p ON p.transaction = h.transaction::text::xid;

CREATE VIEW idgen.refusals AS SELECT * FROM idgen_internal.refusal_counts();

COMMENT ON VIEW idgen.refusals IS 'How often this node refused to make an ID since the server started, per stream (snowflake, msgid, uuidv7) and reason (a fixed set: standby, mark_unreadable, layout_refused, upgraded_without_mark, other_system, worker_id_unset, clock_behind, sequence_exhausted, before_epoch, layout_exhausted, mark_not_written, lease_missing, lease_lapsed, lease_ceiling); every pair has a row, zero included.';

COMMENT ON COLUMN idgen.refusals.stream IS 'snowflake, msgid or uuidv7.';

COMMENT ON COLUMN idgen.refusals.reason IS 'Why, from a fixed set (a label of a metric: never renamed).';

COMMENT ON COLUMN idgen.refusals.refusals IS 'Calls for IDs of the stream refused for that reason since the server started (a refused batch counts once, whatever its size).';

-- requires:
--   status_views

-- A column whose default is snowflake_next() or segment_next() must be able to hold the IDs:
-- checked when the DDL runs (CREATE TABLE, ALTER TABLE ... SET DEFAULT / TYPE, partitions), not at
-- the first INSERT, whose bare "integer out of range" names neither the column nor pg_idgen.
-- snowflake_next() on a type that cannot hold every bigint exactly never works (smallint, integer,
-- numeric with fewer than 19 integer digits: out of range) or repeats IDs (real, double precision,
-- numeric with a negative scale: rounded): an ERROR. segment_next() there works until its numbers
-- outgrow the type: a WARNING, except on a negative scale, which rounds its first IDs together:
-- an ERROR. Domains count as their base type, at any depth; a table whose column changes type
-- is checked with its inheritance children and partitions, whose own defaults may call the
-- generators. idgen.key_type_check = warning turns the ERROR into a WARNING (to restore an old
-- schema as it was), off skips the check.

-- A column type as the check sees it: its base type through every level of domains, with the
-- typmod that applies to it; whether it holds every bigint exactly; whether it rounds (instead of
-- refusing) the values it cannot hold.
CREATE FUNCTION idgen_internal.key_type_of(typ oid, typmod integer,
    OUT base oid, OUT holds_bigint boolean, OUT rounds boolean)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t pg_type;
    prec integer;
    scale integer;
BEGIN
    base := typ;
    LOOP
        SELECT * INTO t FROM pg_type WHERE oid = base;
        EXIT WHEN NOT FOUND OR t.typtype <> 'd';
        -- A domain's typmod (numeric(10,0) in CREATE DOMAIN) is its base type's.
        IF t.typtypmod <> -1 THEN
            typmod := t.typtypmod;
        END IF;
        base := t.typbasetype;
    END LOOP;
    IF base = 'numeric'::regtype AND typmod >= 4 THEN
        prec := ((typmod - 4) >> 16) & 65535;
        scale := (typmod - 4) & 2047;
        IF scale > 1023 THEN
            scale := scale - 2048;  -- a negative scale (PostgreSQL 15 and later)
        END IF;
    END IF;
    holds_bigint := base = 'int8'::regtype
        OR (base = 'numeric'::regtype AND (prec IS NULL OR (scale >= 0 AND prec - scale >= 19)));
    rounds := base IN ('float4'::regtype, 'float8'::regtype) OR coalesce(scale < 0, false);
END
$$;

CREATE FUNCTION idgen_internal.check_key_types() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    mode text := coalesce(current_setting('idgen.key_type_check', true), 'error');
    js_safe boolean;
    c record;
    fatal boolean;
BEGIN
    IF mode = 'off' THEN
        RETURN;
    END IF;
    FOR c IN
        WITH RECURSIVE changed(relid) AS (
            SELECT cmd.objid FROM pg_event_trigger_ddl_commands() cmd WHERE cmd.classid = 'pg_class'::regclass
            UNION
            SELECT i.inhrelid FROM pg_inherits i JOIN changed ON i.inhparent = changed.relid
        )
        SELECT DISTINCT changed.relid::regclass AS tbl, a.attname, format_type(a.atttypid, a.atttypmod) AS typ,
               k.base, k.holds_bigint, k.rounds, p.proname
          FROM changed
          JOIN pg_attrdef ad ON ad.adrelid = changed.relid
          JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum AND NOT a.attisdropped
          CROSS JOIN LATERAL idgen_internal.key_type_of(a.atttypid, a.atttypmod) k
          JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                          AND d.refclassid = 'pg_proc'::regclass
          JOIN pg_proc p ON p.oid = d.refobjid AND p.proname IN ('snowflake_next', 'segment_next')
          JOIN pg_depend e ON e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e'
          JOIN pg_extension x ON x.oid = e.refobjid AND x.extname = 'pg_idgen'
         ORDER BY 1, 2
    LOOP
        IF c.holds_bigint OR c.base NOT IN ('int2'::regtype, 'int4'::regtype, 'float4'::regtype,
                                             'float8'::regtype, 'numeric'::regtype) THEN
            CONTINUE;
        END IF;
        IF c.proname = 'snowflake_next' THEN
            IF c.base = 'float8'::regtype THEN
                IF js_safe IS NULL THEN
                    SELECT l.js_safe INTO js_safe FROM idgen.layouts l WHERE l.is_node_layout;
                END IF;
                IF js_safe THEN
                    CONTINUE;  -- IDs below 2^53: double precision holds each exactly
                END IF;
            END IF;
            fatal := true;
        ELSE
            fatal := c.base = 'numeric'::regtype AND c.rounds;
        END IF;
        IF fatal AND mode = 'error' THEN
            RAISE EXCEPTION 'column "%" of table % is %, which cannot hold the IDs of its default %()', c.attname, c.tbl, c.typ, c.proname
                USING ERRCODE = '42804',
                      DETAIL = CASE WHEN c.base = 'numeric'::regtype AND c.rounds
                                    THEN 'Its negative scale rounds the IDs: different IDs would be stored as the same value.'
                                    WHEN c.rounds
                                    THEN 'Snowflake IDs of this node''s layout are larger than floating point holds exactly (2^24 in real, 2^53 in double precision): it rounds them, and IDs would repeat.'
                                    ELSE 'Snowflake IDs are 64-bit numbers: every INSERT would fail with "out of range".' END,
                      HINT = format('Make the column bigint (ALTER TABLE %s ALTER COLUMN %I TYPE bigint, and the columns that reference it). '
                                    'SET idgen.key_type_check = warning lets this command through (to restore an old schema as it was).', c.tbl, c.attname);
        END IF;
        RAISE WARNING 'column "%" of table % is %, which cannot hold all IDs of its default %()', c.attname, c.tbl, c.typ, c.proname
            USING DETAIL = CASE WHEN fatal AND c.rounds
                                THEN 'The type rounds the IDs: different IDs would be stored as the same value.'
                                WHEN fatal
                                THEN 'Every Snowflake ID is out of its range.'
                                WHEN c.rounds
                                THEN 'Once the type''s IDs pass 2^24 (real) or 2^53 (double precision), the type rounds them: they would repeat.'
                                ELSE 'Inserts fail with "out of range" once the type''s IDs pass the largest value the column holds.' END,
                  HINT = format('Make the column bigint: ALTER TABLE %s ALTER COLUMN %I TYPE bigint.', c.tbl, c.attname);
    END LOOP;
END
$$;

COMMENT ON FUNCTION idgen_internal.check_key_types() IS
  'Event trigger function: refuses (or warns about) a column whose default is snowflake_next() or segment_next() and whose type cannot hold the IDs; idgen.key_type_check sets how.';

CREATE EVENT TRIGGER idgen_key_types ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', 'CREATE TABLE AS', 'SELECT INTO')
    EXECUTE FUNCTION idgen_internal.check_key_types();

COMMENT ON EVENT TRIGGER idgen_key_types IS
  'Checks the type of a column whose default is snowflake_next() or segment_next() (idgen_internal.check_key_types).';

-- requires:
--   key_types
--   idgen_internal::column_max

-- Moving an existing key column (serial, bigserial, identity, or a nextval() default) onto
-- DEFAULT snowflake_next(), in one transaction: the caller's, so a failure anywhere undoes all of
-- it. SECURITY INVOKER: the caller must own the tables it changes, as for ALTER TABLE itself,
-- and it is refused before anything of the table is read. The column's values are read as the
-- table's owner (idgen_internal.column_max). It changes only the table it is given (and, with
-- widen, the columns that reference its key); a sequence that other tables use or own is left as
-- it is, and said so. Each function returns the statements it ran (or, with dry_run, would run),
-- in order; what it cannot know (an application that declared the key 32-bit) is a WARNING.
CREATE FUNCTION idgen.convert_to_snowflake(
    tbl regclass, col name,
    widen boolean DEFAULT false, drop_sequence boolean DEFAULT false, dry_run boolean DEFAULT false)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    rel pg_class;
    att pg_attribute;
    k record;
    seq regclass;
    ident "char";
    max_id numeric;
    first_id bigint;
    narrow text[];
    refs text[];
    seq_users text[];
    seq_owner text;
    plan text[] := '{}';
    stmt text;
    -- The schema of pg_idgen's own functions (the extension's): this function's search_path
    -- names only pg_catalog.
    ext text := (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_idgen');
BEGIN
    IF tbl IS NULL OR col IS NULL OR widen IS NULL OR drop_sequence IS NULL OR dry_run IS NULL THEN
        RAISE EXCEPTION 'idgen.convert_to_snowflake: no argument may be NULL' USING ERRCODE = '22004';
    END IF;
    SELECT * INTO rel FROM pg_class WHERE oid = tbl;
    IF rel.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION 'idgen.convert_to_snowflake: % is not a table', tbl
            USING ERRCODE = '42809', HINT = 'Convert the key column of a table (or of a partitioned table).';
    END IF;
    IF NOT pg_has_role(current_user, rel.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'idgen.convert_to_snowflake: must be owner of table %', tbl
            USING ERRCODE = '42501', HINT = 'Its owner (or a member of the role that owns it) converts it, as for ALTER TABLE.';
    END IF;
    IF rel.relispartition THEN
        RAISE EXCEPTION 'idgen.convert_to_snowflake: % is a partition', tbl
            USING ERRCODE = '42809', HINT = 'Convert the partitioned table it belongs to: its partitions follow.';
    END IF;
    SELECT * INTO att FROM pg_attribute WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'idgen.convert_to_snowflake: column "%" of table % does not exist', col, tbl USING ERRCODE = '42703';
    END IF;
    ident := att.attidentity;
    seq := pg_get_serial_sequence(tbl::text, col)::regclass;
    IF seq IS NULL THEN
        -- A nextval() default on a sequence the column does not own.
        SELECT d.refobjid::regclass INTO seq
          FROM pg_attrdef ad
          JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                          AND d.refclassid = 'pg_class'::regclass
          JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
         WHERE ad.adrelid = tbl AND ad.adnum = att.attnum
         LIMIT 1;
    END IF;
    IF seq IS NULL THEN
        IF pg_get_expr((SELECT adbin FROM pg_attrdef WHERE adrelid = tbl AND adnum = att.attnum), tbl) ~ 'snowflake_next\(\)' THEN
            RAISE EXCEPTION 'idgen.convert_to_snowflake: column "%" of table % already defaults to snowflake_next()', col, tbl
                USING ERRCODE = '42710';
        END IF;
        RAISE EXCEPTION 'idgen.convert_to_snowflake: column "%" of table % takes its values from no sequence', col, tbl
            USING ERRCODE = '22023',
                  HINT = 'It converts serial, bigserial and identity columns, and columns whose default is nextval(); set any other default with ALTER TABLE ... SET DEFAULT snowflake_next().';
    END IF;
    SELECT * INTO k FROM idgen_internal.key_type_of(att.atttypid, att.atttypmod);
    IF k.base NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'numeric'::regtype) THEN
        RAISE EXCEPTION 'idgen.convert_to_snowflake: column "%" of table % is %, not an integer', col, tbl, format_type(att.atttypid, att.atttypmod)
            USING ERRCODE = '42804', HINT = 'Snowflake IDs go into bigint columns.';
    END IF;
    -- The Snowflake IDs made from now on must be above every value already there.
    max_id := idgen_internal.column_max(tbl, col);
    EXECUTE format('SELECT %s.id_from_timestamp(clock_timestamp())', ext) INTO first_id;
    IF max_id >= first_id THEN
        RAISE EXCEPTION 'idgen.convert_to_snowflake: column "%" of table % holds values up to %, not below %, the smallest Snowflake ID of this node now', col, tbl, max_id, first_id
            USING ERRCODE = '55000',
                  DETAIL = 'New IDs could repeat a value already in the column.',
                  HINT = 'If these values are Snowflake IDs of this layout, move this node past them first: SELECT idgen.snowflake_start_after(id_timestamp(<the largest>)).';
    END IF;
    -- The key if it cannot hold every bigint exactly (smallint, integer, a numeric with fewer than
    -- 19 integer digits or a negative scale), and every column of a foreign key that references it
    -- and cannot either (a partitioned table's column stands for its partitions').
    SELECT array_agg(x.name ORDER BY x.name), array_agg(x.alter ORDER BY x.name)
      INTO narrow, refs
      FROM (SELECT format('%s.%I', tbl, col) AS name,
                   format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint', tbl, col) AS alter
             WHERE NOT k.holds_bigint
            UNION
            SELECT format('%s.%I', c.conrelid::regclass, a.attname),
                   format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint', c.conrelid::regclass, a.attname)
              FROM pg_constraint c
              JOIN LATERAL unnest(c.conkey, c.confkey) AS f(fk, pk) ON true
              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = f.fk
              CROSS JOIN LATERAL idgen_internal.key_type_of(a.atttypid, a.atttypmod) t
             WHERE c.contype = 'f' AND c.confrelid = tbl AND f.pk = att.attnum AND c.conparentid = 0
               AND NOT t.holds_bigint) x;
    IF narrow IS NOT NULL THEN
        IF NOT widen AND NOT dry_run THEN
            RAISE EXCEPTION 'idgen.convert_to_snowflake: % cannot hold Snowflake IDs', array_to_string(narrow, ', ')
                USING ERRCODE = '42804',
                      DETAIL = format('Snowflake IDs are 64-bit; the key %s.%I is %s, and these columns (the key, or columns that reference it) cannot hold every bigint exactly.',
                                      tbl, col, format_type(att.atttypid, att.atttypmod)),
                      HINT = 'Call it with widen => true to change them to bigint in the same transaction (this rewrites those tables).';
        END IF;
        IF NOT widen THEN
            RAISE WARNING 'idgen.convert_to_snowflake: % cannot hold Snowflake IDs: the plan widens them, which needs widen => true', array_to_string(narrow, ', ');
        END IF;
        plan := plan || refs;
    END IF;
    IF NOT k.holds_bigint THEN
        -- What no catalog tells: an application (or its ORM) that declared the key 32-bit.
        RAISE WARNING 'idgen.convert_to_snowflake: the key %.% was %: declare it 64-bit in every application first', tbl, quote_ident(col), format_type(att.atttypid, att.atttypmod)
            USING DETAIL = 'Code that declared the key as a 32-bit integer cannot read Snowflake IDs. Django drops lookups beyond 32 bits for an AutoField: get(pk=...) raises DoesNotExist, update() and delete() touch no row, while old rows go on working.',
                  HINT = 'Django: make the model''s key a BigAutoField (DEFAULT_AUTO_FIELD); its contrib apps (auth, admin, contenttypes) keep AutoField keys: leave their tables unconverted. SQLAlchemy: BigInteger. Hibernate/JPA: long.';
    END IF;
    IF ident <> '' THEN
        -- The identity's sequence belongs to it and goes with it.
        plan := plan || format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    END IF;
    plan := plan || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s.snowflake_next()', tbl, col, ext);
    IF ident = '' THEN
        -- The sequence is this column's to change only if no other column uses it (the same
        -- column of the table's partitions and inheritance children is this one: SET DEFAULT
        -- reaches them too) and it is owned by this column or by none.
        WITH RECURSIVE tree(relid) AS (
            SELECT tbl::oid
            UNION
            SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.relid
        )
        SELECT array_agg(format('%s.%I', ad.adrelid::regclass, a.attname) ORDER BY ad.adrelid::regclass::text, a.attname) INTO seq_users
          FROM pg_depend d
          JOIN pg_attrdef ad ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
          JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
         WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = seq
           AND NOT (ad.adrelid IN (SELECT relid FROM tree) AND a.attname = col);
        SELECT format('%s.%I', d.refobjid::regclass, a.attname) INTO seq_owner
          FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
         WHERE d.classid = 'pg_class'::regclass AND d.objid = seq AND d.deptype = 'a'
           AND NOT (d.refobjid = tbl AND d.refobjsubid = att.attnum);
        IF seq_users IS NOT NULL OR seq_owner IS NOT NULL THEN
            RAISE NOTICE 'idgen.convert_to_snowflake: sequence % is left as it is', seq
                USING DETAIL = concat_ws(' ', 'It is shared:',
                                         'used by ' || array_to_string(seq_users, ', ') || '.',
                                         'owned by ' || seq_owner || '.');
        ELSIF drop_sequence THEN
            plan := plan || format('DROP SEQUENCE %s', seq);
        ELSIF EXISTS (SELECT FROM pg_depend WHERE classid = 'pg_class'::regclass AND objid = seq AND deptype = 'a') THEN
            plan := plan || format('ALTER SEQUENCE %s OWNED BY NONE', seq);
        END IF;
    END IF;
    FOREACH stmt IN ARRAY plan LOOP
        IF NOT dry_run THEN
            EXECUTE stmt;
        END IF;
        RETURN NEXT stmt;
    END LOOP;
END
$$;

CREATE FUNCTION idgen.convert_schema_to_snowflake(
    schema_name name,
    widen boolean DEFAULT false, drop_sequence boolean DEFAULT false, dry_run boolean DEFAULT true)
RETURNS TABLE (table_name regclass, column_name name, statement text)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c record;
    others text[];
BEGIN
    IF schema_name IS NULL OR widen IS NULL OR drop_sequence IS NULL OR dry_run IS NULL THEN
        RAISE EXCEPTION 'idgen.convert_schema_to_snowflake: no argument may be NULL' USING ERRCODE = '22004';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_namespace WHERE nspname = schema_name) THEN
        RAISE EXCEPTION 'idgen.convert_schema_to_snowflake: schema "%" does not exist', schema_name USING ERRCODE = '3F000';
    END IF;
    FOR c IN
        SELECT t.oid::regclass AS tbl, a.attname, pg_has_role(current_user, t.relowner, 'USAGE') AS mine
          FROM pg_class t
          JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = schema_name
          JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE t.relkind IN ('r', 'p') AND NOT t.relispartition
           AND (a.attidentity <> ''
                OR EXISTS (SELECT FROM pg_attrdef ad
                             JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                                             AND d.refclassid = 'pg_class'::regclass
                             JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
                            WHERE ad.adrelid = t.oid AND ad.adnum = a.attnum))
           AND NOT EXISTS (SELECT FROM pg_depend e WHERE e.classid = 'pg_class'::regclass AND e.objid = t.oid AND e.deptype = 'e')
         ORDER BY t.oid::regclass::text, a.attnum
    LOOP
        IF NOT c.mine THEN
            -- Another role's table: not read, not changed (its owner converts it).
            others := others || format('%s.%I', c.tbl, c.attname);
            CONTINUE;
        END IF;
        RETURN QUERY SELECT c.tbl, c.attname, s
                       FROM idgen.convert_to_snowflake(c.tbl, c.attname, widen, drop_sequence, dry_run) s;
    END LOOP;
    IF others IS NOT NULL THEN
        RAISE NOTICE 'idgen.convert_schema_to_snowflake: skipped the tables of other roles: %', array_to_string(others, ', ')
            USING HINT = 'Their owners convert them.';
    END IF;
END
$$;

COMMENT ON FUNCTION idgen.convert_to_snowflake(regclass, name, boolean, boolean, boolean) IS
  'Moves a serial, bigserial, identity or nextval()-default column onto DEFAULT snowflake_next(): checks its values are below the node''s next ID, widens keys that cannot hold every bigint and the columns that reference them (widen), drops the identity or detaches (or drops) a sequence no other column uses; returns the statements, run unless dry_run. For the table''s owner only; warns where applications must declare the key 64-bit.';

COMMENT ON FUNCTION idgen.convert_schema_to_snowflake(name, boolean, boolean, boolean) IS
  'idgen.convert_to_snowflake for every sequence-backed column of the caller''s tables in a schema (other roles'' tables are skipped, and named); lists the statements without running them unless dry_run => false.';

-- requires:
--   convert

-- Adopted sequences (src/adopt/): from adoption on, every draw from the sequence (a serial or
-- bigserial default, an IDENTITY column, nextval() in any statement, COPY) returns the node's next
-- Snowflake ID, with no change to the table, its default or the application. One row per
-- sequence, dumped with the database (pg_dump, pg_restore and pg_upgrade keep the adoption).
CREATE TABLE idgen_internal.adopted_sequences (
    seq regclass PRIMARY KEY,
    adopted_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    adopted_by name NOT NULL DEFAULT CURRENT_USER
);

SELECT pg_catalog.pg_extension_config_dump('idgen_internal.adopted_sequences', '');

COMMENT ON TABLE idgen_internal.adopted_sequences IS
    'Sequences whose draws return Snowflake IDs (idgen.adopt_sequence); written only by idgen_internal.adoption_record.';

CREATE VIEW idgen.adopted_sequences AS
    SELECT a.seq, a.adopted_at, a.adopted_by FROM idgen_internal.adopted_sequences a;

COMMENT ON VIEW idgen.adopted_sequences IS
    'The adopted sequences: every draw from them returns this node''s next Snowflake ID (idgen.adopt_sequence; idgen.release_sequence gives one back).';

COMMENT ON COLUMN idgen.adopted_sequences.seq IS 'The sequence.';

COMMENT ON COLUMN idgen.adopted_sequences.adopted_at IS 'When it was adopted.';

COMMENT ON COLUMN idgen.adopted_sequences.adopted_by IS 'The session user who adopted it.';

-- A dropped sequence leaves the table (DROP SEQUENCE, DROP TABLE of its serial or IDENTITY column,
-- DROP SCHEMA, DROP OWNED, ALTER TABLE ... DROP COLUMN or DROP IDENTITY): its row would otherwise
-- keep an OID that a later relation may be given. SECURITY DEFINER: anyone's DROP of their own
-- sequence removes its row; the function does nothing else.
CREATE FUNCTION idgen_internal.adopted_sequences_dropped() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    DELETE FROM idgen_internal.adopted_sequences a
     WHERE a.seq::oid IN (SELECT d.objid FROM pg_event_trigger_dropped_objects() d
                           WHERE d.classid = 'pg_class'::regclass AND d.object_type = 'sequence');
END
$$;

CREATE EVENT TRIGGER idgen_adopted_sequences_dropped ON sql_drop
    WHEN TAG IN ('DROP SEQUENCE', 'DROP TABLE', 'DROP SCHEMA', 'DROP OWNED', 'ALTER TABLE')
    EXECUTE FUNCTION idgen_internal.adopted_sequences_dropped();

COMMENT ON EVENT TRIGGER idgen_adopted_sequences_dropped IS
  'Forgets the adoption of a sequence that is dropped (idgen_internal.adopted_sequences_dropped).';

CREATE FUNCTION idgen_internal.adoption_record(seq regclass, adopt boolean, last_value bigint DEFAULT NULL)
RETURNS bigint VOLATILE PARALLEL UNSAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'adoption_record_wrapper';

CREATE FUNCTION idgen_internal.adoption_block_refusal(increment bigint) RETURNS text
STRICT STABLE PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'adoption_block_refusal_wrapper';

CREATE FUNCTION idgen_internal.sequence_next(seq regclass, increment bigint, checked boolean) RETURNS bigint
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'sequence_next_wrapper';

CREATE FUNCTION idgen_internal.sequence_nextval(seq regclass) RETURNS bigint
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'sequence_nextval_wrapper';

CREATE FUNCTION idgen_internal.sequence_currval(seq regclass) RETURNS bigint
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'sequence_currval_wrapper';

CREATE FUNCTION idgen_internal.sequence_setval(seq regclass, value bigint) RETURNS bigint
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'sequence_setval_wrapper';

CREATE FUNCTION idgen_internal.sequence_setval(seq regclass, value bigint, is_called boolean) RETURNS bigint
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'sequence_setval3_wrapper';

CREATE FUNCTION idgen_internal.sequence_lastval() RETURNS bigint
VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'sequence_lastval_wrapper';

-- The columns that draw from a sequence, one row each: an IDENTITY column, a column whose default
-- names it (a serial's), or one that only owns it.
CREATE FUNCTION idgen_internal.sequence_columns(seq regclass)
RETURNS TABLE (tbl regclass, col name, how text, typ regtype)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT DISTINCT ON (u.tbl::oid, u.col) u.tbl, u.col, u.how, u.typ FROM (
        SELECT c.oid::regclass AS tbl, a.attname AS col,
               CASE WHEN a.attidentity <> '' THEN 'identity' ELSE 'default' END AS how,
               a.atttypid::regtype AS typ
          FROM pg_depend d
          JOIN pg_attrdef ad ON d.classid = 'pg_attrdef'::regclass AND ad.oid = d.objid
          JOIN pg_class c ON c.oid = ad.adrelid
          JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
         WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = sequence_columns.seq
        UNION ALL
        SELECT c.oid::regclass, a.attname,
               CASE WHEN a.attidentity <> '' THEN 'identity' ELSE 'owner' END, a.atttypid::regtype
          FROM pg_depend d
          JOIN pg_class c ON c.oid = d.refobjid
          JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
         WHERE d.classid = 'pg_class'::regclass AND d.objid = sequence_columns.seq
           AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0
    ) u
    ORDER BY u.tbl::oid, u.col, CASE u.how WHEN 'identity' THEN 0 WHEN 'default' THEN 1 ELSE 2 END
$$;

-- Adopts one sequence: from now on its draws return Snowflake IDs. Returns what it did (or, with
-- dry_run, would do), one line per column that draws from it. Refused, with the reason, for a
-- sequence that is not bigint (or drawn into a column narrower than bigint), descending, CYCLE,
-- temporary, or of an INCREMENT the node's layout cannot serve in blocks. SECURITY INVOKER: the
-- caller must own the sequence, as for ALTER SEQUENCE.
CREATE FUNCTION idgen.adopt_sequence(seq regclass, dry_run boolean DEFAULT false)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    rel pg_class;
    s pg_sequence;
    c record;
    narrow text[] := '{}';
    lines text[] := '{}';
    block_refusal text;
    ext text := (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_idgen');
BEGIN
    IF seq IS NULL OR dry_run IS NULL THEN
        RAISE EXCEPTION 'idgen.adopt_sequence: no argument may be NULL' USING ERRCODE = '22004';
    END IF;
    SELECT * INTO rel FROM pg_class WHERE oid = seq;
    IF rel.relkind IS DISTINCT FROM 'S' THEN
        RAISE EXCEPTION 'idgen.adopt_sequence: % is not a sequence', seq
            USING ERRCODE = '42809', HINT = 'Name the sequence a serial or IDENTITY column draws from: pg_get_serial_sequence(''table'', ''column'').';
    END IF;
    IF NOT pg_has_role(current_user, rel.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'idgen.adopt_sequence: must be owner of sequence %', seq
            USING ERRCODE = '42501', HINT = 'Its owner (or a member of the role that owns it) adopts it, as for ALTER SEQUENCE.';
    END IF;
    IF rel.relpersistence = 't' THEN
        RAISE EXCEPTION 'idgen.adopt_sequence: % is a temporary sequence', seq
            USING ERRCODE = '0A000', HINT = 'Adopt the sequences of permanent tables.';
    END IF;
    IF EXISTS (SELECT FROM idgen.adopted_sequences a WHERE a.seq = adopt_sequence.seq) THEN
        RETURN NEXT format('sequence %s is adopted already', seq);
        RETURN;
    END IF;
    SELECT * INTO s FROM pg_sequence WHERE seqrelid = seq;
    FOR c IN SELECT * FROM idgen_internal.sequence_columns(seq) ORDER BY 1::text, 2 LOOP
        IF c.typ <> 'bigint'::regtype THEN
            narrow := narrow || format('%s.%I (%s)', c.tbl, c.col, c.typ);
        END IF;
        lines := lines || format('adopt sequence %s: column %s.%I (%s) draws Snowflake IDs', seq, c.tbl, c.col, c.how);
    END LOOP;
    IF s.seqtypid <> 'bigint'::regtype OR cardinality(narrow) > 0 THEN
        RAISE EXCEPTION 'idgen.adopt_sequence: % cannot hold Snowflake IDs: %', seq,
            CASE WHEN s.seqtypid <> 'bigint'::regtype THEN format('the sequence is %s', s.seqtypid::regtype)
                 ELSE format('it fills %s', array_to_string(narrow, ', ')) END
            USING ERRCODE = '22003',
                  HINT = format('Widen the key first: %s.convert_to_snowflake(table, column, widen => true) for a small table, or ALTER TABLE ... ALTER COLUMN ... TYPE bigint and ALTER SEQUENCE %s AS bigint; then adopt it. A segment type (%s.segment_next) gives dense 32-bit ranges where the key must stay 32-bit.', ext, seq, ext);
    END IF;
    IF s.seqincrement < 1 THEN
        RAISE EXCEPTION 'idgen.adopt_sequence: % is descending (INCREMENT %)', seq, s.seqincrement
            USING ERRCODE = '0A000', HINT = 'Snowflake IDs ascend; adopt ascending sequences only.';
    END IF;
    IF s.seqcycle THEN
        RAISE EXCEPTION 'idgen.adopt_sequence: % is CYCLE', seq
            USING ERRCODE = '0A000', HINT = format('ALTER SEQUENCE %s NO CYCLE first: a cycling sequence would start its plain numbers again.', seq);
    END IF;
    block_refusal := idgen_internal.adoption_block_refusal(s.seqincrement);
    IF block_refusal IS NOT NULL THEN
        RAISE EXCEPTION 'idgen.adopt_sequence: % cannot be served in blocks of INCREMENT %: %', seq, s.seqincrement, block_refusal
            USING ERRCODE = '0A000', HINT = 'Lower the sequence''s INCREMENT (and the ORM''s allocation size with it), or use a layout with the sequence in its lowest bits.';
    END IF;
    IF cardinality(lines) = 0 THEN
        lines := ARRAY[format('adopt sequence %s (no column draws from it: nextval() calls do)', seq)];
    END IF;
    IF s.seqincrement > 1 THEN
        lines := lines || format('each draw of %s reserves the %s IDs from %s below to %s above the one it returns (INCREMENT %s)',
                                 seq, 2 * s.seqincrement + 1, s.seqincrement, s.seqincrement, s.seqincrement);
    END IF;
    IF NOT dry_run THEN
        PERFORM idgen_internal.adoption_record(seq, true);
    END IF;
    RETURN QUERY SELECT unnest(lines);
END
$$;

-- Adopts every sequence of a schema that the caller owns. Returns one row per sequence: adopted,
-- or refused and why (a refusal does not stop the others); with dry_run, what would be done.
CREATE FUNCTION idgen.adopt_sequences(schema regnamespace, dry_run boolean DEFAULT false)
RETURNS TABLE (seq regclass, result text)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    r record;
    done text;
BEGIN
    IF schema IS NULL OR dry_run IS NULL THEN
        RAISE EXCEPTION 'idgen.adopt_sequences: no argument may be NULL' USING ERRCODE = '22004';
    END IF;
    FOR r IN SELECT c.oid::regclass AS s FROM pg_class c
              WHERE c.relnamespace = schema AND c.relkind = 'S' AND c.relpersistence <> 't'
                AND pg_has_role(current_user, c.relowner, 'USAGE')
              ORDER BY c.relname LOOP
        BEGIN
            SELECT string_agg(l, '; ') INTO done FROM idgen.adopt_sequence(r.s, dry_run) AS l;
            seq := r.s;
            result := CASE WHEN dry_run THEN 'would ' ELSE '' END || done;
        EXCEPTION WHEN OTHERS THEN
            seq := r.s;
            result := 'refused: ' || SQLERRM;
        END;
        RETURN NEXT;
    END LOOP;
END
$$;

-- Gives an adopted sequence back: it draws plain numbers again, starting above every value
-- handed out (this node's next Snowflake ID, and the largest value of every column that draws
-- from it, which may hold other nodes' IDs). Returns the sequence's new last value.
CREATE FUNCTION idgen.release_sequence(seq regclass)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    rel pg_class;
    floor numeric;
    c record;
    ext text := (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_idgen');
BEGIN
    IF seq IS NULL THEN
        RAISE EXCEPTION 'idgen.release_sequence: no argument may be NULL' USING ERRCODE = '22004';
    END IF;
    SELECT * INTO rel FROM pg_class WHERE oid = seq;
    IF NOT pg_has_role(current_user, rel.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'idgen.release_sequence: must be owner of sequence %', seq
            USING ERRCODE = '42501', HINT = 'Its owner (or a member of the role that owns it) gives it back, as for ALTER SEQUENCE.';
    END IF;
    IF NOT EXISTS (SELECT FROM idgen.adopted_sequences a WHERE a.seq = release_sequence.seq) THEN
        RAISE EXCEPTION 'idgen.release_sequence: % is not adopted', seq
            USING ERRCODE = '55000', HINT = 'idgen.adopted_sequences lists the adopted sequences.';
    END IF;
    EXECUTE format('SELECT %I.snowflake_next()', ext) INTO floor;
    FOR c IN SELECT * FROM idgen_internal.sequence_columns(seq) LOOP
        floor := greatest(floor, idgen_internal.column_max(c.tbl, c.col));
    END LOOP;
    RETURN idgen_internal.adoption_record(seq, false, floor::bigint);
END
$$;

COMMENT ON FUNCTION idgen.adopt_sequence(regclass, boolean) IS
  'Adopts a sequence: from now on every draw from it (a serial or bigserial default, an IDENTITY column, nextval() in any statement, COPY FROM) returns this node''s next Snowflake ID, with no change to the table or the application; INCREMENT n draws reserve a block of 2n + 1 IDs each. Returns what it does (with dry_run, would do), one line per column that draws from it. The owner of the sequence adopts it.';

COMMENT ON FUNCTION idgen.adopt_sequences(regnamespace, boolean) IS
  'Adopts every sequence of a schema that the caller owns: one row per sequence, adopted or refused and why (a refusal does not stop the others); with dry_run, what would be done.';

COMMENT ON FUNCTION idgen.release_sequence(regclass) IS
  'Gives an adopted sequence back: it draws plain numbers again, above every value handed out (this node''s next Snowflake ID and the largest value of every column that draws from it). Returns its new last value.';

COMMENT ON FUNCTION idgen_internal.adopted_sequences_dropped() IS
  'Event trigger function: removes the row of an adopted sequence that is dropped from idgen_internal.adopted_sequences.';

COMMENT ON FUNCTION idgen_internal.adoption_record(regclass, boolean, bigint) IS
  'Records an adoption or its end (for idgen.adopt_sequence and idgen.release_sequence): checks the caller owns the sequence, writes idgen_internal.adopted_sequences, sets the sequence at its MAXVALUE (adopted) or last_value (given back).';

COMMENT ON FUNCTION idgen_internal.adoption_block_refusal(bigint) IS
  'Why the node''s layout cannot serve an adopted sequence of this INCREMENT in blocks, or NULL when it can.';

COMMENT ON FUNCTION idgen_internal.sequence_columns(regclass) IS
  'The columns that draw from a sequence, one row each: IDENTITY, a default that names it (a serial''s), or only owning it.';

COMMENT ON FUNCTION idgen_internal.sequence_next(regclass, bigint, boolean) IS
  'What nextval() of an adopted sequence and its IDENTITY column''s next value become: the node''s next Snowflake ID (the middle of a reserved block for an increment above 1); checked: nextval''s privilege check.';

COMMENT ON FUNCTION idgen_internal.sequence_nextval(regclass) IS
  'nextval() of a sequence named at run time, where some sequence is adopted: the adopted draw, or PostgreSQL''s nextval.';

COMMENT ON FUNCTION idgen_internal.sequence_currval(regclass) IS
  'currval() of an adopted sequence: the value this session last drew from it; PostgreSQL''s for another.';

COMMENT ON FUNCTION idgen_internal.sequence_setval(regclass, bigint) IS
  'setval() of an adopted sequence: a value below the node''s next ID (or its MAXVALUE, as pg_dump writes it) is accepted and changes nothing but currval; one ahead is refused (22003). PostgreSQL''s for another.';

COMMENT ON FUNCTION idgen_internal.sequence_setval(regclass, bigint, boolean) IS
  'setval(seq, value, is_called) of an adopted sequence, as setval(seq, value); PostgreSQL''s for another.';

COMMENT ON FUNCTION idgen_internal.sequence_lastval() IS
  'lastval() where some sequence is adopted: the session''s last adopted draw; PostgreSQL''s where it drew from none; refused (55000) where it drew from both.';

-- requires:
--   adopt

-- Online key conversion (src/online/): a 32-bit (or 16-bit) key column and every column that
-- references it through a foreign key are widened to bigint, and the key moved onto pg_idgen,
-- while the application keeps reading and writing. The recipe is the hand-written one (a shadow
-- column kept equal by a trigger, a copy in batches, CHECK constraints and foreign keys added NOT
-- VALID and validated without blocking writes, indexes built CONCURRENTLY, then one short swap),
-- run step by step by a background worker as the converting role, with each step recorded here so
-- that a cancelled, killed or restarted conversion resumes where it was.
--
-- Rows are visible and writable only by members of the role that started the conversion (row
-- level security): the worker and every function below run as that role (SECURITY INVOKER), and
-- the statements a conversion runs are ones that role could run itself.
CREATE TABLE idgen_internal.online_conversions (
    id bigint PRIMARY KEY,
    relation oid NOT NULL,
    relation_name text NOT NULL,
    column_name name NOT NULL,
    onto text NOT NULL CHECK (onto IN ('snowflake', 'adopted', 'sequence')),
    role oid NOT NULL,
    batch_rows integer NOT NULL CHECK (batch_rows > 0),
    batch_pause interval NOT NULL,
    lock_timeout interval NOT NULL,
    state text NOT NULL DEFAULT 'starting'
        CHECK (state IN ('starting', 'running', 'stopped', 'failed', 'done', 'aborted')),
    worker_pid integer,
    error text,
    started_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    finished_at timestamptz
);

CREATE UNIQUE INDEX online_conversions_one_active ON idgen_internal.online_conversions (relation)
    WHERE state NOT IN ('done', 'aborted');

CREATE TABLE idgen_internal.online_conversion_steps (
    conversion bigint NOT NULL REFERENCES idgen_internal.online_conversions ON DELETE CASCADE,
    role oid NOT NULL,
    step integer NOT NULL,
    kind text NOT NULL CHECK (kind IN ('lock', 'copy', 'concurrently', 'run')),
    relation oid NOT NULL,
    statement text NOT NULL,
    -- A copy's progress: the table's blocks when it started, the next one to copy.
    last_block bigint,
    next_block bigint NOT NULL DEFAULT 0,
    rows_done bigint NOT NULL DEFAULT 0,
    rows_total bigint,
    attempts integer NOT NULL DEFAULT 0,
    lock_ms double precision,
    done_at timestamptz,
    PRIMARY KEY (conversion, step)
);

-- A conversion is its own node's: a publication FOR ALL TABLES publishes these tables too, and a
-- subscriber that received a conversion would resume it there at its next start, running the
-- publisher's steps against its own tables (under OIDs and roles that mean something else there).
-- So their rows stop at a logical replication apply worker (a REPLICA trigger fires only with
-- session_replication_role = replica, as apply workers run). A physical standby has them, and
-- resumes the conversion once promoted: its tables are the same.
CREATE FUNCTION idgen_internal.online_conversion_not_applied() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN NULL;
END
$$;

CREATE TRIGGER not_applied BEFORE INSERT OR UPDATE OR DELETE ON idgen_internal.online_conversions
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.online_conversion_not_applied();

CREATE TRIGGER not_applied BEFORE INSERT OR UPDATE OR DELETE ON idgen_internal.online_conversion_steps
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.online_conversion_not_applied();

COMMENT ON FUNCTION idgen_internal.online_conversion_not_applied() IS
    'Drops a row change that logical replication applies to a table of online conversions (a REPLICA trigger): a conversion belongs to the node that started it.';

COMMENT ON TABLE idgen_internal.online_conversions IS
    'Online key conversions (idgen.convert_online), one row each; a row is visible only to members of the role that started it.';

COMMENT ON TABLE idgen_internal.online_conversion_steps IS
    'The steps of each online conversion, in order, with what is done (idgen.convert_online lists them).';

-- Whether a conversion's worker runs: the worker holds a lock for as long as it lives
-- (src/online/mod.rs, LOCK_SPACE): a session-level advisory lock on the conversion's id in a key
-- space of its own (objsubid 26980; pg_advisory_lock's are 1 and 2), taken before its first
-- step and released only by its exit, a crash included. No SQL function takes such a lock, and
-- a reused process ID holds none, so the holder is the conversion's worker; a second worker
-- started for the same conversion finds it held and ends at once. pg_locks is read anew at each
-- call (pg_stat_activity, once per transaction).
CREATE FUNCTION idgen_internal.online_conversion_worker(conv bigint) RETURNS integer
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
    SELECT l.pid FROM pg_catalog.pg_locks l
     WHERE l.locktype = 'advisory' AND l.objsubid = 26980 AND l.granted AND l.mode = 'ExclusiveLock'
       AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())
       AND l.classid = (conv >> 32)::pg_catalog.oid AND l.objid = (conv & 4294967295)::pg_catalog.oid
     LIMIT 1;
$$;

-- The stored state of a conversion as the latest snapshot sees it (NULL if the caller is not a
-- member of its role), whatever the caller's snapshot.
CREATE FUNCTION idgen_internal.online_conversion_latest_state(conv bigint) RETURNS text
VOLATILE PARALLEL UNSAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'online_conversion_latest_state_wrapper';

-- The state the view shows. A stored 'running' (or 'starting') with no worker is a worker that
-- ended without saying how (killed, cancelled, the server restarted): 'stopped'. But the
-- caller's snapshot may be older than the worker's last commit: a worker records 'done'
-- (or 'failed'), commits, and exits, so a statement that began before that commit sees
-- 'running' and then finds no worker. So before saying 'stopped' this looks at the stored state
-- as it is after finding no worker, and then for a worker again (one started in between).
CREATE FUNCTION idgen_internal.online_conversion_state(conv bigint, stored text, updated timestamptz) RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    latest text := stored;
BEGIN
    IF stored NOT IN ('starting', 'running') OR idgen_internal.online_conversion_worker(conv) IS NOT NULL THEN
        RETURN stored;
    END IF;
    FOR attempt IN 1..2 LOOP
        latest := coalesce(idgen_internal.online_conversion_latest_state(conv), latest);
        IF latest NOT IN ('starting', 'running') OR idgen_internal.online_conversion_worker(conv) IS NOT NULL THEN
            RETURN latest;
        END IF;
    END LOOP;
    -- A worker just started holds its lock only once it has connected: 'starting' becomes
    -- 'stopped' only if none has shown up within a minute.
    IF latest = 'starting' AND updated >= clock_timestamp() - interval '1 minute' THEN
        RETURN 'starting';
    END IF;
    RETURN 'stopped';
END
$$;

CREATE VIEW idgen.online_conversions WITH (security_invoker = true) AS
    SELECT c.id, c.relation_name AS table_name, c.column_name, c.onto,
           idgen_internal.online_conversion_state(c.id, c.state, c.updated_at) AS state,
           (SELECT s.step FROM idgen_internal.online_conversion_steps s
             WHERE s.conversion = c.id AND s.done_at IS NULL ORDER BY s.step LIMIT 1) AS next_step,
           (SELECT count(*) FROM idgen_internal.online_conversion_steps s WHERE s.conversion = c.id)::integer AS steps,
           (SELECT s.kind || ': ' || s.statement FROM idgen_internal.online_conversion_steps s
             WHERE s.conversion = c.id AND s.done_at IS NULL ORDER BY s.step LIMIT 1) AS doing,
           (SELECT coalesce(sum(s.rows_done), 0) FROM idgen_internal.online_conversion_steps s
             WHERE s.conversion = c.id AND s.kind = 'copy')::bigint AS rows_done,
           (SELECT coalesce(sum(greatest(s.rows_total - s.rows_done, 0)) FILTER (WHERE s.done_at IS NULL), 0)
              FROM idgen_internal.online_conversion_steps s
             WHERE s.conversion = c.id AND s.kind = 'copy')::bigint AS rows_left,
           (SELECT coalesce(sum(s.lock_ms), 0) FROM idgen_internal.online_conversion_steps s
             WHERE s.conversion = c.id) AS lock_ms_total,
           (SELECT coalesce(max(s.lock_ms), 0) FROM idgen_internal.online_conversion_steps s
             WHERE s.conversion = c.id) AS lock_ms_max,
           (SELECT coalesce(sum(s.attempts), 0) FROM idgen_internal.online_conversion_steps s
             WHERE s.conversion = c.id AND s.kind = 'lock')::integer AS lock_attempts,
           idgen_internal.online_conversion_worker(c.id) IS NOT NULL AS running, c.worker_pid, c.error,
           c.started_at, c.updated_at, c.finished_at
      FROM idgen_internal.online_conversions c;

COMMENT ON VIEW idgen.online_conversions IS
    'Online key conversions the caller may see (those started by a role it is a member of): state, the step being done, rows copied and left, and how long the steps held locks that block the application (lock_ms_total, lock_ms_max).';

COMMENT ON COLUMN idgen.online_conversions.id IS 'The conversion.';

COMMENT ON COLUMN idgen.online_conversions.table_name IS 'The table whose key is converted.';

COMMENT ON COLUMN idgen.online_conversions.column_name IS 'The key column.';

COMMENT ON COLUMN idgen.online_conversions.onto IS 'What the key takes its values from afterwards: snowflake (DEFAULT snowflake_next()), adopted (its sequence, adopted), sequence (its sequence, widened).';

COMMENT ON COLUMN idgen.online_conversions.state IS 'starting, running, stopped (cancelled, killed, or the server restarted: its worker is gone; idgen.convert_online_resume goes on), failed (error says why), done, aborted.';

COMMENT ON COLUMN idgen.online_conversions.next_step IS 'The number of the first step not done.';

COMMENT ON COLUMN idgen.online_conversions.steps IS 'How many steps there are.';

COMMENT ON COLUMN idgen.online_conversions.doing IS 'The first step not done: its kind and statement.';

COMMENT ON COLUMN idgen.online_conversions.rows_done IS 'Rows copied into the new columns so far.';

COMMENT ON COLUMN idgen.online_conversions.rows_left IS 'Rows left to copy, as estimated when each copy began.';

COMMENT ON COLUMN idgen.online_conversions.lock_ms_total IS 'Milliseconds, in total, that the steps held locks stronger than ROW EXCLUSIVE (which block the application''s reads or writes).';

COMMENT ON COLUMN idgen.online_conversions.lock_ms_max IS 'The longest such hold, in milliseconds.';

COMMENT ON COLUMN idgen.online_conversions.lock_attempts IS 'Attempts of the steps that take such locks (more than one each: a lock_timeout expired and the step was retried).';

COMMENT ON COLUMN idgen.online_conversions.running IS 'Whether its worker runs now (it holds the conversion''s lock).';

COMMENT ON COLUMN idgen.online_conversions.worker_pid IS 'The process ID of its last worker.';

COMMENT ON COLUMN idgen.online_conversions.error IS 'Why it failed or stopped.';

COMMENT ON COLUMN idgen.online_conversions.started_at IS 'When it was started.';

COMMENT ON COLUMN idgen.online_conversions.updated_at IS 'When a step last finished.';

COMMENT ON COLUMN idgen.online_conversions.finished_at IS 'When it was done or aborted.';

-- The trigger that keeps each new column equal to its old one on every INSERT and UPDATE
-- (arguments: old, new, old, new, ...). C: no rights, no table read, no search path.
CREATE FUNCTION idgen_internal.online_conversion_copy() RETURNS trigger
LANGUAGE c AS 'MODULE_PATHNAME', 'online_conversion_copy_wrapper';

-- The steps: what idgen.convert_online runs, in order (or lists, with dry_run). Refuses, with the
-- reason, what it cannot convert online.
CREATE TYPE idgen_internal.online_column AS (
    rel oid, attnum smallint, attname name, newname name, narrow boolean, not_null boolean,
    fk oid, fkname name, fkdef text, is_key boolean);

COMMENT ON TYPE idgen_internal.online_column IS
    'A column an online conversion changes (idgen_internal.online_conversion_plan): the key, or a column of a foreign key that references it; narrow if it is widened.';

CREATE TYPE idgen_internal.online_step AS (step integer, kind text, relation regclass, statement text);

COMMENT ON TYPE idgen_internal.online_step IS 'A step of an online conversion (idgen_internal.online_conversion_plan).';

CREATE FUNCTION idgen_internal.online_conversion_plan(tbl regclass, col name, onto text, conv bigint, subscribers_ready boolean)
RETURNS SETOF idgen_internal.online_step
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext text := (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_idgen');
    fn constant text := 'idgen.convert_online';
    att pg_attribute;
    seq regclass;
    seqname text;
    defexpr text;
    ident "char";
    s pg_sequence;
    -- The columns: the key, and each column of a foreign key that references it; every table
    -- involved (the key's first).
    cs idgen_internal.online_column[];
    tables oid[];
    x oid;
    r record;
    k record;
    i integer := 0;
    n integer := 0;
    trig text := format('~idgen_online_%s', conv);
    -- The tables published with all their columns, and what their subscribers' copies need.
    published text[] := '{}';
    sub_cols text;
    sets text;
    args text;
    adds text;
    swap text[] := '{}';
    after text[] := '{}';
    -- The old indexes dropped after the swap: pairs of (table, index).
    old_indexes text[] := '{}';
    ri oid;
    cols text;
    pk_index oid;
BEGIN
    SELECT * INTO att FROM pg_attribute WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION '%: column "%" of table % does not exist', fn, col, tbl USING ERRCODE = '42703';
    END IF;
    SELECT * INTO k FROM idgen_internal.key_type_of(att.atttypid, att.atttypmod);
    IF k.base NOT IN ('int2'::regtype, 'int4'::regtype) THEN
        RAISE EXCEPTION '%: column "%" of table % is %, not smallint or integer', fn, col, tbl, format_type(att.atttypid, att.atttypmod)
            USING ERRCODE = '42804',
                  HINT = CASE WHEN k.base = 'int8'::regtype
                              THEN format('It holds Snowflake IDs already: %s.convert_to_snowflake(%L, %L) moves it onto snowflake_next() without rewriting a row.', 'idgen', tbl::text, col)
                              ELSE 'It widens smallint and integer keys.' END;
    END IF;
    ident := att.attidentity;
    seq := pg_get_serial_sequence(tbl::text, col)::regclass;
    defexpr := pg_get_expr((SELECT adbin FROM pg_attrdef WHERE adrelid = tbl AND adnum = att.attnum), tbl);
    IF seq IS NULL AND defexpr IS NOT NULL THEN
        SELECT d.refobjid::regclass INTO seq
          FROM pg_attrdef ad
          JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid AND d.refclassid = 'pg_class'::regclass
          JOIN pg_class c ON c.oid = d.refobjid AND c.relkind = 'S'
         WHERE ad.adrelid = tbl AND ad.adnum = att.attnum LIMIT 1;
    END IF;
    IF seq IS NULL AND onto <> 'snowflake' THEN
        RAISE EXCEPTION '%: column "%" of table % takes its values from no sequence', fn, col, tbl
            USING ERRCODE = '22023', HINT = 'Convert it with onto => ''snowflake'' (DEFAULT snowflake_next()).';
    END IF;
    SELECT i2.indexrelid INTO pk_index
      FROM pg_index i2 JOIN pg_constraint c ON c.conindid = i2.indexrelid AND c.contype IN ('p', 'u') AND c.conrelid = tbl
     WHERE i2.indrelid = tbl AND i2.indnatts = 1 AND i2.indkey[0] = att.attnum
     ORDER BY c.contype LIMIT 1;
    IF pk_index IS NULL THEN
        RAISE EXCEPTION '%: column "%" of table % is not a primary key or unique key of its own', fn, col, tbl
            USING ERRCODE = '0A000',
                  HINT = 'The online conversion keeps the key unique throughout through a unique index on the new column; it converts a column that is a table''s primary key, or a UNIQUE constraint, by itself.';
    END IF;
    cs := ARRAY[ROW(tbl, att.attnum, att.attname, left(att.attname, 53) || '_idgen_new', true, att.attnotnull, NULL, NULL, NULL, true)::idgen_internal.online_column];
    FOR r IN
        SELECT c.oid, c.conname, c.conrelid, c.conkey, c.confkey, c.confupdtype, c.confdeltype, c.confmatchtype,
               c.condeferrable, c.condeferred, c.conparentid, c.convalidated, to_jsonb(c) ->> 'conenforced' AS conenforced
          FROM pg_constraint c
         WHERE c.contype = 'f' AND c.confrelid = tbl AND att.attnum = ANY (c.confkey)
         ORDER BY c.conrelid, c.conname
    LOOP
        -- PostgreSQL 18's NOT ENFORCED foreign keys (the column is read as JSON: 15-17 have none).
        IF r.conenforced::boolean IS FALSE THEN
            RAISE EXCEPTION '%: the foreign key % of % (to %) is NOT ENFORCED', fn, quote_ident(r.conname), r.conrelid::regclass, tbl
                USING ERRCODE = '0A000', HINT = 'Drop it before the conversion and create it again after, or enforce it first.';
        END IF;
        IF array_length(r.confkey, 1) > 1 OR r.conparentid <> 0 THEN
            RAISE EXCEPTION '%: the foreign key % of % references % with other columns or through a partition', fn, quote_ident(r.conname), r.conrelid::regclass, tbl
                USING ERRCODE = '0A000', HINT = 'It converts keys that foreign keys of one column reference, from tables that are not partitioned.';
        END IF;
        SELECT * INTO k FROM pg_attribute a CROSS JOIN LATERAL idgen_internal.key_type_of(a.atttypid, a.atttypmod) t
         WHERE a.attrelid = r.conrelid AND a.attnum = r.conkey[1];
        IF k.base NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) THEN
            RAISE EXCEPTION '%: the foreign key % of % is on a column of type %', fn, quote_ident(r.conname), r.conrelid::regclass, format_type(k.atttypid, k.atttypmod)
                USING ERRCODE = '0A000', HINT = 'It converts columns of type smallint, integer or bigint.';
        END IF;
        cs := cs || (
            SELECT ROW(r.conrelid, k.attnum, k.attname,
                   CASE WHEN k.base = 'int8'::regtype THEN k.attname ELSE left(k.attname, 53) || '_idgen_new' END,
                   k.base <> 'int8'::regtype, k.attnotnull, r.oid, r.conname,
                   concat_ws(' ',
                       CASE r.confmatchtype WHEN 'f' THEN 'MATCH FULL' END,
                       'ON UPDATE ' || CASE r.confupdtype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END,
                       'ON DELETE ' || CASE r.confdeltype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END,
                       CASE WHEN r.condeferrable THEN 'DEFERRABLE' END,
                       CASE WHEN r.condeferred THEN 'INITIALLY DEFERRED' END),
                   false)::idgen_internal.online_column);
    END LOOP;
    SELECT array_agg(DISTINCT c.rel) INTO tables FROM unnest(cs) c;
    tables := array_prepend(tbl::oid, array_remove(tables, tbl::oid));
    -- What it cannot convert online, table by table.
    FOREACH x IN ARRAY tables LOOP
        SELECT c.* INTO r FROM pg_class c WHERE c.oid = x;
        IF r.relkind <> 'r' OR r.relispartition OR EXISTS (SELECT FROM pg_inherits WHERE inhrelid = x OR inhparent = x) THEN
            RAISE EXCEPTION '%: % is partitioned, a partition or in an inheritance tree', fn, x::regclass
                USING ERRCODE = '0A000',
                      HINT = format('Convert it offline (%s.convert_to_snowflake with widen => true) in a maintenance window; the online conversion handles plain tables.', 'idgen');
        END IF;
        IF NOT pg_has_role(current_user, r.relowner, 'USAGE') THEN
            RAISE EXCEPTION '%: must be owner of table %', fn, x::regclass
                USING ERRCODE = '42501', HINT = 'The owner of every table involved (the key''s, and each that references it) runs the conversion.';
        END IF;
        IF NOT has_schema_privilege(current_user, r.relnamespace, 'CREATE') THEN
            RAISE EXCEPTION '%: the conversion builds indexes on %, and % may not create objects in schema %', fn, x::regclass, current_user, r.relnamespace::regnamespace
                USING ERRCODE = '42501',
                      HINT = format('CREATE INDEX needs the CREATE privilege on the table''s schema: GRANT CREATE ON SCHEMA %s TO %I for the conversion.', r.relnamespace::regnamespace, current_user);
        END IF;
        -- Published with all its columns (no column list), and a column of it widened (a bigint
        -- column that references the key changes in place): the new columns are published while
        -- it runs, and the old ones until its last step, so every subscriber's table must have
        -- them first, and a bigint key before the swap (docs/adopting.md, "Published tables").
        -- (A column list or a row filter that names a column to widen is refused below: it
        -- depends on the column.)
        IF EXISTS (SELECT FROM unnest(cs) c WHERE c.rel = x AND c.narrow)
           AND EXISTS (SELECT FROM pg_publication p
                    WHERE p.puballtables
                       OR EXISTS (SELECT FROM pg_publication_rel pr WHERE pr.prpubid = p.oid AND pr.prrelid = x AND pr.prattrs IS NULL)
                       OR EXISTS (SELECT FROM pg_publication_namespace pn WHERE pn.pnpubid = p.oid AND pn.pnnspid = r.relnamespace)) THEN
            published := published || x::regclass::text;
            sub_cols := concat_ws('; ', sub_cols, (
                SELECT format('ALTER TABLE %s %s', x::regclass,
                              string_agg(format('ALTER COLUMN %I TYPE bigint, ADD COLUMN %I bigint, ADD COLUMN %I %s',
                                                c.attname, c.newname, left(c.attname, 53) || '_idgen_old',
                                                format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY c.attnum))
                  FROM unnest(cs) c JOIN pg_attribute a ON a.attrelid = c.rel AND a.attnum = c.attnum
                 WHERE c.rel = x AND c.narrow));
        END IF;
        -- A CHECK that is NOT VALID, on any column: the copy rewrites every row, and a row that
        -- breaks it (as old rows may) would stop the copy.
        FOR k IN SELECT o.conname FROM pg_constraint o
                  WHERE o.conrelid = x AND o.contype = 'c' AND NOT o.convalidated
                    AND pg_get_constraintdef(o.oid) !~ 'NOT ENFORCED$' LIMIT 1 LOOP
            RAISE EXCEPTION '%: the CHECK constraint % of % is NOT VALID', fn, quote_ident(k.conname), x::regclass
                USING ERRCODE = '0A000',
                      DETAIL = 'The copy writes every row again, which checks it on rows it has never been checked on: one that breaks it would stop the copy.',
                      HINT = format('Validate it first (ALTER TABLE %s VALIDATE CONSTRAINT %I), or drop it.', x::regclass, k.conname);
        END LOOP;
        -- Anything else that depends on a column to widen: a view, a rule, a policy, a trigger's
        -- column list, a generated column, an exclusion constraint, an extended statistic, an
        -- index on an expression of it or with a predicate that holds quoted names or literals.
        -- (A CHECK is built again on the new columns.)
        FOR k IN
            SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS what, c.attname
              FROM unnest(cs) c
              JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = c.rel AND d.refobjsubid = c.attnum
             WHERE c.rel = x AND c.narrow AND d.deptype IN ('n', 'a')
               AND NOT (d.classid = 'pg_attrdef'::regclass AND EXISTS (SELECT FROM pg_attrdef ad WHERE ad.oid = d.objid AND ad.adnum = c.attnum))
               AND NOT (d.classid = 'pg_class'::regclass AND EXISTS (SELECT FROM pg_class sq WHERE sq.oid = d.objid AND sq.relkind = 'S'))
               AND NOT (d.classid = 'pg_constraint'::regclass AND EXISTS (SELECT FROM pg_constraint o WHERE o.oid = d.objid
                                                           AND (o.contype IN ('p', 'u', 'n', 'c') OR o.oid IN (SELECT f.fk FROM unnest(cs) f))))
               AND NOT (d.classid = 'pg_class'::regclass AND EXISTS (
                        SELECT FROM pg_index ix WHERE ix.indexrelid = d.objid AND ix.indexprs IS NULL
                           AND (ix.indpred IS NULL OR pg_get_expr(ix.indpred, ix.indrelid) !~ '[''"]')))
             LIMIT 1
        LOOP
            RAISE EXCEPTION '%: % depends on column "%" of %', fn, k.what, k.attname, x::regclass
                USING ERRCODE = '0A000',
                      HINT = 'Drop it before the conversion and create it again after, or convert the table offline.';
        END LOOP;
        -- Unique and primary key constraints on a column to widen other than the key's: they are
        -- rebuilt too, through USING INDEX (btree, plain columns).
        FOR k IN
            SELECT o.conname, c.attname FROM unnest(cs) c
              JOIN pg_constraint o ON o.conrelid = c.rel AND c.attnum = ANY (o.conkey) AND o.contype IN ('p', 'u', 'x')
              JOIN pg_index ix ON ix.indexrelid = o.conindid
             WHERE c.rel = x AND c.narrow
               AND (o.contype = 'x' OR ix.indexprs IS NOT NULL OR ix.indpred IS NOT NULL OR EXISTS (SELECT FROM unnest(ix.indoption::int2[]) v WHERE v <> 0))
             LIMIT 1
        LOOP
            RAISE EXCEPTION '%: constraint % on column "%" of % cannot be rebuilt online', fn, quote_ident(k.conname), k.attname, x::regclass
                USING ERRCODE = '0A000', HINT = 'It rebuilds primary key and unique constraints on plain columns in ascending order.';
        END LOOP;
        FOR k IN
            SELECT c.attname, w.newname FROM unnest(cs) c
             CROSS JOIN LATERAL (VALUES (c.newname), (left(c.attname, 53) || '_idgen_old')) w(newname)
             WHERE c.rel = x AND c.narrow AND EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = x AND a.attname = w.newname AND NOT a.attisdropped)
               AND (conv = 0 OR NOT EXISTS (SELECT FROM pg_trigger t WHERE t.tgrelid = x AND t.tgname = trig))
             LIMIT 1
        LOOP
            RAISE EXCEPTION '%: % has a column "%" already', fn, x::regclass, k.newname
                USING ERRCODE = '42701', HINT = format('The conversion adds it beside "%s"; rename that column first.', k.attname);
        END LOOP;
        -- Its trigger must fire after every BEFORE row trigger that could change a column.
        FOR k IN SELECT t.tgname FROM pg_trigger t
                  WHERE t.tgrelid = x AND NOT t.tgisinternal AND (t.tgtype & 2) <> 0 AND t.tgname > trig LIMIT 1 LOOP
            RAISE EXCEPTION '%: the BEFORE trigger % of % fires after the conversion''s', fn, quote_ident(k.tgname), x::regclass
                USING ERRCODE = '0A000', HINT = format('Rename it so that it sorts before %s.', quote_ident(trig));
        END LOOP;
    END LOOP;
    IF published <> '{}' AND NOT subscribers_ready THEN
        RAISE EXCEPTION '%: % published (logical replication)', fn, array_to_string(published, ', ') || CASE WHEN cardinality(published) > 1 THEN ' are' ELSE ' is' END
            USING ERRCODE = '0A000',
                  DETAIL = 'While it runs the new columns are published, and the old ones until its last step: a subscriber whose table lacks them stops applying changes; and after the swap the key''s new values need a bigint column there.',
                  HINT = format('On each subscriber first run %s (the ALTER COLUMN ... TYPE rewrites its table; it can be converted online there instead); then call again with subscribers_ready => true, and drop the columns *_idgen_new and *_idgen_old there once the conversion is done.', sub_cols);
    ELSIF published <> '{}' THEN
        RAISE NOTICE '%: % published: each subscriber''s table must have a bigint key and the columns of: %', fn, array_to_string(published, ', ') || CASE WHEN cardinality(published) > 1 THEN ' are' ELSE ' is' END, sub_cols;
    END IF;

    -- 1. Per table: the new columns, the trigger that keeps them equal to the old ones, a CHECK that
    --    says so (NOT VALID: checked on every write from now on, on the old rows in step 3), and
    --    the old columns' column privileges. ACCESS EXCLUSIVE, briefly; nothing is read.
    FOREACH x IN ARRAY tables LOOP
        SELECT string_agg(format('ADD COLUMN %I bigint', c.newname), ', ' ORDER BY c.attnum),
               string_agg(format('%L, %L', c.attname, c.newname), ', ' ORDER BY c.attnum)
          INTO adds, args
          FROM unnest(cs) c WHERE c.rel = x AND c.narrow;
        CONTINUE WHEN adds IS NULL;
        i := i + 1;
        -- The table's own CHECKs on a column to widen, again on the new columns (NOT VALID),
        -- added while the new columns briefly carry the old ones' names: each CHECK's own text
        -- then names the new columns, whatever its names and literals hold.
        SELECT string_agg(format('ADD CONSTRAINT %I %s%s', format('idgen_online_%s_check_c%s', conv, o.oid), def,
                                 -- (PostgreSQL 18's NOT ENFORCED CHECKs are never validated: no NOT VALID.)
                                 CASE WHEN def ~ 'NOT ENFORCED$' THEN '' ELSE ' NOT VALID' END), ', ' ORDER BY o.oid)
          INTO sets
          FROM pg_constraint o CROSS JOIN LATERAL (SELECT pg_get_constraintdef(o.oid) AS def) d
         WHERE o.conrelid = x AND o.contype = 'c'
           AND EXISTS (SELECT FROM unnest(cs) c WHERE c.rel = x AND c.narrow AND c.attnum = ANY (o.conkey));
        IF sets IS NOT NULL THEN
            SELECT concat_ws('; ',
                       string_agg(format('ALTER TABLE %s RENAME COLUMN %I TO %I', x::regclass, c.attname, left(c.attname, 53) || '_idgen_old')
                                  || format('; ALTER TABLE %s RENAME COLUMN %I TO %I', x::regclass, c.newname, c.attname), '; ' ORDER BY c.attnum),
                       format('ALTER TABLE %s %s', x::regclass, sets),
                       string_agg(format('ALTER TABLE %s RENAME COLUMN %I TO %I', x::regclass, c.attname, c.newname)
                                  || format('; ALTER TABLE %s RENAME COLUMN %I TO %I', x::regclass, left(c.attname, 53) || '_idgen_old', c.attname), '; ' ORDER BY c.attnum))
              INTO sets
              FROM unnest(cs) c WHERE c.rel = x AND c.narrow;
        END IF;
        SELECT adds || ', ' || string_agg(format('ADD CONSTRAINT %I CHECK (%I IS NOT DISTINCT FROM %I) NOT VALID',
                                                  format('idgen_online_%s_check_%s', conv, c.attnum), c.newname, c.attname)
                                           || CASE WHEN c.not_null THEN format(', ADD CONSTRAINT %I CHECK (%I IS NOT NULL) NOT VALID',
                                                  format('idgen_online_%s_notnull_%s', conv, c.attnum), c.newname) ELSE '' END,
                                           ', ' ORDER BY c.attnum)
          INTO adds FROM unnest(cs) c WHERE c.rel = x AND c.narrow;
        n := n + 1;
        RETURN QUERY SELECT n, 'lock', x::regclass, concat_ws('; ',
            format('ALTER TABLE %s %s', x::regclass, adds),
            sets,
            format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION idgen_internal.online_conversion_copy(%s)', trig, x::regclass, args),
            format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', x::regclass, trig),
            (SELECT string_agg(format('GRANT %s (%I) ON %s TO %s', p.privilege_type, c.newname, x::regclass,
                                      CASE WHEN p.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(p.grantee)) END), '; ')
               FROM unnest(cs) c
               JOIN pg_attribute a ON a.attrelid = c.rel AND a.attnum = c.attnum
               CROSS JOIN LATERAL aclexplode(a.attacl) p
              WHERE c.rel = x AND c.narrow));
    END LOOP;
    -- 2. The copy, in batches of blocks (an UPDATE of the new columns only, as the replication
    --    role "replica": the table's own triggers and rules do not fire for it).
    FOREACH x IN ARRAY tables LOOP
        SELECT string_agg(format('%I = %I', c.newname, c.attname), ', ' ORDER BY c.attnum),
               string_agg(format('%I IS DISTINCT FROM %I', c.newname, c.attname), ' OR ' ORDER BY c.attnum)
          INTO sets, args FROM unnest(cs) c WHERE c.rel = x AND c.narrow;
        CONTINUE WHEN sets IS NULL;
        n := n + 1;
        RETURN QUERY SELECT n, 'copy', x::regclass,
            format('UPDATE %s SET %s WHERE ctid >= $1 AND ctid < $2 AND (%s)', x::regclass, sets, args);
    END LOOP;
    -- 3. The CHECKs validated: every old row copied (SHARE UPDATE EXCLUSIVE: writes go on).
    FOR k IN SELECT c.rel, c.attnum, c.not_null FROM unnest(cs) c WHERE c.narrow ORDER BY c.rel = tbl DESC, c.rel, c.attnum LOOP
        n := n + 1;
        RETURN QUERY SELECT n, 'run', k.rel::regclass, concat_ws('; ',
            format('ALTER TABLE %s VALIDATE CONSTRAINT %I', k.rel::regclass, format('idgen_online_%s_check_%s', conv, k.attnum)),
            CASE WHEN k.not_null THEN format('ALTER TABLE %s VALIDATE CONSTRAINT %I', k.rel::regclass, format('idgen_online_%s_notnull_%s', conv, k.attnum)) END);
    END LOOP;
    FOR k IN SELECT o.oid, o.conrelid FROM pg_constraint o
              WHERE o.conrelid = ANY (tables) AND o.contype = 'c' AND o.convalidated
                AND EXISTS (SELECT FROM unnest(cs) c WHERE c.rel = o.conrelid AND c.narrow AND c.attnum = ANY (o.conkey))
              ORDER BY o.conrelid = tbl DESC, o.conrelid, o.oid LOOP
        n := n + 1;
        RETURN QUERY SELECT n, 'run', k.conrelid::regclass,
            format('ALTER TABLE %s VALIDATE CONSTRAINT %I', k.conrelid::regclass, format('idgen_online_%s_check_c%s', conv, k.oid));
    END LOOP;
    -- 4. Every index on a column to widen, again on the new one (CONCURRENTLY; the key's unique
    --    index first: the new foreign keys need it).
    FOR k IN
        SELECT ix.indexrelid, ix.indrelid, ix.indisunique, ix.indnullsnotdistinct, o.conname, o.contype, ic.relname,
               obj_description(o.oid, 'pg_constraint') AS concomment, obj_description(ix.indexrelid, 'pg_class') AS indcomment,
               am.amname, ix.indnkeyatts, ix.indkey::int2[] AS keys, ix.indclass::oid[] AS opclasses, ix.indoption::int2[] AS options,
               pg_get_expr(ix.indpred, ix.indrelid) AS pred, ic.reloptions, ts.spcname,
               row_number() OVER (ORDER BY ix.indexrelid = pk_index DESC, ix.indexrelid) AS num
          FROM pg_index ix
          JOIN pg_class ic ON ic.oid = ix.indexrelid
          JOIN pg_am am ON am.oid = ic.relam
          LEFT JOIN pg_tablespace ts ON ts.oid = ic.reltablespace
          LEFT JOIN pg_constraint o ON o.conindid = ix.indexrelid AND o.conrelid = ix.indrelid AND o.contype IN ('p', 'u')
         WHERE ix.indrelid = ANY (tables)
           AND EXISTS (SELECT FROM unnest(cs) c WHERE c.rel = ix.indrelid AND c.narrow AND c.attnum = ANY (ix.indkey::int2[]))
         ORDER BY ix.indexrelid = pk_index DESC, ix.indexrelid
    LOOP
        SELECT string_agg(
                   format('%I', coalesce(c.newname, a.attname))
                   || CASE WHEN c.narrow IS NULL AND NOT oc.opcdefault THEN ' ' || quote_ident(oc.opcname) ELSE '' END
                   || CASE WHEN (k.options[p.ord - 1] & 1) <> 0 THEN ' DESC' ELSE '' END
                   || CASE WHEN (k.options[p.ord - 1] & 2) <> 0 AND (k.options[p.ord - 1] & 1) = 0 THEN ' NULLS FIRST'
                           WHEN (k.options[p.ord - 1] & 2) = 0 AND (k.options[p.ord - 1] & 1) <> 0 THEN ' NULLS LAST' ELSE '' END,
                   ', ' ORDER BY p.ord) FILTER (WHERE p.ord <= k.indnkeyatts)
               || coalesce(') INCLUDE (' || string_agg(format('%I', coalesce(c.newname, a.attname)), ', ' ORDER BY p.ord) FILTER (WHERE p.ord > k.indnkeyatts), '')
          INTO cols
          FROM unnest(k.keys) WITH ORDINALITY p(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = k.indrelid AND a.attnum = p.attnum
          LEFT JOIN pg_opclass oc ON oc.oid = k.opclasses[p.ord - 1]
          LEFT JOIN unnest(cs) c ON c.rel = k.indrelid AND c.attnum = p.attnum AND c.narrow;
        -- A predicate names the new columns (one without quoted names or literals, which the
        -- refusals above let through: a plain word is a column's name).
        FOR r IN SELECT c.attname, c.newname FROM unnest(cs) c WHERE c.rel = k.indrelid AND c.narrow LOOP
            k.pred := regexp_replace(k.pred, '\m' || regexp_replace(r.attname, '([^[:alnum:]_])', '\\\1', 'g') || '\M', r.newname, 'g');
        END LOOP;
        n := n + 1;
        RETURN QUERY SELECT n, 'concurrently', k.indrelid::regclass,
            format('CREATE %sINDEX CONCURRENTLY %I ON %s USING %I (%s)%s%s%s%s',
                   CASE WHEN k.indisunique THEN 'UNIQUE ' ELSE '' END,
                   format('idgen_online_%s_index_%s', conv, k.num), k.indrelid::regclass, k.amname, cols,
                   CASE WHEN k.indnullsnotdistinct THEN ' NULLS NOT DISTINCT' ELSE '' END,
                   coalesce(' WITH (' || array_to_string(k.reloptions, ', ') || ')', ''),
                   coalesce(' TABLESPACE ' || quote_ident(k.spcname), ''),
                   coalesce(' WHERE ' || k.pred, ''));
        -- In the swap: a constraint's index takes the constraint over (USING INDEX); another one
        -- takes the old index's name, and the old index, renamed away, is dropped CONCURRENTLY
        -- after the swap (dropping it in the swap would hold every table while its files are
        -- removed: the time that grows with the table). A unique index whose NULLs are not
        -- distinct goes in the swap: the old column is NULL in the rows written after it.
        IF k.contype IS NOT NULL THEN
            swap := swap || format('ALTER TABLE %s ADD CONSTRAINT %I %s USING INDEX %I', k.indrelid::regclass, k.conname,
                                   CASE k.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, format('idgen_online_%s_index_%s', conv, k.num));
            IF k.concomment IS NOT NULL THEN
                swap := swap || format('COMMENT ON CONSTRAINT %I ON %s IS %L', k.conname, k.indrelid::regclass, k.concomment);
            END IF;
            IF k.indcomment IS NOT NULL THEN
                swap := swap || format('COMMENT ON INDEX %s IS %L',
                                       (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = k.indrelid) || '.' || quote_ident(k.conname), k.indcomment);
            END IF;
        ELSE
            IF k.indnullsnotdistinct THEN
                after := after || format('DROP INDEX %s', k.indexrelid::regclass);
            ELSE
                after := after || format('ALTER INDEX %s RENAME TO %I', k.indexrelid::regclass, format('idgen_online_%s_old_%s', conv, k.num));
                old_indexes := old_indexes || ARRAY[k.indrelid::text, (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = k.indrelid) || '.' || quote_ident(format('idgen_online_%s_old_%s', conv, k.num))];
            END IF;
            after := after || format('ALTER INDEX %s RENAME TO %I',
                                     (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = k.indrelid) || '.' || quote_ident(format('idgen_online_%s_index_%s', conv, k.num)), k.relname);
            IF k.indcomment IS NOT NULL THEN
                after := after || format('COMMENT ON INDEX %s IS %L',
                                         (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = k.indrelid) || '.' || quote_ident(k.relname), k.indcomment);
            END IF;
        END IF;
        IF (SELECT relreplident FROM pg_class WHERE oid = k.indrelid) = 'i'
           AND (SELECT indisreplident FROM pg_index WHERE indexrelid = k.indexrelid) THEN
            after := after || format('ALTER TABLE %s REPLICA IDENTITY USING INDEX %I', k.indrelid::regclass,
                                     coalesce(k.conname, k.relname));
        END IF;
    END LOOP;
    -- 5. The foreign keys again, between the new columns (NOT VALID: enforced on every write from
    --    now on; SHARE ROW EXCLUSIVE on both tables, briefly), then validated without blocking.
    FOR k IN SELECT c.* FROM unnest(cs) c WHERE c.fk IS NOT NULL ORDER BY c.rel, c.fkname LOOP
        n := n + 1;
        RETURN QUERY SELECT n, 'lock', k.rel::regclass,
            format('ALTER TABLE %s ADD CONSTRAINT %I FOREIGN KEY (%I) REFERENCES %s (%I) %s NOT VALID', k.rel::regclass,
                   format('idgen_online_%s_fk_%s', conv, k.fk), k.newname, tbl, left(att.attname, 53) || '_idgen_new', k.fkdef);
    END LOOP;
    -- (A foreign key that was NOT VALID stays so: its old rows were never checked.)
    FOR k IN SELECT c.* FROM unnest(cs) c JOIN pg_constraint o ON o.oid = c.fk WHERE o.convalidated ORDER BY c.rel, c.fkname LOOP
        n := n + 1;
        RETURN QUERY SELECT n, 'run', k.rel::regclass,
            format('ALTER TABLE %s VALIDATE CONSTRAINT %I', k.rel::regclass, format('idgen_online_%s_fk_%s', conv, k.fk));
    END LOOP;
    -- 6. The swap, in one transaction holding ACCESS EXCLUSIVE on every table: nothing is scanned
    --    (the validated CHECKs prove the new columns equal and not null).
    DECLARE
        pre text[] := ARRAY[format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE',
                                   (SELECT string_agg(t::regclass::text, ', ' ORDER BY t) FROM unnest(tables) t))];
        idname text;
    BEGIN
        -- The old foreign keys, then the key's constraints (the new indexes take them over).
        pre := pre || ARRAY(SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', c.rel::regclass, c.fkname)
                              FROM unnest(cs) c WHERE c.fk IS NOT NULL ORDER BY c.rel, c.fkname);
        pre := pre || ARRAY(SELECT DISTINCT format('ALTER TABLE %s DROP CONSTRAINT %I', o.conrelid::regclass, o.conname)
                              FROM pg_constraint o JOIN unnest(cs) c ON c.rel = o.conrelid AND c.attnum = ANY (o.conkey) AND c.narrow
                             WHERE o.contype IN ('p', 'u'));
        -- Each column: the old one renamed away, the new one given its name, NOT NULL, default.
        FOR k IN SELECT c.*, a.attidentity, pg_get_expr(ad.adbin, ad.adrelid) AS def,
                        col_description(c.rel, c.attnum) AS comment
                   FROM unnest(cs) c
                   JOIN pg_attribute a ON a.attrelid = c.rel AND a.attnum = c.attnum
                   LEFT JOIN pg_attrdef ad ON ad.adrelid = c.rel AND ad.adnum = c.attnum
                  WHERE c.narrow ORDER BY c.rel = tbl DESC, c.rel, c.attnum LOOP
            pre := pre || format('ALTER TABLE %s RENAME COLUMN %I TO %I', k.rel::regclass, k.attname, left(k.attname, 53) || '_idgen_old')
                       || format('ALTER TABLE %s RENAME COLUMN %I TO %I', k.rel::regclass, k.newname, k.attname);
            IF k.not_null THEN
                pre := pre || format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', k.rel::regclass, k.attname);
            END IF;
            IF k.comment IS NOT NULL THEN
                pre := pre || format('COMMENT ON COLUMN %s.%I IS %L', k.rel::regclass, k.attname, k.comment);
            END IF;
            IF NOT k.is_key THEN
                IF k.def IS NOT NULL THEN
                    pre := pre || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', k.rel::regclass, k.attname, k.def);
                END IF;
                CONTINUE;
            END IF;
            -- The key: where its values come from afterwards.
            IF k.attidentity <> '' THEN
                SELECT * INTO s FROM pg_sequence WHERE seqrelid = seq;
                idname := (SELECT relname FROM pg_class WHERE oid = seq);
                pre := pre || format('ALTER SEQUENCE %s RENAME TO %I', seq, left(idname, 53) || '_idgen_old');
                IF onto = 'snowflake' THEN
                    pre := pre || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s.snowflake_next()', tbl, k.attname, ext);
                ELSE
                    pre := pre || format('ALTER TABLE %s ALTER COLUMN %I ADD GENERATED %s AS IDENTITY (SEQUENCE NAME %s INCREMENT BY %s MINVALUE %s START WITH %s CACHE %s %sCYCLE)',
                                         tbl, k.attname, CASE k.attidentity WHEN 'a' THEN 'ALWAYS' ELSE 'BY DEFAULT' END,
                                         (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = seq) || '.' || quote_ident(idname),
                                         s.seqincrement, s.seqmin, s.seqstart, s.seqcache, CASE WHEN s.seqcycle THEN '' ELSE 'NO ' END)
                               || format('SELECT pg_catalog.setval(%L, last_value, is_called) FROM %s',
                                         (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = seq) || '.' || quote_ident(idname),
                                         (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = seq) || '.' || quote_ident(left(idname, 53) || '_idgen_old'));
                    seqname := (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = seq) || '.' || quote_ident(idname);
                END IF;
            ELSIF onto = 'snowflake' THEN
                pre := pre || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s.snowflake_next()', tbl, k.attname, ext);
                IF seq IS NOT NULL AND EXISTS (SELECT FROM pg_depend WHERE classid = 'pg_class'::regclass AND objid = seq AND deptype = 'a'
                                                AND refobjid = tbl AND refobjsubid = k.attnum) THEN
                    pre := pre || format('ALTER SEQUENCE %s OWNED BY NONE', seq);
                END IF;
            ELSE
                IF (SELECT seqtypid FROM pg_sequence WHERE seqrelid = seq) <> 'int8'::regtype THEN
                    pre := pre || format('ALTER SEQUENCE %s AS bigint', seq);
                END IF;
                IF k.def IS NOT NULL THEN
                    pre := pre || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, k.attname, k.def);
                END IF;
                IF EXISTS (SELECT FROM pg_depend WHERE classid = 'pg_class'::regclass AND objid = seq AND deptype = 'a'
                            AND refobjid = tbl AND refobjsubid = k.attnum) THEN
                    pre := pre || format('ALTER SEQUENCE %s OWNED BY %s.%I', seq, tbl, k.attname);
                END IF;
            END IF;
        END LOOP;
        pre := pre || swap;
        -- The new foreign keys take the old ones' names.
        pre := pre || ARRAY(SELECT format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', c.rel::regclass, format('idgen_online_%s_fk_%s', conv, c.fk), c.fkname)
                                   || CASE WHEN obj_description(c.fk, 'pg_constraint') IS NOT NULL
                                           THEN format('; COMMENT ON CONSTRAINT %I ON %s IS %L', c.fkname, c.rel::regclass, obj_description(c.fk, 'pg_constraint')) ELSE '' END
                              FROM unnest(cs) c WHERE c.fk IS NOT NULL ORDER BY c.rel, c.fkname);
        pre := pre || after;
        -- The trigger and the CHECKs go. The old columns stay until their indexes are gone, as
        -- plain nullable columns nothing writes (their defaults and identity go, so that no
        -- sequence is called for them), and then go too.
        FOREACH x IN ARRAY tables LOOP
            CONTINUE WHEN NOT EXISTS (SELECT FROM unnest(cs) c WHERE c.rel = x AND c.narrow);
            -- The table's CHECKs on the old columns go; the new ones take their names and comments.
            pre := pre || ARRAY(SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', x::regclass, o.conname)
                                       || format('; ALTER TABLE %s RENAME CONSTRAINT %I TO %I', x::regclass, format('idgen_online_%s_check_c%s', conv, o.oid), o.conname)
                                       || CASE WHEN obj_description(o.oid, 'pg_constraint') IS NOT NULL
                                               THEN format('; COMMENT ON CONSTRAINT %I ON %s IS %L', o.conname, x::regclass, obj_description(o.oid, 'pg_constraint')) ELSE '' END
                                  FROM pg_constraint o
                                 WHERE o.conrelid = x AND o.contype = 'c'
                                   AND EXISTS (SELECT FROM unnest(cs) c WHERE c.rel = x AND c.narrow AND c.attnum = ANY (o.conkey))
                                 ORDER BY o.oid);
            pre := pre || format('DROP TRIGGER %I ON %s', trig, x::regclass)
                       || ARRAY(SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', x::regclass, format('idgen_online_%s_%s_%s', conv, w, c.attnum))
                                  FROM unnest(cs) c CROSS JOIN unnest(ARRAY['check', 'notnull']) w
                                 WHERE c.rel = x AND c.narrow AND (w = 'check' OR c.not_null))
                       || format('ALTER TABLE %s %s', x::regclass,
                                 (SELECT string_agg(concat_ws(', ',
                                             CASE WHEN a.attidentity <> '' THEN format('ALTER COLUMN %I DROP IDENTITY', left(c.attname, 53) || '_idgen_old')
                                                  WHEN a.atthasdef THEN format('ALTER COLUMN %I DROP DEFAULT', left(c.attname, 53) || '_idgen_old') END,
                                             format('ALTER COLUMN %I DROP NOT NULL', left(c.attname, 53) || '_idgen_old')),
                                             ', ' ORDER BY c.attnum)
                                    FROM unnest(cs) c JOIN pg_attribute a ON a.attrelid = c.rel AND a.attnum = c.attnum
                                   WHERE c.rel = x AND c.narrow));
        END LOOP;
        IF onto = 'adopted' THEN
            pre := pre || format('SELECT %s.adopt_sequence(%L)', 'idgen', coalesce(seqname, seq::text));
        END IF;
        n := n + 1;
        RETURN QUERY SELECT n, 'lock', tbl, array_to_string(pre, '; ');
    END;
    -- 7. The old indexes, renamed away in the swap, dropped CONCURRENTLY (no new statement uses
    --    them; their files go without holding the tables), then the old columns, which nothing
    --    depends on any more (ACCESS EXCLUSIVE, briefly: their values stay in the table's pages
    --    until rows are next written).
    FOR i IN 1 .. coalesce(array_length(old_indexes, 1), 0) / 2 LOOP
        n := n + 1;
        RETURN QUERY SELECT n, 'concurrently', old_indexes[2 * i - 1]::oid::regclass,
            format('DROP INDEX CONCURRENTLY IF EXISTS %s', old_indexes[2 * i]);
    END LOOP;
    n := n + 1;
    RETURN QUERY SELECT n, 'lock', tbl, concat_ws('; ',
        format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE',
               (SELECT string_agg(t::regclass::text, ', ' ORDER BY t) FROM unnest(tables) t
                 WHERE EXISTS (SELECT FROM unnest(cs) c WHERE c.rel = t AND c.narrow))),
        (SELECT string_agg(format('ALTER TABLE %s %s', t::regclass,
                                  (SELECT string_agg(format('DROP COLUMN %I', left(c.attname, 53) || '_idgen_old'), ', ' ORDER BY c.attnum)
                                     FROM unnest(cs) c WHERE c.rel = t AND c.narrow)), '; ' ORDER BY t)
           FROM unnest(tables) t WHERE EXISTS (SELECT FROM unnest(cs) c WHERE c.rel = t AND c.narrow)));
    -- What it cannot keep: a widened column becomes its table's last.
    SELECT string_agg(format('%s.%I', c.rel::regclass, c.attname), ', ') INTO sets
      FROM unnest(cs) c
     WHERE c.narrow AND EXISTS (SELECT FROM pg_attribute b WHERE b.attrelid = c.rel AND b.attnum > c.attnum AND NOT b.attisdropped);
    IF sets IS NOT NULL THEN
        RAISE WARNING '%: once converted, % will be the last column of its table', fn, sets
            USING DETAIL = 'A column cannot keep its place when it is replaced online: SELECT * returns it last, and an INSERT without a column list expects it last.',
                  HINT = 'Name the columns in INSERT statements (ORMs do); where code reads SELECT * by position, change it first, or convert offline with idgen.convert_to_snowflake(widen => true).';
    END IF;
    -- 8. Fresh statistics for the new columns.
    FOREACH x IN ARRAY tables LOOP
        n := n + 1;
        RETURN QUERY SELECT n, 'run', x::regclass, format('ANALYZE %s', x::regclass);
    END LOOP;
END
$$;

-- The worker's steps (src/online/mod.rs), each called in a transaction of its own, as the role
-- that started the conversion.
CREATE FUNCTION idgen_internal.online_conversion_next(conv bigint)
RETURNS TABLE (step integer, kind text, statement text, pause interval)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c idgen_internal.online_conversions;
BEGIN
    SELECT * INTO c FROM idgen_internal.online_conversions o WHERE o.id = conv FOR UPDATE;
    IF NOT FOUND OR c.state IN ('done', 'aborted') THEN
        RETURN;
    END IF;
    IF idgen_internal.online_conversion_worker(conv) IS DISTINCT FROM pg_backend_pid() THEN
        -- Only the worker that holds the conversion's lock runs its steps.
        RETURN;
    END IF;
    RETURN QUERY SELECT s.step, s.kind, s.statement, c.batch_pause
                   FROM idgen_internal.online_conversion_steps s
                  WHERE s.conversion = conv AND s.done_at IS NULL ORDER BY s.step LIMIT 1;
    IF FOUND THEN
        UPDATE idgen_internal.online_conversions o SET state = 'running', worker_pid = pg_backend_pid(), error = NULL
         WHERE o.id = conv;
    ELSE
        UPDATE idgen_internal.online_conversions o SET state = 'done', finished_at = clock_timestamp(), updated_at = clock_timestamp()
         WHERE o.id = conv;
    END IF;
END
$$;

CREATE FUNCTION idgen_internal.online_conversion_step_done(conv bigint, n integer) RETURNS void
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
    UPDATE idgen_internal.online_conversion_steps SET done_at = clock_timestamp() WHERE conversion = conv AND step = n;
    UPDATE idgen_internal.online_conversions SET updated_at = clock_timestamp() WHERE id = conv;
$$;

-- One attempt of a step that takes locks stronger than ROW EXCLUSIVE: under the conversion's
-- lock_timeout, so that the application's statements never queue behind it for longer; false
-- if the timeout expired (the worker tries again).
CREATE FUNCTION idgen_internal.online_conversion_lock_step(conv bigint, n integer) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    stmt text := (SELECT s.statement FROM idgen_internal.online_conversion_steps s WHERE s.conversion = conv AND s.step = n AND s.kind = 'lock');
BEGIN
    IF stmt IS NULL THEN
        RAISE EXCEPTION 'idgen.convert_online: conversion % has no lock step %', conv, n USING ERRCODE = '42704';
    END IF;
    PERFORM set_config('lock_timeout', (SELECT (extract(epoch FROM c.lock_timeout) * 1000)::bigint::text
                                          FROM idgen_internal.online_conversions c WHERE c.id = conv), true);
    BEGIN
        EXECUTE stmt;
    EXCEPTION WHEN lock_not_available THEN
        RETURN false;
    END;
    PERFORM set_config('lock_timeout', '0', true);
    PERFORM idgen_internal.online_conversion_step_done(conv, n);
    RETURN true;
END
$$;

CREATE FUNCTION idgen_internal.online_conversion_lock_held(conv bigint, n integer, ms double precision, done boolean) RETURNS void
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
    UPDATE idgen_internal.online_conversion_steps
       SET lock_ms = coalesce(lock_ms, 0) + ms, attempts = attempts + 1
     WHERE conversion = conv AND step = n;
$$;

-- One batch of a copy: the next blocks of the table, about batch_rows rows; true once the last
-- block the table had when the copy began is done (every row written since then was written by
-- the trigger).
CREATE FUNCTION idgen_internal.online_conversion_copy_batch(conv bigint, n integer) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s idgen_internal.online_conversion_steps;
    rows_per_block double precision;
    blocks bigint;
    hi bigint;
    done bigint;
BEGIN
    SELECT * INTO s FROM idgen_internal.online_conversion_steps x WHERE x.conversion = conv AND x.step = n AND x.kind = 'copy' FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'idgen.convert_online: conversion % has no copy step %', conv, n USING ERRCODE = '42704';
    END IF;
    IF s.last_block IS NULL THEN
        s.last_block := pg_relation_size(s.relation) / current_setting('block_size')::bigint;
        SELECT greatest(c.reltuples, 0)::bigint INTO s.rows_total FROM pg_class c WHERE c.oid = s.relation;
        UPDATE idgen_internal.online_conversion_steps x SET last_block = s.last_block, rows_total = s.rows_total
         WHERE x.conversion = conv AND x.step = n;
    END IF;
    -- Rows per block as the statistics say (100 where the table was never analyzed).
    rows_per_block := CASE WHEN s.rows_total > 0 AND s.last_block > 0
                           THEN greatest(s.rows_total::double precision / s.last_block, 1) ELSE 100 END;
    blocks := greatest(1, ((SELECT c.batch_rows FROM idgen_internal.online_conversions c WHERE c.id = conv) / rows_per_block)::bigint);
    hi := least(s.next_block + blocks, s.last_block);
    IF s.next_block < s.last_block THEN
        -- The UPDATE names everything it uses; the table's own triggers that it fires resolve
        -- names as they would for the application: on the session's search_path, not this
        -- function's.
        PERFORM set_config('search_path', (SELECT reset_val FROM pg_settings WHERE name = 'search_path'), true);
        EXECUTE s.statement USING format('(%s,0)', s.next_block)::tid, format('(%s,0)', hi)::tid;
        GET DIAGNOSTICS done = ROW_COUNT;
        PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    ELSE
        done := 0;
    END IF;
    UPDATE idgen_internal.online_conversion_steps x
       SET next_block = hi, rows_done = x.rows_done + done,
           done_at = CASE WHEN hi >= s.last_block THEN clock_timestamp() END
     WHERE x.conversion = conv AND x.step = n;
    UPDATE idgen_internal.online_conversions SET updated_at = clock_timestamp() WHERE id = conv;
    RETURN hi >= s.last_block;
END
$$;

-- An index step an earlier worker began: 'valid' (done), the statement that drops the invalid
-- index it left, or NULL (none).
CREATE FUNCTION idgen_internal.online_conversion_index_leftover(conv bigint, n integer) RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    s idgen_internal.online_conversion_steps;
    idx oid;
BEGIN
    SELECT * INTO s FROM idgen_internal.online_conversion_steps x WHERE x.conversion = conv AND x.step = n AND x.kind = 'concurrently';
    SELECT c.oid INTO idx FROM pg_class c
     WHERE c.relnamespace = (SELECT t.relnamespace FROM pg_class t WHERE t.oid = s.relation)
       AND c.relname = substring(s.statement FROM 'INDEX CONCURRENTLY (\S+) ON');
    IF idx IS NULL THEN
        RETURN NULL;
    ELSIF (SELECT indisvalid FROM pg_index WHERE indexrelid = idx) THEN
        RETURN 'valid';
    END IF;
    RETURN format('DROP INDEX CONCURRENTLY %s', idx::regclass);
END
$$;

CREATE FUNCTION idgen_internal.online_conversion_run_step(conv bigint, n integer) RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    stmt text := (SELECT s.statement FROM idgen_internal.online_conversion_steps s WHERE s.conversion = conv AND s.step = n AND s.kind = 'run');
BEGIN
    IF stmt IS NULL THEN
        RAISE EXCEPTION 'idgen.convert_online: conversion % has no step %', conv, n USING ERRCODE = '42704';
    END IF;
    EXECUTE stmt;
    PERFORM idgen_internal.online_conversion_step_done(conv, n);
END
$$;

CREATE FUNCTION idgen_internal.online_conversion_finish(conv bigint, new_state text, message text) RETURNS void
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
    UPDATE idgen_internal.online_conversions SET state = new_state, error = message, updated_at = clock_timestamp()
     WHERE id = conv;
$$;

CREATE FUNCTION idgen_internal.online_conversion_launch(conv bigint) RETURNS integer
VOLATILE PARALLEL UNSAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'online_conversion_launch_wrapper';

-- The conversion of a table the caller may see, active or last.
CREATE FUNCTION idgen_internal.online_conversion_of(tbl regclass, fn text) RETURNS idgen_internal.online_conversions
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c idgen_internal.online_conversions;
BEGIN
    IF tbl IS NULL THEN
        RAISE EXCEPTION '%: the table may not be NULL', fn USING ERRCODE = '22004';
    END IF;
    SELECT * INTO c FROM idgen_internal.online_conversions o WHERE o.relation = tbl ORDER BY o.id DESC LIMIT 1;
    IF NOT FOUND THEN
        RAISE EXCEPTION '%: no online conversion of % (by a role you are a member of)', fn, tbl
            USING ERRCODE = '42704', HINT = 'Start one with idgen.convert_online(table, column); idgen.online_conversions lists those you may see.';
    END IF;
    RETURN c;
END
$$;

CREATE FUNCTION idgen.convert_online(
    tbl regclass, col name, onto text DEFAULT 'snowflake',
    batch_rows integer DEFAULT 1000, batch_pause interval DEFAULT '0',
    lock_timeout interval DEFAULT '50ms', dry_run boolean DEFAULT false, subscribers_ready boolean DEFAULT false)
RETURNS TABLE (step integer, kind text, relation regclass, statement text)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    conv bigint := 0;
    active idgen_internal.online_conversions;
    fires text;
    steps idgen_internal.online_step[];
BEGIN
    IF tbl IS NULL OR col IS NULL OR onto IS NULL OR batch_rows IS NULL OR batch_pause IS NULL
       OR lock_timeout IS NULL OR dry_run IS NULL OR subscribers_ready IS NULL THEN
        RAISE EXCEPTION 'idgen.convert_online: no argument may be NULL' USING ERRCODE = '22004';
    END IF;
    IF onto NOT IN ('snowflake', 'adopted', 'sequence') THEN
        RAISE EXCEPTION 'idgen.convert_online: onto must be ''snowflake'', ''adopted'' or ''sequence'', not %', quote_literal(onto)
            USING ERRCODE = '22023',
                  HINT = 'snowflake: DEFAULT snowflake_next(); adopted: the key''s sequence, adopted (idgen.adopt_sequence); sequence: the key''s sequence, widened to bigint.';
    END IF;
    IF batch_rows < 1 OR batch_pause < '0' OR batch_pause > '1 hour' THEN
        RAISE EXCEPTION 'idgen.convert_online: batch_rows must be at least 1 and batch_pause between 0 and 1 hour'
            USING ERRCODE = '22023', HINT = 'batch_rows sets how many rows each transaction of the copy writes; batch_pause the rest between two.';
    END IF;
    IF lock_timeout < '1 ms' OR lock_timeout > '10 s' THEN
        RAISE EXCEPTION 'idgen.convert_online: lock_timeout must be between 1 ms and 10 s, not %', lock_timeout
            USING ERRCODE = '22023',
                  HINT = 'It bounds how long the application''s statements can queue behind one of the conversion''s lock requests; set it below the application''s own lock_timeout.';
    END IF;
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = tbl) NOT IN ('r', 'p') THEN
        RAISE EXCEPTION 'idgen.convert_online: % is not a table', tbl
            USING ERRCODE = '42809', HINT = 'Convert the key of the table the view or foreign table reads.';
    END IF;
    SELECT * INTO active FROM idgen_internal.online_conversions o WHERE o.relation = tbl AND o.state NOT IN ('done', 'aborted');
    IF FOUND THEN
        RAISE EXCEPTION 'idgen.convert_online: % has a conversion already (%)', tbl, active.state
            USING ERRCODE = '55006',
                  HINT = 'idgen.convert_online_resume(table) goes on with it, idgen.convert_online_abort(table) undoes it.';
    END IF;
    IF NOT dry_run THEN
        -- The id: the transaction's own ID (never the same twice in the cluster's life), with the
        -- conversions it started before (a sequence would be one that FOR ALL SEQUENCES
        -- publishes: pg_idgen keeps none).
        conv := pg_current_xact_id()::text::bigint * 1000
                + (SELECT count(*) FROM idgen_internal.online_conversions o
                    WHERE o.id / 1000 = pg_current_xact_id()::text::bigint);
    END IF;
    steps := ARRAY(SELECT p FROM idgen_internal.online_conversion_plan(tbl, col, onto, conv, subscribers_ready) p);
    -- What the copy's UPDATEs fire: the table's own row triggers on UPDATE.
    SELECT string_agg(format('%s on %s', quote_ident(t.tgname), t.tgrelid::regclass), ', ') INTO fires
      FROM pg_trigger t
     WHERE t.tgrelid IN (SELECT p.relation FROM unnest(steps) p WHERE p.kind = 'copy')
       AND NOT t.tgisinternal AND (t.tgtype & 1) <> 0 AND (t.tgtype & 16) <> 0 AND t.tgenabled <> 'D';
    IF fires IS NOT NULL THEN
        RAISE WARNING 'idgen.convert_online: the copy updates every row, and these row triggers fire for it: %', fires
            USING HINT = 'A trigger that stamps a time or writes an audit row will do so once per row; disable it for the conversion if it must not.';
    END IF;
    IF NOT dry_run THEN
        INSERT INTO idgen_internal.online_conversions (id, relation, relation_name, column_name, onto, role, batch_rows, batch_pause, lock_timeout)
            VALUES (conv, tbl, tbl::text, col, onto, (SELECT oid FROM pg_roles WHERE rolname = current_user), batch_rows, batch_pause, lock_timeout);
        IF NOT FOUND THEN
            -- The REPLICA trigger of the table dropped it: this session applies changes as
            -- logical replication does.
            RAISE EXCEPTION 'idgen.convert_online: a conversion cannot start with session_replication_role = replica'
                USING ERRCODE = '55000', HINT = 'SET session_replication_role = origin (the default) first.';
        END IF;
        INSERT INTO idgen_internal.online_conversion_steps (conversion, role, step, kind, relation, statement)
            SELECT conv, (SELECT oid FROM pg_roles WHERE rolname = current_user), p.step, p.kind, p.relation, p.statement
              FROM unnest(steps) p;
        PERFORM idgen_internal.online_conversion_launch(conv);
        RAISE NOTICE 'idgen.convert_online: conversion % of %.% started; idgen.online_conversions shows its progress', conv, tbl, quote_ident(col)
            USING HINT = 'CALL idgen.convert_online_wait(table) waits for its end.';
    END IF;
    RETURN QUERY SELECT p.step, p.kind, p.relation, p.statement FROM unnest(steps) p ORDER BY p.step;
END
$$;

CREATE FUNCTION idgen.convert_online_resume(tbl regclass) RETURNS bigint
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c idgen_internal.online_conversions := idgen_internal.online_conversion_of(tbl, 'idgen.convert_online_resume');
BEGIN
    IF c.state IN ('done', 'aborted') THEN
        RAISE EXCEPTION 'idgen.convert_online_resume: the conversion of % is %', tbl, c.state
            USING ERRCODE = '55000', HINT = 'There is nothing left to resume; idgen.convert_online(table, column) starts a new conversion.';
    END IF;
    IF EXISTS (SELECT FROM idgen.online_conversions v WHERE v.id = c.id AND v.running) THEN
        RAISE EXCEPTION 'idgen.convert_online_resume: the conversion of % is running', tbl
            USING ERRCODE = '55006', HINT = 'idgen.convert_online_stop(table) stops it.';
    END IF;
    UPDATE idgen_internal.online_conversions SET state = 'starting', error = NULL, updated_at = clock_timestamp() WHERE id = c.id;
    PERFORM idgen_internal.online_conversion_launch(c.id);
    RETURN c.id;
END
$$;

CREATE FUNCTION idgen.convert_online_stop(tbl regclass) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c idgen_internal.online_conversions := idgen_internal.online_conversion_of(tbl, 'idgen.convert_online_stop');
BEGIN
    IF NOT EXISTS (SELECT FROM idgen.online_conversions v WHERE v.id = c.id AND v.running) THEN
        RETURN false;
    END IF;
    -- Stopped on purpose: not resumed by itself when the server next starts.
    UPDATE idgen_internal.online_conversions SET state = 'stopped', updated_at = clock_timestamp() WHERE id = c.id;
    RETURN idgen_internal.online_conversion_stop(c.id);
END
$$;

CREATE FUNCTION idgen_internal.online_conversion_stop(conv bigint) RETURNS boolean
VOLATILE PARALLEL UNSAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'online_conversion_stop_wrapper';

-- Undoes a conversion that has not swapped: its new columns, trigger, constraints and indexes
-- go, in the caller's session (each statement under the conversion's lock_timeout).
CREATE FUNCTION idgen.convert_online_abort(tbl regclass) RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c idgen_internal.online_conversions := idgen_internal.online_conversion_of(tbl, 'idgen.convert_online_abort');
    swap integer;
    x record;
    stmt text;
BEGIN
    IF c.state IN ('done', 'aborted') THEN
        RAISE EXCEPTION 'idgen.convert_online_abort: the conversion of % is %', tbl, c.state
            USING ERRCODE = '55000', HINT = 'There is nothing left to undo.';
    END IF;
    IF EXISTS (SELECT FROM idgen.online_conversions v WHERE v.id = c.id AND v.running) THEN
        RAISE EXCEPTION 'idgen.convert_online_abort: the conversion of % is running', tbl
            USING ERRCODE = '55006', HINT = 'idgen.convert_online_stop(table) stops it first.';
    END IF;
    -- The swap: the first step that locks every table at once.
    SELECT min(s.step) INTO swap FROM idgen_internal.online_conversion_steps s
     WHERE s.conversion = c.id AND s.kind = 'lock' AND s.statement LIKE 'LOCK TABLE %';
    IF EXISTS (SELECT FROM idgen_internal.online_conversion_steps s WHERE s.conversion = c.id AND s.step = swap AND s.done_at IS NOT NULL) THEN
        RAISE EXCEPTION 'idgen.convert_online_abort: the conversion of % has swapped its columns', tbl
            USING ERRCODE = '55000', HINT = 'idgen.convert_online_resume(table) finishes it (what is left drops the old indexes and columns and gathers statistics).';
    END IF;
    PERFORM set_config('lock_timeout', (extract(epoch FROM c.lock_timeout) * 1000)::bigint::text, true);
    FOR x IN SELECT DISTINCT s.relation FROM idgen_internal.online_conversion_steps s WHERE s.conversion = c.id LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_class WHERE oid = x.relation);
        FOR stmt IN
            SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', x.relation::regclass, o.conname)
              FROM pg_constraint o WHERE o.conrelid = x.relation AND o.conname LIKE format('idgen\_online\_%s\_%%', c.id)
            UNION ALL
            SELECT format('DROP INDEX %s', i.indexrelid::regclass)
              FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
             WHERE i.indrelid = x.relation AND ic.relname LIKE format('idgen\_online\_%s\_%%', c.id)
            UNION ALL
            SELECT format('DROP TRIGGER %I ON %s', t.tgname, x.relation::regclass)
              FROM pg_trigger t WHERE t.tgrelid = x.relation AND t.tgname = format('~idgen_online_%s', c.id)
        LOOP
            EXECUTE stmt;
            RETURN NEXT stmt;
        END LOOP;
        SELECT format('ALTER TABLE %s %s', x.relation::regclass, string_agg(format('DROP COLUMN %I', a.attname), ', '))
          INTO stmt
          FROM pg_attribute a
         WHERE a.attrelid = x.relation AND NOT a.attisdropped AND a.attname LIKE '%\_idgen\_new'
           AND EXISTS (SELECT FROM idgen_internal.online_conversion_steps s
                        WHERE s.conversion = c.id AND s.kind = 'lock' AND s.relation = x.relation
                          AND position(format('ADD COLUMN %I bigint', a.attname) IN s.statement) > 0)
        HAVING count(*) > 0;
        IF stmt IS NOT NULL THEN
            EXECUTE stmt;
            RETURN NEXT stmt;
        END IF;
    END LOOP;
    UPDATE idgen_internal.online_conversions SET state = 'aborted', finished_at = clock_timestamp(), updated_at = clock_timestamp()
     WHERE id = c.id;
END
$$;

-- Waits for the end of the conversion of a table, with a NOTICE for each step done. A procedure:
-- it commits between looks, so it holds no snapshot the index builds would wait for; and so it
-- has no SET clause (which forbids COMMIT): every name in it is qualified.
CREATE PROCEDURE idgen.convert_online_wait(tbl regclass, timeout interval DEFAULT '1 day')
LANGUAGE plpgsql AS $$
DECLARE
    c idgen_internal.online_conversions := idgen_internal.online_conversion_of(tbl, 'idgen.convert_online_wait');
    v record;
    seen integer := -1;
    deadline timestamptz := pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) timeout;
BEGIN
    LOOP
        SELECT o.state, o.running, o.next_step, o.steps, o.rows_done, o.rows_left, o.lock_ms_total, o.lock_ms_max, o.error
          INTO v FROM idgen.online_conversions o WHERE o.id OPERATOR(pg_catalog.=) c.id;
        IF v.next_step IS DISTINCT FROM seen THEN
            RAISE NOTICE 'idgen.convert_online: % of %: step %/%, % rows copied, % left; locks held % ms in total, % ms at most',
                v.state, tbl, COALESCE(v.next_step, v.steps), v.steps, v.rows_done, v.rows_left,
                pg_catalog.round(v.lock_ms_total::pg_catalog.numeric, 1), pg_catalog.round(v.lock_ms_max::pg_catalog.numeric, 1);
            seen := v.next_step;
        END IF;
        EXIT WHEN v.state OPERATOR(pg_catalog.=) 'done';
        IF v.state IN ('failed', 'aborted', 'stopped') THEN
            RAISE EXCEPTION 'idgen.convert_online_wait: the conversion of % is %', tbl, v.state
                USING ERRCODE = '55000', DETAIL = COALESCE(v.error, 'Its worker is not running.'),
                      HINT = 'idgen.convert_online_resume(table) goes on with it; idgen.convert_online_abort(table) undoes it.';
        END IF;
        IF pg_catalog.clock_timestamp() OPERATOR(pg_catalog.>) deadline THEN
            RAISE EXCEPTION 'idgen.convert_online_wait: the conversion of % did not end within %', tbl, timeout
                USING ERRCODE = '57014', HINT = 'It goes on in its worker; idgen.online_conversions shows where it is.';
        END IF;
        COMMIT;
        PERFORM pg_catalog.pg_sleep(0.1);
        COMMIT;
    END LOOP;
END
$$;

COMMENT ON FUNCTION idgen.convert_online(regclass, name, text, integer, interval, interval, boolean, boolean) IS
  'Converts a smallint or integer key and every column that references it through a foreign key to bigint while the application keeps writing (new columns kept equal by a trigger, copied in batches, indexes built CONCURRENTLY, foreign keys validated without blocking writes, one short swap), and moves the key onto pg_idgen (onto: snowflake, adopted or sequence); runs in a background worker as the caller and returns its steps (or, with dry_run, only lists them); subscribers_ready: the subscribers of a published table have its new columns. For the owner of every table involved.';

COMMENT ON FUNCTION idgen.convert_online_resume(regclass) IS
  'Goes on with a stopped or failed online conversion of a table from its first step not done, in a new worker; returns the conversion''s id.';

COMMENT ON FUNCTION idgen.convert_online_stop(regclass) IS
  'Stops the worker of a table''s online conversion (the conversion stays where it was, to be resumed or aborted); false if none was running.';

COMMENT ON FUNCTION idgen.convert_online_abort(regclass) IS
  'Undoes an online conversion that has not swapped its columns: drops its new columns, trigger, constraints and indexes; returns the statements run.';

COMMENT ON PROCEDURE idgen.convert_online_wait(regclass, interval) IS
  'Waits for a table''s online conversion to end, with a NOTICE for each step; an error if it fails or stops, or after timeout.';

COMMENT ON FUNCTION idgen_internal.online_conversion_plan(regclass, name, text, bigint, boolean) IS
  'The steps of an online conversion (idgen.convert_online), or the refusal of what it cannot convert online.';

COMMENT ON FUNCTION idgen_internal.online_conversion_next(bigint) IS
  'The first step of a conversion not done, for its worker (none if it is done or another worker runs it).';

COMMENT ON FUNCTION idgen_internal.online_conversion_step_done(bigint, integer) IS 'Records a step done.';

COMMENT ON FUNCTION idgen_internal.online_conversion_lock_step(bigint, integer) IS
  'One attempt of a step that takes strong locks, under the conversion''s lock_timeout; false if it expired.';

COMMENT ON FUNCTION idgen_internal.online_conversion_lock_held(bigint, integer, double precision, boolean) IS
  'Adds an attempt and how long it held its locks to a step.';

COMMENT ON FUNCTION idgen_internal.online_conversion_copy_batch(bigint, integer) IS
  'Copies the next batch of a table''s blocks into its new columns; true when the copy is done.';

COMMENT ON FUNCTION idgen_internal.online_conversion_index_leftover(bigint, integer) IS
  'What an earlier worker left of an index step: valid, the statement that drops an invalid index, or NULL.';

COMMENT ON FUNCTION idgen_internal.online_conversion_run_step(bigint, integer) IS 'Runs a step that blocks no writes (VALIDATE, ANALYZE) and records it done.';

COMMENT ON FUNCTION idgen_internal.online_conversion_finish(bigint, text, text) IS 'Records why a conversion''s worker ended.';

COMMENT ON FUNCTION idgen_internal.online_conversion_launch(bigint) IS 'Starts the worker of a conversion; returns its process ID.';

COMMENT ON FUNCTION idgen_internal.online_conversion_of(regclass, text) IS 'The last conversion of a table the caller may see.';

COMMENT ON FUNCTION idgen_internal.online_conversion_stop(bigint) IS 'Tells the worker of a conversion to stop (SIGTERM).';

COMMENT ON FUNCTION idgen_internal.online_conversion_copy() IS 'The trigger of an online conversion: sets each new column to its old column''s value on INSERT and UPDATE.';

COMMENT ON FUNCTION idgen_internal.online_conversion_worker(bigint) IS
  'The process ID of the worker that runs a conversion (it holds the conversion''s lock), NULL if none does.';

COMMENT ON FUNCTION idgen_internal.online_conversion_latest_state(bigint) IS
  'A conversion''s stored state as the latest snapshot sees it, for a member of its role (NULL otherwise).';

COMMENT ON FUNCTION idgen_internal.online_conversion_state(bigint, text, timestamptz) IS
  'The state idgen.online_conversions shows: the stored one, or stopped for a conversion no worker runs that no worker ended.';

CREATE  FUNCTION "typeid_from_uuid"(
	"prefix" TEXT, /* & str */
	"id" uuid /* Uuid */
) RETURNS TEXT /* String */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'typeid_from_uuid_wrapper';

CREATE  FUNCTION "typeid_to_uuid"(
	"typeid" TEXT /* & str */
) RETURNS uuid /* Uuid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'typeid_to_uuid_wrapper';

CREATE  FUNCTION "typeid_to_uuid"(
	"typeid" TEXT, /* & str */
	"prefix" TEXT /* & str */
) RETURNS uuid /* Uuid */
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'typeid_to_uuid_of_wrapper';

CREATE  FUNCTION "typeid_prefix"(
	"typeid" TEXT /* & str */
) RETURNS TEXT /* String */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'typeid_prefix_wrapper';

CREATE  FUNCTION "typeid_next"(
	"prefix" TEXT /* Option < & str > */
) RETURNS TEXT /* String */
VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'typeid_next_wrapper';

CREATE FUNCTION "uuidv7_next"() RETURNS uuid
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c
AS 'MODULE_PATHNAME', 'uuidv7_next_wrapper';

-- Skipped due to `#[pgrx(sql = false)]`

CREATE  FUNCTION "uuidv7_next_batch"(
	"n" INT /* Option < i32 > */
) RETURNS SETOF uuid /* Uuid */
VOLATILE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_next_batch_wrapper';

CREATE FUNCTION "ulid_next"() RETURNS TEXT
STRICT VOLATILE PARALLEL RESTRICTED
LANGUAGE c
AS 'MODULE_PATHNAME', 'ulid_next_wrapper';

-- Skipped due to `#[pgrx(sql = false)]`

CREATE  FUNCTION "uuid_to_ulid"(
	"id" uuid /* Uuid */
) RETURNS TEXT /* String */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuid_to_ulid_wrapper';

CREATE  FUNCTION "ulid_to_uuid"(
	"ulid" TEXT /* & str */
) RETURNS uuid /* Uuid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ulid_to_uuid_wrapper';

CREATE FUNCTION "uuidv7_timestamp"(
	"id" uuid
) RETURNS timestamp with time zone
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'uuidv7_timestamp_wrapper';

-- Skipped due to `#[pgrx(sql = false)]`

CREATE  FUNCTION "ulid_timestamp"(
	"ulid" TEXT /* & str */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ulid_timestamp_wrapper';

CREATE  FUNCTION idgen."read_horizon_uuid"() RETURNS uuid /* Uuid */
STRICT VOLATILE PARALLEL RESTRICTED 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'read_horizon_uuid_wrapper';

CREATE  FUNCTION "uuidv7_from_timestamp"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS uuid /* Uuid */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_from_timestamp_wrapper';

CREATE  FUNCTION "uuidv7_range"(
	"since" timestamp with time zone, /* TimestampWithTimeZone */
	"before" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS TABLE (
	"lower" uuid,  /* Uuid */
	"upper" uuid  /* Uuid */
)
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'uuidv7_range_wrapper';

COMMENT ON FUNCTION id_range(timestamptz, timestamptz) IS
  'The IDs of the times [since, before) with this node''s layout: lower is the smallest ID at since, upper the smallest at before, so FOR VALUES FROM (lower) TO (upper) is the range partition of those times.';

COMMENT ON FUNCTION id_range(timestamptz, timestamptz, text) IS
  'The IDs of the times [since, before) with a named layout or layout spec: IMMUTABLE, for partition bounds and queries pruned when planned.';

COMMENT ON FUNCTION id_span(interval) IS
  'How many IDs of this node''s layout a span of time covers (a day is 24 hours; no months): the width of fixed-size range partitions, pg_partman''s interval.';

COMMENT ON FUNCTION id_span(interval, text) IS
  'How many IDs of a named layout or layout spec a span of time covers.';

COMMENT ON FUNCTION id_worker_id(bigint) IS
  'The worker id inside a Snowflake ID, with this node''s layout; NULL for a layout without worker bits.';

COMMENT ON FUNCTION id_worker_id(bigint, text) IS
  'The worker id inside a Snowflake ID, with a named layout or layout spec. IMMUTABLE: distributed queries (Citus) push it down into every shard, in the select list, WHERE and GROUP BY.';

COMMENT ON FUNCTION idgen.decrypt_id(bigint, text, integer) IS
  'The inverse of idgen.encrypt_id(), with the same key version.';

COMMENT ON FUNCTION idgen.decrypt_id_js_safe(bigint, text, integer) IS
  'The inverse of idgen.encrypt_id_js_safe(), with the same key version.';

COMMENT ON FUNCTION idgen.decrypt_uuid(uuid, text, integer) IS
  'The inverse of idgen.encrypt_uuid(), with the same key version.';

COMMENT ON FUNCTION idgen.encrypt_id(bigint, text, integer) IS
  'Any bigint encrypted under a key (FF1 over AES): a permutation of all 2^64 values. version NULL: the current one.';

COMMENT ON FUNCTION idgen.encrypt_id_js_safe(bigint, text, integer) IS
  'An ID from 0 to 2^53 - 1 encrypted to one in the same range (JavaScript-safe).';

COMMENT ON FUNCTION idgen.encrypt_uuid(uuid, text, integer) IS
  'A UUIDv7 encrypted to a UUID with version-4 bits (which every client accepts).';

COMMENT ON FUNCTION idgen.id_to_public(bigint, text) IS
  'A bigint''s public text form under the key''s current version: prefix_, 2 characters of key version, 20 of ciphertext.';

COMMENT ON FUNCTION idgen.public_to_id(text, text) IS
  'The bigint of a public text form of the key (any version still kept); another prefix, a damaged string or another key''s is an error (22P02).';

COMMENT ON FUNCTION idgen.public_to_uuid(text, text) IS
  'The UUIDv7 of a public text form of the key; another prefix, a damaged string or another key''s is an error (22P02).';

COMMENT ON FUNCTION idgen.read_horizon() IS
  'This node''s read horizon of Snowflake IDs: every ID below it that this node made belongs to a transaction that has ended. Take it in a statement of its own, then read WHERE id > last AND id < horizon in the next (READ COMMITTED); in REPEATABLE READ it is refused (25001): take it before BEGIN.';

COMMENT ON FUNCTION idgen.read_horizon_uuid() IS
  'This node''s read horizon of UUIDv7s (and, as uuid_to_ulid(), ULIDs): every one below it that this node made belongs to a transaction that has ended. Used as idgen.read_horizon().';

COMMENT ON FUNCTION idgen.snowflake_start_after(timestamptz) IS
  'Moves this node''s clocks (Snowflake IDs, message IDs, UUIDv7s) past ts, durably, and returns when the next IDs start: after restoring onto a new server, moving a worker id to another machine, or setting a clock back for good. Give ts from a clock you trust: further than idgen.max_drift ahead of this node''s clock, it is taken with a WARNING and the node''s IDs wait until its clock is within idgen.max_drift of it; more than an hour past that, it is refused.';

COMMENT ON FUNCTION idgen.uuid_to_public(uuid, text) IS
  'A UUIDv7''s public text form under the key''s current version: prefix_, 2 characters of key version, 32 of ciphertext.';

COMMENT ON FUNCTION idgen_internal.column_max(oid, text) IS
  'The largest value of a column, read as its table''s owner in a security-restricted operation (used by the conversion functions); the caller must be allowed to read the column.';

COMMENT ON FUNCTION idgen_internal.id_time_lower(date, boolean, text) IS
  'id_time_lower of a date (its midnight in the session''s TimeZone): what id_timestamp(id) >= d::date adds.';

COMMENT ON FUNCTION idgen_internal.id_time_lower(timestamp, boolean, text) IS
  'id_time_lower of a timestamp without time zone, as PostgreSQL compares one with a timestamptz (in the session''s TimeZone): what id_timestamp(id) >= ts::timestamp adds.';

COMMENT ON FUNCTION idgen_internal.id_time_lower(timestamptz, boolean, text) IS
  'The smallest ID of the layout whose time is at or after ts (after, if not inclusive); NULL if none: what id_timestamp(id, layout) >= ts adds as id >= this (idgen.time_conditions).';

COMMENT ON FUNCTION idgen_internal.id_time_upper(date, boolean, text) IS
  'id_time_upper of a date (its midnight in the session''s TimeZone).';

COMMENT ON FUNCTION idgen_internal.id_time_upper(timestamp, boolean, text) IS
  'id_time_upper of a timestamp without time zone, in the session''s TimeZone.';

COMMENT ON FUNCTION idgen_internal.id_time_upper(timestamptz, boolean, text) IS
  'The largest ID of the layout whose time is at or before ts (before, if not inclusive); NULL if none: what id_timestamp(id, layout) <= ts adds as id <= this.';

COMMENT ON FUNCTION idgen_internal.key_range_estimate(uuid) IS
  'Always true: the marker of a UUID key whose range the planner estimates from the key''s histogram (key_range_estimate_support), added beside a time condition''s key range (idgen.time_conditions) and taken out of the plan once made.';

COMMENT ON FUNCTION idgen_internal.key_range_estimate_support(internal) IS
  'The planner support function of key_range_estimate: the estimates of the key''s range conditions from its histogram, and 1 for itself.';

COMMENT ON FUNCTION idgen_internal.public_key_fingerprint(text, integer) IS
  'The fingerprint column of idgen.public_keys.';

COMMENT ON FUNCTION idgen_internal.public_key_random() IS
  '32 random bytes from pg_strong_random(): a new AES-256 key.';

COMMENT ON FUNCTION idgen_internal.public_keys_changed() IS
  'The statement trigger of idgen_internal.public_keys: clears every session''s cache of keys at commit.';

COMMENT ON FUNCTION idgen_internal.read_horizon_holders() IS
  'The rows of the idgen.read_horizon_holders view.';

COMMENT ON FUNCTION idgen_internal.refusal_counts() IS
  'The rows of the idgen.refusals view.';

COMMENT ON FUNCTION idgen_internal.segment_allocator_usage() IS
  'The row of the idgen.segment_allocators view.';

COMMENT ON FUNCTION idgen_internal.segment_moved(text) IS
  'Forgets the ranges of a business type cached on this node, unless called by the allocator (used by the trigger segments_moved).';

COMMENT ON FUNCTION idgen_internal.stream_status() IS
  'The rows of the idgen.streams view.';

COMMENT ON FUNCTION idgen_internal.time_local_lower(date, text, text) IS
  'time_local_lower of a date (its midnight): what created_at::date >= d adds, with unit ''day''.';

COMMENT ON FUNCTION idgen_internal.time_local_lower(timestamp, text, text) IS
  'The earliest instant whose local time in zone (NULL for the session''s TimeZone), truncated to unit (NULL for none), can be at or after c truncated; read from the zone''s offsets near it, so a change of the clocks widens it: what (created_at AT TIME ZONE zone) >= c adds, inside id_time_lower.';

COMMENT ON FUNCTION idgen_internal.time_local_upper(date, text, text) IS
  'time_local_upper of a date (its midnight): what created_at::date <= d adds.';

COMMENT ON FUNCTION idgen_internal.time_local_upper(timestamp, text, text) IS
  'The latest instant whose local time in zone, truncated to unit, can be at or before c truncated.';

COMMENT ON FUNCTION idgen_internal.time_trunc_lower(date, text, text) IS
  'time_trunc_lower of a date (its midnight in the session''s TimeZone).';

COMMENT ON FUNCTION idgen_internal.time_trunc_lower(timestamp, text, text) IS
  'time_trunc_lower of a timestamp, compared with the truncation as PostgreSQL compares one with a timestamptz (in the session''s TimeZone): what date_trunc(''day'', created_at) >= ts::timestamp adds.';

COMMENT ON FUNCTION idgen_internal.time_trunc_lower(timestamptz, text, text) IS
  'The earliest instant t whose date_trunc(unit, t, zone) can be at or after c (zone NULL for the session''s TimeZone).';

COMMENT ON FUNCTION idgen_internal.time_trunc_upper(date, text, text) IS
  'time_trunc_upper of a date (its midnight in the session''s TimeZone).';

COMMENT ON FUNCTION idgen_internal.time_trunc_upper(timestamp, text, text) IS
  'time_trunc_upper of a timestamp, in the session''s TimeZone.';

COMMENT ON FUNCTION idgen_internal.time_trunc_upper(timestamptz, text, text) IS
  'The latest instant t whose date_trunc(unit, t, zone) can be at or before c.';

COMMENT ON FUNCTION idgen_internal.uuid_larger(uuid, uuid) IS
  'The larger of two UUIDs in uuid''s order (a memcmp of the bytes): the transition and combine function of idgen_internal.max_key(uuid).';

COMMENT ON FUNCTION idgen_internal.uuid_smaller(uuid, uuid) IS
  'The smaller of two UUIDs in uuid''s order: the transition and combine function of idgen_internal.min_key(uuid).';

COMMENT ON FUNCTION idgen_internal.uuidv7_time_lower(date, boolean) IS
  'uuidv7_time_lower of a date (its midnight in the session''s TimeZone).';

COMMENT ON FUNCTION idgen_internal.uuidv7_time_lower(timestamp, boolean) IS
  'uuidv7_time_lower of a timestamp without time zone, in the session''s TimeZone.';

COMMENT ON FUNCTION idgen_internal.uuidv7_time_lower(timestamptz, boolean) IS
  'The smallest UUID whose first 48 bits (a UUIDv7''s millisecond) are at or after ts; NULL if none: what uuidv7_timestamp(id) >= ts adds as id >= this.';

COMMENT ON FUNCTION idgen_internal.uuidv7_time_upper(date, boolean) IS
  'uuidv7_time_upper of a date (its midnight in the session''s TimeZone).';

COMMENT ON FUNCTION idgen_internal.uuidv7_time_upper(timestamp, boolean) IS
  'uuidv7_time_upper of a timestamp without time zone, in the session''s TimeZone.';

COMMENT ON FUNCTION idgen_internal.uuidv7_time_upper(timestamptz, boolean) IS
  'The largest UUID whose first 48 bits are at or before ts; NULL if none: what uuidv7_timestamp(id) <= ts adds as id <= this.';

COMMENT ON FUNCTION idgen_internal.within_range(boolean) IS
  'Its argument: a condition on the time kept beside the key range it implies (idgen.time_conditions), estimated as true for the rows the range reads (within_range_support), so that the key''s statistics estimate both.';

COMMENT ON FUNCTION idgen_internal.within_range_support(internal) IS
  'The planner support function of within_range: a selectivity of 1.';

COMMENT ON FUNCTION msgid_next(integer, text) IS
  '80-bit message ID (RongCloud''s format) as 19 characters XXXX-XXXX-XXXX-XXXX: 42-bit ms time, 12-bit sequence shared by all backends of this node, 4-bit session type (0..15), 22-bit session hash. Text order (COLLATE "C") is time order. Unique per node.';

COMMENT ON FUNCTION snowflake_at(timestamptz) IS
  'A Snowflake ID whose time is ts (an instant that has passed, within this node''s layout), with the node''s backfill worker id (idgen.backfill_worker_id) and a sequence number committed in idgen.backfill_database before it is returned: never equal to an ID any node makes live or any backfill made. Between the live IDs of the ticks before and after ts.';

COMMENT ON FUNCTION snowflake_at_batch(timestamptz[]) IS
  'A Snowflake ID at each instant of the array, in its order (IDs at one instant ascend in that order); a NULL element is 22004. For imports: one request to the allocator per 128 buckets of about a second.';

COMMENT ON FUNCTION typeid_from_uuid(text, uuid) IS
  'The TypeID of any UUID with a prefix: typeid_from_uuid(''user'', id).';

COMMENT ON FUNCTION typeid_next(text) IS
  'A new TypeID (the TypeID specification 0.3.0): the prefix, _, and this node''s next UUIDv7 in 26 characters of base 32; DEFAULT typeid_next(''user'').';

COMMENT ON FUNCTION typeid_prefix(text) IS
  'A TypeID''s prefix (its type); empty for none.';

COMMENT ON FUNCTION typeid_to_uuid(text) IS
  'The UUID of a TypeID, whatever its prefix; 22P02 for a text that is no TypeID.';

COMMENT ON FUNCTION typeid_to_uuid(text, text) IS
  'The UUID of a TypeID of the given prefix (type); 22P02 for a TypeID of another type.';

COMMENT ON FUNCTION ulid_next() IS
  'Next UUIDv7 of this node written as a ULID (26 characters of Crockford base32): the same time, order and guarantees; text order (COLLATE "C") is time order. ulid_to_uuid() stores it in 16 bytes.';

COMMENT ON FUNCTION ulid_timestamp(text) IS
  'The millisecond inside a ULID (its first 10 characters).';

COMMENT ON FUNCTION ulid_to_uuid(text) IS
  'A ULID''s 128 bits as a uuid (case ignored, O read as 0 and I, L as 1); wrong length or characters 22P02.';

COMMENT ON FUNCTION uuid_to_ulid(uuid) IS
  'Any UUID''s 128 bits as a ULID''s 26 characters; for a UUIDv7, the same time and order.';

COMMENT ON FUNCTION uuidv7_at(timestamptz) IS
  'A UUIDv7 whose time is ts (to the millisecond, an instant that has passed): its counter committed in idgen.backfill_database before it is returned (unique among this node''s backfills), 59 random bits (unique against live UUIDv7s as live ones are across nodes).';

COMMENT ON FUNCTION uuidv7_at_batch(timestamptz[]) IS
  'A UUIDv7 at each instant of the array, in its order; a NULL element is 22004.';

COMMENT ON FUNCTION uuidv7_from_timestamp(timestamptz) IS
  'The smallest UUIDv7 of an instant''s millisecond: WHERE id >= uuidv7_from_timestamp(now() - interval ''1 day'') is an index range scan on a uuid key.';

COMMENT ON FUNCTION uuidv7_next() IS
  'Next UUIDv7 (RFC 9562) of this node: 48-bit Unix ms, a 15-bit counter shared by all backends (method 1), 59 random bits from pg_strong_random(). Strictly increasing per node across backends, restarts, crashes and clock steps; across nodes unique by its random bits. Use as DEFAULT uuidv7_next().';

COMMENT ON FUNCTION uuidv7_next_batch(integer) IS
  'n UUIDv7s at once (1 to 10000000), ascending.';

COMMENT ON FUNCTION uuidv7_range(timestamptz, timestamptz) IS
  'The UUIDv7s of the times [since, before), to the millisecond: FOR VALUES FROM (lower) TO (upper) is the range partition of those times on a uuid key.';

COMMENT ON FUNCTION uuidv7_timestamp(uuid) IS
  'The millisecond inside a UUIDv7 (this node''s or any other''s); 22023 for a UUID of another version.';

-- </functions>
-- It returns its argument and raises nothing: a condition it wraps stays as leakproof as it was.
ALTER FUNCTION idgen_internal.within_range(boolean) LEAKPROOF;

-- True for every argument, raising nothing: a security barrier lets it down to the key's relation
-- with the range it estimates.
ALTER FUNCTION idgen_internal.key_range_estimate(uuid) LEAKPROOF;

-- min and max of a UUID key, which PostgreSQL has none of: what min and max of a UUIDv7's time
-- become (idgen.time_conditions), read from the key's index in one row as max(id) is (SORTOP).
CREATE AGGREGATE idgen_internal.max_key(uuid) (
    SFUNC = idgen_internal.uuid_larger, STYPE = uuid,
    COMBINEFUNC = idgen_internal.uuid_larger, SORTOP = >, PARALLEL = SAFE);

CREATE AGGREGATE idgen_internal.min_key(uuid) (
    SFUNC = idgen_internal.uuid_smaller, STYPE = uuid,
    COMBINEFUNC = idgen_internal.uuid_smaller, SORTOP = <, PARALLEL = SAFE);

COMMENT ON AGGREGATE idgen_internal.max_key(uuid) IS
  'The largest UUID, read from an index on it: what max(uuidv7_timestamp(id)) becomes, uuidv7_timestamp(max_key(id)) (idgen.time_conditions).';

COMMENT ON AGGREGATE idgen_internal.min_key(uuid) IS
  'The smallest UUID, read from an index on it: what min(uuidv7_timestamp(id)) becomes (idgen.time_conditions).';

-- The read horizon: readers that page by ID never miss a row committed late.
COMMENT ON VIEW idgen.read_horizon_holders IS
  'What holds the read horizons back: open transactions that took an ordered ID, prepared transactions until COMMIT/ROLLBACK PREPARED, and prepared transactions from before the server started (which hold every horizon at its lowest: their IDs are not known).';

COMMENT ON COLUMN idgen.read_horizon_holders.kind IS 'transaction (an open transaction of a backend), prepared, or prepared before start.';

COMMENT ON COLUMN idgen.read_horizon_holders.stream IS 'snowflake or uuidv7; NULL for a prepared transaction from before the start (it holds both).';

COMMENT ON COLUMN idgen.read_horizon_holders.pid IS 'The backend of an open transaction (see pg_stat_activity).';

COMMENT ON COLUMN idgen.read_horizon_holders.transaction IS 'Its transaction id: a prepared transaction''s, or the backend''s as pg_stat_activity shows it to you (NULL before it wrote anything).';

COMMENT ON COLUMN idgen.read_horizon_holders.gid IS 'A prepared transaction''s name: COMMIT PREPARED or ROLLBACK PREPARED it to release the horizon.';

COMMENT ON COLUMN idgen.read_horizon_holders.oldest_id IS 'The horizon it holds: at or below the first ID the transaction took from the stream (the stream''s next ID when it took it).';

COMMENT ON COLUMN idgen.read_horizon_holders.oldest_id_time IS 'The time inside oldest_id: how far behind the horizon is held.';

COMMENT ON COLUMN idgen.read_horizon_holders.since IS 'When the transaction started (for you, as pg_stat_activity shows it), or was prepared.';

COMMENT ON FUNCTION idgen_internal.node_origins_insert() IS
  'Trigger node_origins_insert: only members of idgen_admin and of the database''s owner (restoring its dump) add rows to idgen.node_origins.';

COMMENT ON FUNCTION idgen_internal.key_type_of(oid, integer) IS
  'A column type as the key-type check sees it: its base type through every level of domains, whether it holds every bigint exactly, whether it rounds values it cannot hold.';

COMMENT ON FUNCTION idgen_internal.segments_moved() IS
  'Trigger function: when a business type''s max_id is moved by anyone but the allocator (idgen.segment_advance, an UPDATE by hand), this node forgets the ranges it has cached of it.';

COMMENT ON FUNCTION idgen.worker_heartbeat(integer, text, timestamp with time zone, bigint) IS
  'Renew a worker-id lease for its ttl and report last_ts, the time of the last ID made; returns the new expiry. The lease number is required (42501 without it): it proves the holder. 55000 when the lease was lost (expired, released or taken): the caller must stop making IDs at once.';

COMMENT ON FUNCTION idgen.worker_release(integer, text, timestamp with time zone, bigint) IS
  'Give a worker-id lease back, with last_ts: the id is free at once and its next holder starts after last_ts. The lease number is required (42501 without it): it proves the holder. Returns false if it was already released.';

-- Columns, for \d+ (each view's and table's columns say what they hold).
COMMENT ON COLUMN idgen.layouts.name IS 'Preset name; for this node''s layout when it is no preset: custom, or the preset''s name followed by (customised) when the spec changes one (idgen.status.layout_spec shows the spec).';

COMMENT ON COLUMN idgen.status.worker_id IS 'The worker id in this node''s IDs; NULL in lease mode while no lease is held, and with idgen.worker_id_source = citus while this database''s Citus group id is not known (idgen.worker_status says why).';

COMMENT ON COLUMN idgen.status.worker_id_source IS 'Where the worker id comes from: the setting idgen.worker_id, a lease from the coordinator (with its code), or the node''s Citus group id.';

COMMENT ON COLUMN idgen.status.persisted_mark IS 'The durable (WAL-logged) high-water mark, moved by every stream (Snowflake IDs, message IDs, UUIDv7s); on a standby, the one replayed from its primary: after a crash, restart or promotion, IDs start above it. NULL before the first reservation.';

COMMENT ON COLUMN idgen.streams.stream IS 'snowflake (snowflake_next, snowflake_next_batch), msgid (msgid_next) or uuidv7 (uuidv7_next, uuidv7_next_batch, ulid_next).';

COMMENT ON COLUMN idgen.streams.ids_per_second IS 'The stream''s capacity: IDs a tick holds, per second.';

COMMENT ON COLUMN idgen.streams.last_tick_time IS 'The start of the tick of the stream''s last ID; NULL before the first since the server started.';

COMMENT ON COLUMN idgen.streams.drift_ms IS 'How far the stream''s logical clock runs ahead of the wall clock, in ms; 0 when it does not (never negative). At most idgen.max_drift.';

COMMENT ON COLUMN idgen.streams.reserved_until IS 'The end of what the durable mark covers for this stream: IDs up to it need no further write; after a crash the stream starts above it. NULL before the first reservation.';

COMMENT ON COLUMN idgen.streams.ids_issued IS 'IDs of the stream made since the server started.';

COMMENT ON COLUMN idgen.streams.overflow_waits IS 'Times a caller waited for the next tick because a tick was used up and idgen.max_drift allowed no borrowing.';

COMMENT ON COLUMN idgen.streams.clock_behind_waits IS 'Times a caller waited for the wall clock to catch up after it stepped back (clock_policy = wait, or drift beyond idgen.max_drift).';

COMMENT ON COLUMN idgen.streams.clock_errors IS 'Times a call raised an error because the clock stepped back (clock_policy = error).';

COMMENT ON COLUMN idgen.streams.backward_steps IS 'Times the wall clock was seen to step back by this stream.';

COMMENT ON COLUMN idgen.streams.largest_backward_step_ms IS 'The largest backward step of the wall clock this stream saw, in ms.';

COMMENT ON COLUMN idgen.worker_status.source IS 'Where this node''s worker id comes from: setting, lease or citus.';

COMMENT ON COLUMN idgen.worker_status.state IS 'fixed for a worker id from the setting; citus group, or no group (last_error says why), for the Citus group id; in lease mode the keeper''s state: starting, acquiring, leased, renewal failing, lapsed or stopped.';

COMMENT ON COLUMN idgen.worker_status.worker_id IS 'The worker id in use; NULL in lease mode while no valid lease is held, and with idgen.worker_id_source = citus while no group id is known.';

COMMENT ON COLUMN idgen.worker_status.lease IS 'The lease number (fencing token) of the lease held: the proof of holding it at the coordinator, so NULL except for superusers and members of idgen_admin.';

COMMENT ON COLUMN idgen.worker_status.last_error IS 'The keeper''s last error (hidden from roles that may not read idgen.worker_lease_conninfo); with idgen.worker_id_source = citus, why the Citus group id is not known.';

GRANT USAGE ON SCHEMA idgen, idgen_internal TO PUBLIC;

REVOKE ALL ON ALL TABLES IN SCHEMA idgen FROM PUBLIC;

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA idgen, idgen_internal FROM PUBLIC;

-- Everyone: how this node makes IDs. (Every caller of snowflake_next() and msgid_next() reads
-- idgen.node_origins once per session.)
GRANT SELECT ON idgen.layouts, idgen.status, idgen.streams, idgen.refusals, idgen.worker_status,
    idgen.segment_allocators, idgen.node_origins TO PUBLIC;

-- A database's owner restoring its dump (pg_restore --no-owner) brings its idgen.node_origins
-- rows, so that a restore onto another server is refused there too; the trigger
-- node_origins_insert lets nobody else add rows.
GRANT INSERT ON idgen.node_origins TO PUBLIC;

GRANT EXECUTE ON FUNCTION idgen_internal.layout_catalog(), idgen_internal.node_status(),
    idgen_internal.stream_status(), idgen_internal.refusal_counts(), idgen_internal.worker_lease_state(),
    idgen_internal.segment_allocator_usage() TO PUBLIC;

-- Readers that page by ID: the horizons and what holds them (pids as pg_stat_activity shows them
-- to everyone; the IDs are bounds of IDs anyone can make).
GRANT EXECUTE ON FUNCTION idgen.read_horizon(), idgen.read_horizon_uuid(),
    idgen_internal.read_horizon_holders() TO PUBLIC;

GRANT SELECT ON idgen.read_horizon_holders TO PUBLIC;

-- Public IDs: everyone may encrypt and decrypt with a key by its name, and see the keys' names,
-- versions and fingerprints; only superusers read the keys (idgen_internal.public_keys), and
-- administrators make, rotate and drop them (below, with everything in idgen).
GRANT EXECUTE ON FUNCTION idgen.encrypt_id(bigint, text, integer), idgen.decrypt_id(bigint, text, integer),
    idgen.encrypt_id_js_safe(bigint, text, integer), idgen.decrypt_id_js_safe(bigint, text, integer),
    idgen.encrypt_uuid(uuid, text, integer), idgen.decrypt_uuid(uuid, text, integer),
    idgen.id_to_public(bigint, text), idgen.public_to_id(text, text),
    idgen.uuid_to_public(uuid, text), idgen.public_to_uuid(text, text),
    idgen_internal.public_key_fingerprint(text, integer) TO PUBLIC;

GRANT SELECT ON idgen.public_keys TO PUBLIC;

-- Table owners: moving their key columns onto snowflake_next() (SECURITY INVOKER: ALTER TABLE's own
-- checks decide what a caller may change).
GRANT EXECUTE ON FUNCTION idgen.convert_to_snowflake(regclass, name, boolean, boolean, boolean),
    idgen.convert_schema_to_snowflake(name, boolean, boolean, boolean) TO PUBLIC;

-- What they and the key-type check (run by anyone's DDL) call: a type's base type, and a
-- column's largest value read as its table's owner, for a caller who may read the column.
GRANT EXECUTE ON FUNCTION idgen_internal.key_type_of(oid, integer), idgen_internal.column_max(oid, text) TO PUBLIC;

-- Sequence owners: adopting their sequences and giving them back (SECURITY INVOKER; the record
-- checks the caller owns the sequence). What an adopted sequence's draws become (rewritten into
-- every role's statements: each checks the sequence privileges PostgreSQL's own function would).
GRANT SELECT ON idgen.adopted_sequences TO PUBLIC;

GRANT EXECUTE ON FUNCTION idgen.adopt_sequence(regclass, boolean), idgen.adopt_sequences(regnamespace, boolean),
    idgen.release_sequence(regclass), idgen_internal.adoption_record(regclass, boolean, bigint),
    idgen_internal.adoption_block_refusal(bigint), idgen_internal.sequence_columns(regclass),
    idgen_internal.sequence_next(regclass, bigint, boolean), idgen_internal.sequence_nextval(regclass),
    idgen_internal.sequence_currval(regclass), idgen_internal.sequence_setval(regclass, bigint),
    idgen_internal.sequence_setval(regclass, bigint, boolean), idgen_internal.sequence_lastval() TO PUBLIC;

-- Table owners: converting a key online (SECURITY INVOKER throughout; the worker runs as the
-- caller). The conversions' tables have row level security: a role sees and writes only the rows
-- of the conversions its roles started.
GRANT SELECT ON idgen.online_conversions TO PUBLIC;

GRANT SELECT, INSERT, UPDATE ON idgen_internal.online_conversions, idgen_internal.online_conversion_steps TO PUBLIC;

GRANT EXECUTE ON FUNCTION idgen.convert_online(regclass, name, text, integer, interval, interval, boolean, boolean),
    idgen.convert_online_resume(regclass), idgen.convert_online_stop(regclass), idgen.convert_online_abort(regclass),
    idgen_internal.online_conversion_plan(regclass, name, text, bigint, boolean), idgen_internal.online_conversion_next(bigint),
    idgen_internal.online_conversion_step_done(bigint, integer), idgen_internal.online_conversion_lock_step(bigint, integer),
    idgen_internal.online_conversion_lock_held(bigint, integer, double precision, boolean),
    idgen_internal.online_conversion_copy_batch(bigint, integer), idgen_internal.online_conversion_index_leftover(bigint, integer),
    idgen_internal.online_conversion_run_step(bigint, integer), idgen_internal.online_conversion_finish(bigint, text, text),
    idgen_internal.online_conversion_launch(bigint), idgen_internal.online_conversion_of(regclass, text),
    idgen_internal.online_conversion_stop(bigint), idgen_internal.online_conversion_copy(),
    idgen_internal.online_conversion_worker(bigint), idgen_internal.online_conversion_latest_state(bigint),
    idgen_internal.online_conversion_state(bigint, text, timestamptz) TO PUBLIC;

GRANT EXECUTE ON PROCEDURE idgen.convert_online_wait(regclass, interval) TO PUBLIC;

-- The key bounds a condition on the time inside a key adds (idgen.time_conditions): they run in
-- every role's queries. Arithmetic of their arguments, nothing else (IMMUTABLE; STABLE those of a
-- timestamp or a date, and the time_local_/time_trunc_ ones, which read a zone's offsets as
-- PostgreSQL's comparisons and casts do); with them what it adds beside them: within_range and
-- key_range_estimate (their own values, estimated by their support functions, which only the
-- planner calls) and min_key/max_key (the min and max of a UUID key; their functions run as their
-- owner, as every aggregate's do).
GRANT EXECUTE ON FUNCTION idgen_internal.id_time_lower(timestamptz, boolean, text),
    idgen_internal.id_time_upper(timestamptz, boolean, text),
    idgen_internal.uuidv7_time_lower(timestamptz, boolean),
    idgen_internal.uuidv7_time_upper(timestamptz, boolean),
    idgen_internal.id_time_lower(timestamp, boolean, text),
    idgen_internal.id_time_upper(timestamp, boolean, text),
    idgen_internal.id_time_lower(date, boolean, text),
    idgen_internal.id_time_upper(date, boolean, text),
    idgen_internal.uuidv7_time_lower(timestamp, boolean),
    idgen_internal.uuidv7_time_upper(timestamp, boolean),
    idgen_internal.uuidv7_time_lower(date, boolean),
    idgen_internal.uuidv7_time_upper(date, boolean),
    idgen_internal.time_local_lower(timestamp, text, text),
    idgen_internal.time_local_upper(timestamp, text, text),
    idgen_internal.time_local_lower(date, text, text),
    idgen_internal.time_local_upper(date, text, text),
    idgen_internal.time_trunc_lower(timestamptz, text, text),
    idgen_internal.time_trunc_upper(timestamptz, text, text),
    idgen_internal.time_trunc_lower(timestamp, text, text),
    idgen_internal.time_trunc_upper(timestamp, text, text),
    idgen_internal.time_trunc_lower(date, text, text),
    idgen_internal.time_trunc_upper(date, text, text),
    idgen_internal.within_range(boolean),
    idgen_internal.key_range_estimate(uuid),
    idgen_internal.max_key(uuid), idgen_internal.min_key(uuid) TO PUBLIC;

-- Clients: leases and whole ranges. The lease functions are SECURITY DEFINER with a pinned
-- search_path; segment_alloc goes through the allocator worker.
GRANT EXECUTE ON FUNCTION idgen.worker_acquire(text, interval, integer, integer),
    idgen.worker_heartbeat(integer, text, timestamp with time zone, bigint),
    idgen.worker_release(integer, text, timestamp with time zone, bigint),
    idgen.segment_alloc(text) TO idgen_client;

-- Administrators: everything in idgen (and the functions behind its views).
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA idgen, idgen_internal TO idgen_admin;

-- IDs at a past time: administrators, and the roles they grant them to (docs/backfill.md).
REVOKE EXECUTE ON FUNCTION snowflake_at(timestamptz), snowflake_at_batch(timestamptz[]),
    uuidv7_at(timestamptz), uuidv7_at_batch(timestamptz[]) FROM PUBLIC;

-- WITH GRANT OPTION: a member of idgen_admin who is no superuser may grant them on.
GRANT EXECUTE ON FUNCTION snowflake_at(timestamptz), snowflake_at_batch(timestamptz[]),
    uuidv7_at(timestamptz), uuidv7_at_batch(timestamptz[]) TO idgen_admin WITH GRANT OPTION;

-- (Deleting a row of idgen.segments_retired is how an administrator lets a dropped type's IDs be
-- handed out again.)
GRANT SELECT, INSERT, UPDATE, DELETE ON idgen.segments, idgen.segments_retired, idgen.workers TO idgen_admin;

-- (idgen.snowflake_start_after() records this system in idgen.node_origins.)
GRANT SELECT, INSERT, DELETE ON idgen.node_origins TO idgen_admin;

GRANT SELECT ON idgen.segment_status, idgen.worker_leases TO idgen_admin;

-- Monitoring: pg_monitor, and so every standard monitoring role (postgres_exporter, sql_exporter,
-- CloudNativePG's exporter), reads every status view, with nothing secret in it: the segment
-- types and their ranges, and the leases without their lease numbers (a holder's proof at
-- heartbeat and release). The views run these functions with the reader's rights.
GRANT SELECT ON idgen.segment_status TO pg_monitor;

GRANT SELECT (worker_id, code, state, host, pid, ttl, acquired_at, heartbeat_at, expires_at,
    released_at, last_ts, next_start_after) ON idgen.worker_leases TO pg_monitor;

GRANT EXECUTE ON FUNCTION idgen_internal.segment_cache(), idgen_internal.worker_free_at(idgen.workers),
    idgen_internal.worker_start_after(idgen.workers) TO pg_monitor;

-- Online key conversion: row level security of its two new tables (created above, with the rest
-- of what is new): a role sees and writes only the conversions of its roles.
-- @changed statement ALTER TABLE idgen_internal.online_conversions: enables row level security of the new table, and its REPLICA trigger, below
-- @changed statement ALTER TABLE idgen_internal.online_conversion_steps: enables row level security of the new table, and its REPLICA trigger, below
-- @changed statement CREATE POLICY members_only: the policies of the new tables, below
ALTER TABLE idgen_internal.online_conversions ENABLE ROW LEVEL SECURITY;
ALTER TABLE idgen_internal.online_conversion_steps ENABLE ROW LEVEL SECURITY;
-- Their rows stop at a logical replication apply worker (the trigger fires only then).
ALTER TABLE idgen_internal.online_conversions ENABLE REPLICA TRIGGER not_applied;
ALTER TABLE idgen_internal.online_conversion_steps ENABLE REPLICA TRIGGER not_applied;
CREATE POLICY members_only ON idgen_internal.online_conversions
    USING (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'));
CREATE POLICY members_only ON idgen_internal.online_conversion_steps
    USING (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'));
