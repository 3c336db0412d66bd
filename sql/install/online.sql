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
ALTER TABLE idgen_internal.online_conversions ENABLE ROW LEVEL SECURITY;
ALTER TABLE idgen_internal.online_conversion_steps ENABLE ROW LEVEL SECURITY;
CREATE POLICY members_only ON idgen_internal.online_conversions
    USING (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'));
CREATE POLICY members_only ON idgen_internal.online_conversion_steps
    USING (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'));
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
ALTER TABLE idgen_internal.online_conversions ENABLE REPLICA TRIGGER not_applied;
ALTER TABLE idgen_internal.online_conversion_steps ENABLE REPLICA TRIGGER not_applied;
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
