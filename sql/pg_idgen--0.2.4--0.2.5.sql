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

-- idgen.key_type_check and the event trigger that reads it (sql/key_types.sql): a column whose
-- default is snowflake_next() or segment_next() is checked when the DDL runs.
-- A column whose default is snowflake_next() or segment_next() must be able to hold the IDs:
-- checked when the DDL runs (CREATE TABLE, ALTER TABLE ... SET DEFAULT / TYPE, partitions), not at
-- the first INSERT, whose bare "integer out of range" names neither the column nor pg_idgen.
-- snowflake_next() on smallint, integer or real can never work, and on double precision it rounds
-- IDs above 2^53 into repeats: an ERROR. segment_next() there works until its numbers outgrow the
-- type: a WARNING. idgen.key_type_check = warning turns the ERROR into a WARNING (to restore an old
-- schema as it was), off skips the check.
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
        SELECT DISTINCT cmd.objid::regclass AS tbl, a.attname, format_type(a.atttypid, a.atttypmod) AS typ,
               coalesce(nullif(t.typbasetype, 0), t.oid) AS base, p.proname
          FROM pg_event_trigger_ddl_commands() cmd
          JOIN pg_attrdef ad ON ad.adrelid = cmd.objid
          JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum AND NOT a.attisdropped
          JOIN pg_type t ON t.oid = a.atttypid
          JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                          AND d.refclassid = 'pg_proc'::regclass
          JOIN pg_proc p ON p.oid = d.refobjid AND p.proname IN ('snowflake_next', 'segment_next')
          JOIN pg_depend e ON e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e'
          JOIN pg_extension x ON x.oid = e.refobjid AND x.extname = 'pg_idgen'
         WHERE cmd.classid = 'pg_class'::regclass
         ORDER BY 1, 2
    LOOP
        IF c.base IN ('int2'::regtype, 'int4'::regtype, 'float4'::regtype) THEN
            fatal := c.proname = 'snowflake_next';
        ELSIF c.base = 'float8'::regtype AND c.proname = 'snowflake_next' THEN
            IF js_safe IS NULL THEN
                SELECT l.js_safe INTO js_safe FROM idgen.layouts l WHERE l.is_node_layout;
            END IF;
            IF js_safe THEN
                CONTINUE;
            END IF;
            fatal := true;
        ELSE
            CONTINUE;
        END IF;
        IF fatal AND mode = 'error' THEN
            RAISE EXCEPTION 'column "%" of table % is %, which cannot hold the IDs of its default %()', c.attname, c.tbl, c.typ, c.proname
                USING ERRCODE = '42804',
                      DETAIL = CASE WHEN c.base = 'float8'::regtype
                                    THEN 'Snowflake IDs of this node''s layout go above 2^53, where double precision rounds them: IDs would repeat.'
                                    ELSE 'Snowflake IDs are 64-bit numbers: every INSERT would fail with "out of range".' END,
                      HINT = format('Make the column bigint (ALTER TABLE %s ALTER COLUMN %I TYPE bigint, and the columns that reference it). '
                                    'SET idgen.key_type_check = warning lets this command through (to restore an old schema as it was).', c.tbl, c.attname);
        END IF;
        RAISE WARNING 'column "%" of table % is %, which cannot hold all IDs of its default %()', c.attname, c.tbl, c.typ, c.proname
            USING DETAIL = CASE WHEN fatal
                                THEN 'Every Snowflake ID is out of its range (or, in double precision, rounded into repeats).'
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
REVOKE EXECUTE ON FUNCTION idgen_internal.check_key_types() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idgen_internal.check_key_types() TO idgen_admin;

-- idgen.convert_to_snowflake and idgen.convert_schema_to_snowflake (sql/convert.sql).
-- Moving an existing key column (serial, bigserial, identity, or a nextval() default) onto
-- DEFAULT snowflake_next(), in one transaction: the caller's, so a failure anywhere undoes all of
-- it. SECURITY INVOKER: the caller must own the tables it changes, as for ALTER TABLE itself.
-- Each function returns the statements it ran (or, with dry_run, would run), in order.
CREATE FUNCTION idgen.convert_to_snowflake(
    tbl regclass, col name,
    widen boolean DEFAULT false, drop_sequence boolean DEFAULT false, dry_run boolean DEFAULT false)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    rel pg_class;
    att pg_attribute;
    base oid;
    seq regclass;
    ident "char";
    max_id numeric;
    first_id bigint;
    narrow text[];
    refs text[];
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
    -- The Snowflake IDs made from now on must be above every value already there.
    EXECUTE format('SELECT max(%I)::numeric FROM %s', col, tbl) INTO max_id;
    EXECUTE format('SELECT %s.id_from_timestamp(clock_timestamp())', ext) INTO first_id;
    IF max_id >= first_id THEN
        RAISE EXCEPTION 'idgen.convert_to_snowflake: column "%" of table % holds values up to %, not below %, the smallest Snowflake ID of this node now', col, tbl, max_id, first_id
            USING ERRCODE = '55000',
                  DETAIL = 'New IDs could repeat a value already in the column.',
                  HINT = 'If these values are Snowflake IDs of this layout, move this node past them first: SELECT idgen.snowflake_start_after(id_timestamp(<the largest>)).';
    END IF;
    base := coalesce(nullif((SELECT typbasetype FROM pg_type WHERE oid = att.atttypid), 0), att.atttypid);
    IF base NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'numeric'::regtype) THEN
        RAISE EXCEPTION 'idgen.convert_to_snowflake: column "%" of table % is %, not an integer', col, tbl, format_type(att.atttypid, att.atttypmod)
            USING ERRCODE = '42804', HINT = 'Snowflake IDs go into bigint columns.';
    END IF;
    -- The key if it is narrower than bigint, and every column of a foreign key that references it
    -- and is (a partitioned table's column stands for its partitions').
    SELECT array_agg(x.name ORDER BY x.name), array_agg(x.alter ORDER BY x.name)
      INTO narrow, refs
      FROM (SELECT format('%s.%I', tbl, col) AS name,
                   format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint', tbl, col) AS alter
             WHERE base IN ('int2'::regtype, 'int4'::regtype)
            UNION
            SELECT format('%s.%I', c.conrelid::regclass, a.attname),
                   format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint', c.conrelid::regclass, a.attname)
              FROM pg_constraint c
              JOIN LATERAL unnest(c.conkey, c.confkey) AS k(fk, pk) ON true
              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.fk
              JOIN pg_type t ON t.oid = a.atttypid
             WHERE c.contype = 'f' AND c.confrelid = tbl AND k.pk = att.attnum AND c.conparentid = 0
               AND coalesce(nullif(t.typbasetype, 0), t.oid) IN ('int2'::regtype, 'int4'::regtype)) x;
    IF narrow IS NOT NULL THEN
        IF NOT widen THEN
            RAISE EXCEPTION 'idgen.convert_to_snowflake: % cannot hold Snowflake IDs', array_to_string(narrow, ', ')
                USING ERRCODE = '42804',
                      DETAIL = format('Snowflake IDs are 64-bit; the key %s.%I is %s, and these columns (the key, or columns that reference it) are narrower than bigint.',
                                      tbl, col, format_type(att.atttypid, att.atttypmod)),
                      HINT = 'Call it with widen => true to change them to bigint in the same transaction (this rewrites those tables).';
        END IF;
        plan := plan || refs;
    END IF;
    IF ident <> '' THEN
        -- The identity's sequence belongs to it and goes with it.
        plan := plan || format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    END IF;
    plan := plan || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s.snowflake_next()', tbl, col, ext);
    IF ident = '' THEN
        IF drop_sequence THEN
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
BEGIN
    IF schema_name IS NULL OR widen IS NULL OR drop_sequence IS NULL OR dry_run IS NULL THEN
        RAISE EXCEPTION 'idgen.convert_schema_to_snowflake: no argument may be NULL' USING ERRCODE = '22004';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_namespace WHERE nspname = schema_name) THEN
        RAISE EXCEPTION 'idgen.convert_schema_to_snowflake: schema "%" does not exist', schema_name USING ERRCODE = '3F000';
    END IF;
    FOR c IN
        SELECT t.oid::regclass AS tbl, a.attname
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
        RETURN QUERY SELECT c.tbl, c.attname, s
                       FROM idgen.convert_to_snowflake(c.tbl, c.attname, widen, drop_sequence, dry_run) s;
    END LOOP;
END
$$;

COMMENT ON FUNCTION idgen.convert_to_snowflake(regclass, name, boolean, boolean, boolean) IS
  'Moves a serial, bigserial, identity or nextval()-default column onto DEFAULT snowflake_next(): checks its values are below the node''s next ID, widens integer keys and the columns that reference them (widen), drops the identity or detaches (or drops) the sequence; returns the statements, run unless dry_run.';
COMMENT ON FUNCTION idgen.convert_schema_to_snowflake(name, boolean, boolean, boolean) IS
  'idgen.convert_to_snowflake for every sequence-backed column of a schema''s tables; lists the statements without running them unless dry_run => false.';
-- In the order of a fresh install, so that the privileges read the same.
REVOKE EXECUTE ON FUNCTION idgen.convert_to_snowflake(regclass, name, boolean, boolean, boolean),
    idgen.convert_schema_to_snowflake(name, boolean, boolean, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.convert_to_snowflake(regclass, name, boolean, boolean, boolean),
    idgen.convert_schema_to_snowflake(name, boolean, boolean, boolean) TO PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.convert_to_snowflake(regclass, name, boolean, boolean, boolean),
    idgen.convert_schema_to_snowflake(name, boolean, boolean, boolean) TO idgen_admin;

-- UUIDv7 (RFC 9562) and ULIDs: new C functions of the library, in the extension's schema.
CREATE FUNCTION uuidv7_next() RETURNS uuid
STRICT VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'uuidv7_next_wrapper';
CREATE FUNCTION uuidv7_next_batch(n integer) RETURNS SETOF uuid
VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'uuidv7_next_batch_wrapper';
CREATE FUNCTION ulid_next() RETURNS text
STRICT VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'ulid_next_wrapper';
CREATE FUNCTION uuid_to_ulid(id uuid) RETURNS text
IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_to_ulid_wrapper';
CREATE FUNCTION ulid_to_uuid(ulid text) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'ulid_to_uuid_wrapper';
CREATE FUNCTION uuidv7_timestamp(id uuid) RETURNS timestamptz
IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'uuidv7_timestamp_wrapper';
CREATE FUNCTION ulid_timestamp(ulid text) RETURNS timestamptz
IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'ulid_timestamp_wrapper';
CREATE FUNCTION uuidv7_from_timestamp(ts timestamptz) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'uuidv7_from_timestamp_wrapper';
COMMENT ON FUNCTION uuidv7_next() IS
  'Next UUIDv7 (RFC 9562) of this node: 48-bit Unix ms, a 15-bit counter shared by all backends (method 1), 59 random bits from pg_strong_random(). Strictly increasing per node across backends, restarts, crashes and clock steps; across nodes unique by its random bits. Use as DEFAULT uuidv7_next().';
COMMENT ON FUNCTION uuidv7_next_batch(integer) IS
  'n UUIDv7s at once (1 to 10000000), ascending.';
COMMENT ON FUNCTION ulid_next() IS
  'Next UUIDv7 of this node written as a ULID (26 characters of Crockford base32): the same time, order and guarantees; text order (COLLATE "C") is time order. ulid_to_uuid() stores it in 16 bytes.';
COMMENT ON FUNCTION uuid_to_ulid(uuid) IS
  'Any UUID''s 128 bits as a ULID''s 26 characters; for a UUIDv7, the same time and order.';
COMMENT ON FUNCTION ulid_to_uuid(text) IS
  'A ULID''s 128 bits as a uuid (case ignored, O read as 0 and I, L as 1); wrong length or characters 22P02.';
COMMENT ON FUNCTION uuidv7_timestamp(uuid) IS
  'The millisecond inside a UUIDv7 (this node''s or any other''s); 22023 for a UUID of another version.';
COMMENT ON FUNCTION ulid_timestamp(text) IS
  'The millisecond inside a ULID (its first 10 characters).';
COMMENT ON FUNCTION uuidv7_from_timestamp(timestamptz) IS
  'The smallest UUIDv7 of an instant''s millisecond: WHERE id >= uuidv7_from_timestamp(now() - interval ''1 day'') is an index range scan on a uuid key.';

-- UUIDv7s share the clocks and the durable mark: the comments that named the streams.
COMMENT ON TABLE idgen.node_origins IS 'The database systems (pg_control system identifiers) whose IDs this database may hold. When a row names another system (after pg_upgrade, a restore onto another server, a file copy), Snowflake IDs, message IDs and UUIDv7s are refused here until idgen.snowflake_start_after() moves this node past the old IDs, which leaves only this system''s row.';
COMMENT ON FUNCTION idgen.snowflake_start_after(timestamp with time zone) IS
  'Moves this node''s clocks (Snowflake IDs, message IDs, UUIDv7s) past ts, durably, and returns when the next IDs start: after restoring onto a new server, moving a worker id to another machine, or setting a clock back for good. At most idgen.max_drift ahead of the clock.';

-- The worker id inside an ID as a scalar: with a named layout it is IMMUTABLE, so that Citus
-- pushes it down into every shard (id_decode with the node's layout is STABLE and set-returning).
CREATE FUNCTION id_worker_id(id bigint) RETURNS bigint
STRICT STABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'id_worker_id_wrapper';
CREATE FUNCTION id_worker_id(id bigint, layout text) RETURNS bigint
IMMUTABLE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'id_worker_id_with_wrapper';
COMMENT ON FUNCTION id_worker_id(bigint) IS
  'The worker id inside a Snowflake ID, with this node''s layout; NULL for a layout without worker bits.';
COMMENT ON FUNCTION id_worker_id(bigint, text) IS
  'The worker id inside a Snowflake ID, with a named layout or layout spec. IMMUTABLE: distributed queries (Citus) push it down into every shard, in the select list, WHERE and GROUP BY.';

-- idgen.worker_id_source = citus: the node's Citus group id is its worker id.
COMMENT ON COLUMN idgen.status.worker_id IS 'The worker id in this node''s IDs; NULL in lease mode while no lease is held, and with idgen.worker_id_source = citus while this database''s Citus group id is not known (idgen.worker_status says why).';
COMMENT ON COLUMN idgen.status.worker_id_source IS 'Where the worker id comes from: the setting idgen.worker_id, a lease from the coordinator (with its code), or the node''s Citus group id.';
COMMENT ON COLUMN idgen.worker_status.source IS 'Where this node''s worker id comes from: setting, lease or citus.';
COMMENT ON COLUMN idgen.worker_status.state IS 'fixed for a worker id from the setting; citus group, or no group (last_error says why), for the Citus group id; in lease mode the keeper''s state: starting, acquiring, leased, renewal failing, lapsed or stopped.';
COMMENT ON COLUMN idgen.worker_status.worker_id IS 'The worker id in use; NULL in lease mode while no valid lease is held, and with idgen.worker_id_source = citus while no group id is known.';
COMMENT ON COLUMN idgen.worker_status.last_error IS 'The keeper''s last error (hidden from roles that may not read idgen.worker_lease_conninfo); with idgen.worker_id_source = citus, why the Citus group id is not known.';

-- idgen.streams: every clock stream of the node (Snowflake IDs, message IDs, UUIDv7s), as
-- idgen.status shows the Snowflake one.
CREATE FUNCTION idgen_internal."stream_status"() RETURNS TABLE (
	"stream" TEXT,
	"ids_per_second" double precision,
	"last_tick_time" timestamp with time zone,
	"drift_ms" bigint,
	"reserved_until" timestamp with time zone,
	"ids_issued" bigint,
	"overflow_waits" bigint,
	"clock_behind_waits" bigint,
	"clock_errors" bigint,
	"backward_steps" bigint,
	"largest_backward_step_ms" bigint
)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'stream_status_wrapper';
CREATE VIEW idgen.streams AS SELECT * FROM idgen_internal.stream_status();
COMMENT ON VIEW idgen.streams IS 'This node''s clock streams, a row each: Snowflake IDs, message IDs, UUIDv7s (and ULIDs). Capacity, last tick, drift from the wall clock, how far the durable mark covers, counters.';
COMMENT ON FUNCTION idgen_internal.stream_status() IS
  'The rows of the idgen.streams view.';
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
REVOKE EXECUTE ON FUNCTION idgen_internal.stream_status() FROM PUBLIC;
GRANT SELECT ON idgen.streams TO PUBLIC;
GRANT EXECUTE ON FUNCTION idgen_internal.stream_status() TO PUBLIC, idgen_admin;
