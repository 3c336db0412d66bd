-- pg_idgen 0.1.0 -> 0.2.0, written by hand (a released upgrade script is never edited; see
-- sql/released.sha256). 0.2.0 adds worker-id leases (issue 5), privileges (issue 7) and
-- idgen.snowflake_start_after().
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.2.0'" to load this file. \quit

CREATE  FUNCTION idgen."worker_lease_precheck"(
	"caller" TEXT /* & str */
) RETURNS INT /* i32 */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'worker_lease_precheck_wrapper';

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
COMMENT ON TABLE idgen.workers IS 'Worker-id leases (seed 001): one row per worker id ever leased, with its last holder (code), the lease number (a fencing token, +1 per holder), expiry, last heartbeat, and last_ts, the time the next holder starts after.';
SELECT pg_catalog.pg_extension_config_dump('idgen.workers', '');

-- When a lease may be handed out again. A released one at once. An expired one once its holder
-- has surely stopped: its own deadline is its last renewal + ttl (even if expires_at was moved
-- earlier by hand), and the grace period covers the clock difference between holder and here.
CREATE FUNCTION idgen.worker_free_at(w idgen.workers) RETURNS timestamptz
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
CREATE FUNCTION idgen.worker_start_after(w idgen.workers) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN w.released_at IS NOT NULL THEN greatest(w.last_ts, w.released_at)
        ELSE greatest(w.last_ts + w.ttl + pg_catalog.current_setting('idgen.worker_lease_grace')::interval,
                      idgen.worker_free_at(w))
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
    c integer;
    tries integer := 0;
    n_held bigint;
    n_grace bigint;
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
    IF NOT FOUND THEN
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
                WHILE c <= hi AND tries < 64 LOOP
                    tries := tries + 1;
                    -- Another acquirer claiming c holds this lock until it commits: skip, as SKIP
                    -- LOCKED does for rows. ON CONFLICT skips ids that are taken.
                    IF pg_try_advisory_xact_lock(1768161281, c) THEN
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
                    END IF;
                    c := c + 1;
                END LOOP;
                EXIT passes WHEN tries >= 64;
            END LOOP;
        END LOOP;
        -- 3. The id that has been free the longest.
        SELECT * INTO r FROM idgen.workers w
         WHERE w.worker_id BETWEEN lo AND hi
           AND idgen.worker_free_at(w) <= clock_timestamp()
         ORDER BY idgen.worker_free_at(w), w.worker_id LIMIT 1 FOR UPDATE SKIP LOCKED;
    END IF;
    IF r.worker_id IS NULL THEN
        SELECT count(*) FILTER (WHERE w.released_at IS NULL AND w.expires_at > clock_timestamp()),
               count(*) FILTER (WHERE w.released_at IS NULL AND w.expires_at <= clock_timestamp()),
               min(idgen.worker_free_at(w)) FILTER (WHERE w.released_at IS NULL)
          INTO n_held, n_grace, soonest
          FROM idgen.workers w WHERE w.worker_id BETWEEN lo AND hi;
        RAISE EXCEPTION 'no worker id is free between % and %: % held, % expired and waiting out the grace period',
                lo, hi, n_held, n_grace
            USING ERRCODE = '53000',
                  DETAIL = format('An expired lease can be taken again %s s after it expires (idgen.worker_lease_grace). The soonest is free at %s.',
                                  extract(epoch FROM grace)::float8, coalesce(soonest::text, 'no time yet: another acquirer is claiming the last free id')),
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

-- Why a holder's call on a lease fails; NULL when `r` is that holder's live lease.
CREATE FUNCTION idgen.worker_lease_lost(r idgen.workers, worker_id integer, code text, lease bigint)
RETURNS text LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
    SELECT CASE
        WHEN r.worker_id IS NULL THEN format('worker id %s was never leased', worker_id)
        WHEN r.code <> code OR r.lease <> coalesce(lease, r.lease) THEN
            format('worker id %s is now leased by "%s" (lease %s)', worker_id, r.code, r.lease)
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
    PERFORM idgen.worker_lease_precheck('worker_heartbeat');
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
    lost := idgen.worker_lease_lost(r, worker_id, code, lease);
    IF lost IS NOT NULL THEN
        RAISE EXCEPTION 'lease lost: %', lost
            USING ERRCODE = '55000',
                  DETAIL = format('Holder "%s" may no longer make IDs with worker id %s (its row: lease %s, expires_at %s, released_at %s).',
                                  code, worker_id, coalesce(r.lease::text, '-'), coalesce(r.expires_at::text, '-'), coalesce(r.released_at::text, '-')),
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
    SELECT * INTO r FROM idgen.workers w WHERE w.worker_id = worker_id FOR UPDATE;
    IF r.worker_id IS NULL THEN
        RAISE EXCEPTION 'idgen.worker_release: worker id % was never leased', worker_id USING ERRCODE = '42704';
    END IF;
    IF r.code <> code OR r.lease <> coalesce(lease, r.lease) THEN
        RAISE EXCEPTION 'idgen.worker_release: worker id % is leased by "%" (lease %), not by "%"', worker_id, r.code, r.lease, code
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
            WHEN idgen.worker_free_at(w) > clock_timestamp() THEN 'grace'
            ELSE 'expired' END AS state,
       w.lease, w.host, w.pid, w.ttl, w.acquired_at, w.heartbeat_at, w.expires_at, w.released_at, w.last_ts,
       idgen.worker_start_after(w) AS next_start_after
FROM idgen.workers w ORDER BY w.worker_id;
COMMENT ON VIEW idgen.worker_leases IS 'The lease of each worker id ever leased from this database: held, grace (expired, not yet reusable), expired or released, and the time its next holder starts after.';

CREATE  FUNCTION idgen."snowflake_start_after"(
	"ts" timestamp with time zone /* TimestampWithTimeZone */
) RETURNS timestamp with time zone /* TimestampWithTimeZone */
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'snowflake_start_after_wrapper';

CREATE  FUNCTION idgen."worker_lease_state"() RETURNS TABLE (
	"source" TEXT,  /* String */
	"state" TEXT,  /* String */
	"worker_id" INT,  /* Option < i32 > */
	"code" TEXT,  /* Option < String > */
	"lease" bigint,  /* Option < i64 > */
	"can_generate" bool,  /* bool */
	"valid_for_ms" bigint,  /* Option < i64 > */
	"acquired_at" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"expires_at" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"last_heartbeat" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"start_after" timestamp with time zone,  /* Option < TimestampWithTimeZone > */
	"acquisitions" bigint,  /* i64 */
	"renewals" bigint,  /* i64 */
	"failures" bigint,  /* i64 */
	"first_lease_ms" bigint,  /* Option < i64 > */
	"last_error" TEXT  /* Option < String > */
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'worker_lease_state_wrapper';

CREATE VIEW idgen.worker_status AS SELECT * FROM idgen.worker_lease_state();
COMMENT ON VIEW idgen.worker_status IS 'Where this node''s worker id comes from; in lease mode: the lease, whether IDs can be made now, how long it stays valid without renewal, expiry at the coordinator, last heartbeat, the time IDs start after, counters and the keeper''s last error.';


COMMENT ON FUNCTION idgen.worker_acquire(text, interval, integer, integer) IS
  'Lease a worker id in [min_id, max_id] (default: this layout''s worker range) for ttl. The same code gets its old id back first; a live lease is never handed out twice. Returns the id, the lease number (fencing token), the expiry, and start_after: make IDs only later than it. Run it in autocommit mode.';
COMMENT ON FUNCTION idgen.worker_heartbeat(integer, text, timestamp with time zone, bigint) IS
  'Renew a worker-id lease for its ttl and report last_ts, the time of the last ID made; returns the new expiry. 55000 when the lease was lost (expired, released or taken): the caller must stop making IDs at once.';
COMMENT ON FUNCTION idgen.worker_release(integer, text, timestamp with time zone, bigint) IS
  'Give a worker-id lease back, with last_ts: the id is free at once and its next holder starts after last_ts. Returns false if it was already released.';
COMMENT ON FUNCTION idgen.worker_start_after(idgen.workers) IS
  'The time the next holder of a lease starts after: the holder''s last reported time, or for an expired lease its expiry plus idgen.worker_lease_grace.';
COMMENT ON FUNCTION idgen.worker_lease_lost(idgen.workers, integer, text, bigint) IS
  'Internal: why a holder''s heartbeat or release on a lease row fails, or NULL if the lease is still theirs.';
COMMENT ON FUNCTION idgen.worker_lease_precheck(text) IS
  'Internal: refuses a lease call inside a transaction block (a ROLLBACK would undo the lease while its holder uses it); returns this layout''s largest worker id.';
COMMENT ON FUNCTION idgen.worker_lease_state() IS
  'This node''s worker id source and, in lease mode, its lease as the keeper reports it; read it through the view idgen.worker_status.';
COMMENT ON FUNCTION idgen.worker_free_at(idgen.workers) IS
  'When a lease may be handed out again: at its release, or once its holder has surely stopped (last renewal + ttl, or expires_at if later) plus idgen.worker_lease_grace.';
COMMENT ON FUNCTION idgen.snowflake_start_after(timestamp with time zone) IS
  'Moves this node''s Snowflake and message-ID clocks past ts, durably, and returns when the next IDs start: after restoring onto a new server, moving a worker id to another machine, or setting a clock back for good. At most idgen.max_drift ahead of the clock.';

COMMENT ON SCHEMA idgen IS
  'pg_idgen administration: segments, worker-id leases, status views. Generators and decoders are in the extension''s own schema.';

-- Privileges. Making and decoding IDs is for everyone who can connect. Administration (segments,
-- leases, the idgen tables) is for members of idgen_admin. Leasing worker ids and taking whole
-- segment ranges is for members of idgen_client (idgen_admin includes it). The roles are created
-- once per cluster and kept when the extension is dropped (other databases may use them).
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'idgen_admin') THEN
        CREATE ROLE idgen_admin NOLOGIN;
        COMMENT ON ROLE idgen_admin IS 'pg_idgen administration: segments, worker leases, the idgen tables.';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'idgen_client') THEN
        CREATE ROLE idgen_client NOLOGIN;
        COMMENT ON ROLE idgen_client IS 'pg_idgen clients: lease worker ids (idgen.worker_acquire/heartbeat/release) and take whole segment ranges (idgen.segment_alloc).';
    END IF;
    IF NOT pg_catalog.pg_has_role('idgen_admin', 'idgen_client', 'MEMBER') THEN
        GRANT idgen_client TO idgen_admin;
    END IF;
END
$roles$;

GRANT USAGE ON SCHEMA idgen TO PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA idgen FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA idgen FROM PUBLIC;

-- Everyone: how this node makes IDs.
GRANT SELECT ON idgen.layouts, idgen.status, idgen.worker_status TO PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.layout_catalog(), idgen.node_status(), idgen.worker_lease_state()
    TO PUBLIC;

-- Clients: leases and whole ranges. The lease functions are SECURITY DEFINER with a pinned
-- search_path; segment_alloc goes through the allocator worker.
GRANT EXECUTE ON FUNCTION idgen.worker_acquire(text, interval, integer, integer),
    idgen.worker_heartbeat(integer, text, timestamp with time zone, bigint),
    idgen.worker_release(integer, text, timestamp with time zone, bigint),
    idgen.segment_alloc(text) TO idgen_client;

-- Administrators: everything in idgen.
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA idgen TO idgen_admin;
GRANT SELECT, INSERT, UPDATE, DELETE ON idgen.segments, idgen.workers TO idgen_admin;
GRANT SELECT ON idgen.segment_status, idgen.worker_leases TO idgen_admin;
