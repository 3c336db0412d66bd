-- Run last in the install script: comments on every object, then privileges.

-- id_decode returns one row (all NULL for a NULL ID): tell the planner so.
ALTER FUNCTION id_decode(bigint) ROWS 1;
ALTER FUNCTION id_decode(bigint, text) ROWS 1;

-- Comments for \dx+ and \df+: every function and view says what it is for.
COMMENT ON FUNCTION snowflake_next() IS
  'Next Snowflake ID of this node: unique across backends, restarts, crashes and clock steps; strictly increasing per node. Use as DEFAULT snowflake_next().';
COMMENT ON FUNCTION snowflake_next_batch(integer) IS
  'n Snowflake IDs at once (1 to 10000000), ascending.';
COMMENT ON FUNCTION id_decode(bigint) IS
  'Takes a Snowflake ID apart with this node''s layout: time, worker id, sequence and the layout''s other fields. One row; all NULL for a NULL ID.';
COMMENT ON FUNCTION id_decode(bigint, text) IS
  'Takes a Snowflake ID apart with a named layout (twitter, sonyflake, instagram, ...) or a layout spec.';
COMMENT ON FUNCTION id_timestamp(bigint) IS
  'The time inside a Snowflake ID (start of its tick), with this node''s layout.';
COMMENT ON FUNCTION id_timestamp(bigint, text) IS
  'The time inside a Snowflake ID, with a named layout or layout spec.';
COMMENT ON FUNCTION id_from_timestamp(timestamptz) IS
  'The smallest ID of an instant with this node''s layout: WHERE id >= id_from_timestamp(now() - interval ''1 day'') is an index range scan.';
COMMENT ON FUNCTION id_from_timestamp(timestamptz, text) IS
  'The smallest ID of an instant with a named layout or layout spec.';
COMMENT ON FUNCTION idgen.layout_catalog() IS
  'Rows of the idgen.layouts view.';
COMMENT ON FUNCTION idgen.node_status() IS
  'The row of the idgen.status view.';

-- Segment mode (seed 002, Tinyid/Leaf).
COMMENT ON FUNCTION segment_next(text) IS
  'Next ID of a business type''s number range (Tinyid/Leaf segment mode): from a range cached in shared memory, committed to idgen.segments before any of its IDs is handed out; a ROLLBACK never returns it.';
COMMENT ON FUNCTION segment_next_batch(text, integer) IS
  'n IDs of a business type at once (1 to 10,000,000), ascending.';
COMMENT ON FUNCTION idgen.segment_create(text, bigint, integer, integer, integer, text) IS
  'Registers a business type: IDs above start_id, in ranges of step, each = remainder (mod delta) for odd/even or mod-N splits across databases. 42710 if it exists.';
COMMENT ON FUNCTION idgen.segment_alter(text, integer, text) IS
  'Changes a business type''s step (from its next range) or description; its position never moves backwards.';
COMMENT ON FUNCTION idgen.segment_drop(text) IS
  'Removes a business type and forgets its cached ranges. Its highest ID stays in idgen.segments_retired: created again, the type goes on above it.';
COMMENT ON FUNCTION idgen.segment_alloc(text) IS
  'A whole range for a client that hands IDs out itself (tinyid-client): the IDs x with start_id < x <= end_id and x % delta = remainder. Committed before it is returned; never handed out twice.';
COMMENT ON FUNCTION idgen.segment_advance(bigint, text) IS
  'Moves every business type (or one), and every retired one, margin IDs further: after a point-in-time recovery or the restore of an older backup, past the ranges committed after the recovery point, which the recovered idgen.segments no longer shows.';
COMMENT ON FUNCTION idgen.segment_cache() IS
  'What the shared cache holds for this database''s business types (used by the view idgen.segment_status).';
COMMENT ON FUNCTION idgen.segments_guard() IS
  'Trigger function: refuses to move a business type''s max_id backwards.';
COMMENT ON FUNCTION idgen.segments_retire() IS
  'Trigger function: remembers the highest ID of a business type deleted, renamed or truncated away from idgen.segments, in idgen.segments_retired.';
COMMENT ON FUNCTION idgen.segments_resume() IS
  'Trigger function: a business type created (or renamed) under the name of a dropped one starts above the highest ID that one reached.';

-- Message IDs (seed 000) and text forms.
COMMENT ON FUNCTION msgid_next(integer, text) IS
  '80-bit message ID (seed 000) as 19 characters XXXX-XXXX-XXXX-XXXX: 42-bit ms time, 12-bit sequence shared by all backends of this node, 4-bit session type (0..15), 22-bit session hash. Text order (COLLATE "C") is time order. Unique per node.';
COMMENT ON FUNCTION msgid_decode(text) IS
  'Takes a message ID apart: ts, sequence, session_type, session_hash. Accepts the 19-character form or the 16 symbols without dashes.';
COMMENT ON FUNCTION msgid_session_hash(text) IS
  'The 22-bit session hash inside message IDs: Java''s String.hashCode() of the session id (UTF-16), low 22 bits. Stable across versions and platforms.';
COMMENT ON FUNCTION msgid_from_timestamp(timestamptz) IS
  'The smallest message ID of an instant: WHERE msgid >= msgid_from_timestamp(now() - interval ''1 hour'') COLLATE "C".';
COMMENT ON FUNCTION id_to_text(bigint, text) IS
  'Fixed-width, order-preserving text form of an ID: base32 (2-9, A-Z without I, O), crockford32, base36, base58, base62 (default) or hex. Text order is numeric order for IDs >= 0.';
COMMENT ON FUNCTION id_from_text(text, text) IS
  'The ID of a text form made by id_to_text with the same base; wrong length or characters 22P02, above 64 bits 22003.';

-- Worker-id leases (seed 001), on a coordinator database.
COMMENT ON FUNCTION idgen.worker_acquire(text, interval, integer, integer) IS
  'Lease a worker id in [min_id, max_id] (default: this layout''s worker range) for ttl. The same code gets its old id back first; a live lease is never handed out twice. Returns the id, the lease number (a fencing token that grows by a random step with each holder: pass it to heartbeat and release, it proves the holder), the expiry, and start_after: make IDs only later than it. Run it in autocommit mode.';
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
COMMENT ON FUNCTION idgen.node_system_identifier() IS
  'This database system''s identifier (system_identifier of pg_control_system()), as idgen.node_origins records it.';

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

-- Everyone: how this node makes IDs. (Every caller of snowflake_next() and msgid_next() reads
-- idgen.node_origins once per session.)
GRANT SELECT ON idgen.layouts, idgen.status, idgen.worker_status, idgen.node_origins TO PUBLIC;
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
-- (Deleting a row of idgen.segments_retired is how an administrator lets a dropped type's IDs be
-- handed out again.)
GRANT SELECT, INSERT, UPDATE, DELETE ON idgen.segments, idgen.segments_retired, idgen.workers TO idgen_admin;
-- (idgen.snowflake_start_after() records this system in idgen.node_origins.)
GRANT SELECT, INSERT, DELETE ON idgen.node_origins TO idgen_admin;
GRANT SELECT ON idgen.segment_status, idgen.worker_leases TO idgen_admin;
