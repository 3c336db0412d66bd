-- pg_idgen 0.2.4 -> 0.2.5
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.2.5'" to load this file. \quit

-- idgen.worker_heartbeat: a lost lease (55000, "lease lost: ...", as before) also names the
-- condition idgen_lease_lost in the error's CONSTRAINT field, which the lease keeper of a node reads
-- instead of the message. CREATE OR REPLACE keeps the function's privileges and comment.
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
