-- The differential test of a free created_at (tests/system/created_at.sh): random conditions on
-- the time inside keys, over tables of awkward keys, run with idgen.time_conditions off and on
-- (on: once through the key's index, once as a filter beside the original) must find the same
-- rows every time. Keys: the first and last ID of ticks and their neighbours, a layout's ends,
-- IDs of other layouts (random bigints), NULLs; for UUIDs the first and last of milliseconds,
-- random UUIDv7s, and (where no constraint forbids them) version 1 and 4 UUIDs. Times: the exact
-- time of a key, a microsecond, a millisecond and a tick either side of it, instants before the
-- epoch and after the layout's end, infinity, -infinity and NULL, written in several time zones,
-- as constants, bind parameters or stable expressions, as a timestamptz, a timestamp or a date;
-- operators <, <=, =, >=, >, BETWEEN, on either side.
--
--   ca_tables()            the tables (ca_tables lists them)
--   ca_differential(n)     n conditions per table; a row per disagreement (none expected); how
--                          many conditions ran and how many plans read a key range go to ca_stats;
--                          every eighth condition also as a DELETE (rolled back), through a SQL
--                          and a PL/pgSQL function, and as a generic plan made in one TimeZone and
--                          run in another (ca_stats.more counts them)
--   ca_shapes(n)           n conditions per table and shape (subqueries, views, set operations,
--                          grouping sets, joins, sorts by the time, 2,000 conditions at once); a
--                          row per disagreement (none expected)
--   ca_control(n)          the same kind of conditions, checked against a bound one key too tight
--                          written by hand: returns how many then disagree (more than none: the
--                          data and conditions reach the very edge of a range)

CREATE TABLE ca_tables (tbl text, decoder text, layout text, key_type text, derives boolean);
CREATE TABLE ca_stats (conditions int, tables int, ranged int, expected int, more int);

-- The answer of a statement that changes rows (its one value), the changes rolled back; an error
-- is an answer too (its SQLSTATE).
CREATE FUNCTION ca_rolled_back(sql text, param anyelement) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    a text;
BEGIN
    BEGIN
        EXECUTE sql INTO a USING param;
        RAISE EXCEPTION USING ERRCODE = 'XCA01', MESSAGE = coalesce(a, '');
    EXCEPTION WHEN SQLSTATE 'XCA01' THEN
        RETURN SQLERRM;
    END;
EXCEPTION WHEN OTHERS THEN
    RETURN 'ERROR ' || SQLSTATE;
END $$;

CREATE FUNCTION ca_key(tbl text, k anyelement) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('INSERT INTO %I VALUES ($1)', tbl) USING k;
END $$;

CREATE FUNCTION ca_tables() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    spec text;
    n int := 0;
    tbl text;
    epoch timestamptz;
    unit interval;
    max_id bigint;
    ends timestamptz;
    t timestamptz;
    f bigint;
    g bigint;
    ms bigint;
    i int;
BEGIN
    FOR spec IN
        SELECT name FROM idgen.layouts WHERE NOT is_node_layout OR name = 'pg_idgen'
        UNION ALL SELECT 'twitter epoch=2024-01-01'
        UNION ALL SELECT 'pg_idgen unit=10ms epoch=2025-06-30'
    LOOP
        n := n + 1;
        tbl := 'ca_s' || n;
        EXECUTE format('CREATE TABLE %I (id bigint)', tbl);
        INSERT INTO ca_tables VALUES (tbl, 'id_timestamp', spec, 'bigint', true);
        epoch := id_timestamp(0, spec);
        -- The layout's last ID: the largest one its decoder takes (checked, not trusted).
        max_id := idgen_internal.id_time_upper('infinity', true, spec);
        PERFORM id_timestamp(max_id, spec);
        IF max_id < 9223372036854775807 THEN
            BEGIN
                PERFORM id_timestamp(max_id + 1, spec);
                RAISE EXCEPTION 'layout %: % decodes, but is past its last ID %', spec, max_id + 1, max_id;
            EXCEPTION WHEN invalid_parameter_value THEN NULL;
            END;
        END IF;
        unit := id_timestamp(idgen_internal.id_time_lower(epoch, false, spec), spec) - epoch;
        ends := id_timestamp(max_id, spec) + unit;
        FOREACH f IN ARRAY ARRAY[0, 1, max_id - 1, max_id] LOOP
            PERFORM ca_key(tbl, f);
        END LOOP;
        PERFORM ca_key(tbl, NULL::bigint);
        FOR i IN 1..40 LOOP
            t := CASE WHEN i <= 5 THEN now() + (i - 3) * unit
                      ELSE epoch + random() * (least(ends, now() + interval '50 years') - epoch) END;
            t := greatest(epoch, least(t, ends - unit));
            f := id_from_timestamp(t, spec);
            g := CASE WHEN id_timestamp(f, spec) + unit < ends THEN id_from_timestamp(id_timestamp(f, spec) + unit, spec) ELSE NULL END;
            FOREACH ms IN ARRAY ARRAY[f - 1, f, f + 1, g - 2, g - 1, g]::bigint[] LOOP
                IF ms BETWEEN 0 AND max_id THEN
                    PERFORM ca_key(tbl, ms);
                END IF;
            END LOOP;
        END LOOP;
        FOR i IN 1..60 LOOP
            PERFORM ca_key(tbl, least(max_id, trunc(random()::numeric * max_id + random()::numeric * 1000000))::bigint);
        END LOOP;
        EXECUTE format('CREATE INDEX ON %I (id)', tbl);
        EXECUTE format('ANALYZE %I', tbl);
    END LOOP;

    -- UUIDs: version 7 only (uuidv7_timestamp refuses any other), and for PostgreSQL's
    -- uuid_extract_timestamp the same behind a constraint, and a mix of versions without one.
    CREATE TABLE ca_u7 (id uuid);
    INSERT INTO ca_tables VALUES ('ca_u7', 'uuidv7_timestamp', NULL, 'uuid', true);
    FOR i IN 1..60 LOOP
        ms := CASE WHEN i <= 4 THEN (ARRAY[0, 1, 281474976710654, 281474976710655])[i]
                   ELSE (extract(epoch FROM now()) * 1000)::bigint + (random() * 4000 - 2000)::bigint END;
        INSERT INTO ca_u7 VALUES
            ((lpad(to_hex(ms), 12, '0') || '7000' || '8000' || '000000000000')::uuid),
            ((lpad(to_hex(ms), 12, '0') || '7fff' || 'bfff' || 'ffffffffffff')::uuid),
            (uuidv7_next());
    END LOOP;
    INSERT INTO ca_u7 VALUES (NULL);
    CREATE INDEX ON ca_u7 (id);
    IF current_setting('server_version_num')::int >= 170000 THEN
        EXECUTE 'CREATE TABLE ca_ux (id uuid CHECK (uuid_extract_version(id) = 7))';
        INSERT INTO ca_ux SELECT id FROM ca_u7;
        -- A CHECK is only "not false": UUIDs with no version (the Nil UUID, a version 7 nibble
        -- of another variant) pass it, and their time is NULL.
        INSERT INTO ca_ux VALUES ('00000000-0000-0000-0000-000000000000'), ('01234567-89ab-7def-0123-456789abcdef'),
                                 ('ffffffff-ffff-ffff-ffff-ffffffffffff');
        CREATE INDEX ON ca_ux (id);
        -- (A range only from 18 on: 17's uuid_extract_timestamp reads no version 7 time.)
        INSERT INTO ca_tables VALUES ('ca_ux', 'uuid_extract_timestamp', NULL, 'uuid',
                                      current_setting('server_version_num')::int >= 180000);
        -- Version 1 UUIDs carry their time elsewhere: nothing may be derived here.
        CREATE TABLE ca_umix (id uuid);
        INSERT INTO ca_umix SELECT id FROM ca_u7;
        INSERT INTO ca_umix VALUES ('c232ab00-9414-11ec-b3c8-9e6bdeced846'), ('00000000-0000-1000-8000-000000000000'),
                                   ('ffffffff-ffff-1fff-bfff-ffffffffffff'), (gen_random_uuid()), (gen_random_uuid());
        CREATE INDEX ON ca_umix (id);
        INSERT INTO ca_tables VALUES ('ca_umix', 'uuid_extract_timestamp', NULL, 'uuid', false);
        -- A foreign table whose CHECK says 7 (never enforced), over those versions (file_fdw,
        -- where this PostgreSQL has it).
        IF EXISTS (SELECT FROM pg_available_extensions WHERE name = 'file_fdw') THEN
            CREATE EXTENSION IF NOT EXISTS file_fdw;
            CREATE SERVER ca_files FOREIGN DATA WRAPPER file_fdw;
            EXECUTE format('COPY ca_umix TO %L', current_setting('data_directory') || '/ca_umix.txt');
            EXECUTE format('CREATE FOREIGN TABLE ca_uforeign (id uuid CHECK (uuid_extract_version(id) = 7)) SERVER ca_files OPTIONS (filename %L)',
                           current_setting('data_directory') || '/ca_umix.txt');
            INSERT INTO ca_tables VALUES ('ca_uforeign', 'uuid_extract_timestamp', NULL, 'uuid', false);
        END IF;
    END IF;
    ANALYZE;
END $$;

-- A time to compare with, as SQL text: near a key of the table, or anywhere.
CREATE FUNCTION ca_time(tbl text, decoder text, layout text) RETURNS timestamptz LANGUAGE plpgsql AS $$
DECLARE
    t timestamptz;
    pick float8 := random();
BEGIN
    IF pick < 0.04 THEN RETURN 'infinity';
    ELSIF pick < 0.08 THEN RETURN '-infinity';
    ELSIF pick < 0.11 THEN RETURN NULL;
    ELSIF pick < 0.2 THEN
        RETURN now() + (random() * 200 - 100) * interval '1 year';
    END IF;
    IF decoder = 'id_timestamp' THEN
        EXECUTE format('SELECT id_timestamp(id, %L) FROM %I WHERE id IS NOT NULL ORDER BY random() LIMIT 1', layout, tbl) INTO t;
    ELSE
        EXECUTE format('SELECT uuidv7_timestamp(id) FROM %I WHERE id IS NOT NULL AND substr(id::text, 15, 1) = %L AND substr(id::text, 20, 1) IN (%L, %L, %L, %L) ORDER BY random() LIMIT 1',
                       tbl, '7', '8', '9', 'a', 'b') INTO t;
    END IF;
    RETURN t + (ARRAY[interval '0', interval '1 microsecond', interval '-1 microsecond', interval '1 millisecond',
                      interval '-1 millisecond', interval '999 microseconds', interval '10 milliseconds',
                      interval '-10 milliseconds', interval '1 second', interval '-1 second'])[1 + floor(random() * 10)::int];
END $$;

-- One random condition on table row r: (the WHERE text, its parameter or NULL).
CREATE FUNCTION ca_condition(r ca_tables, OUT cond text, OUT param timestamptz) LANGUAGE plpgsql AS $$
DECLARE
    f text := CASE WHEN r.layout IS NULL THEN format('%s(id)', r.decoder)
                   ELSE format('%s(id, %L)', r.decoder, r.layout) END;
    op text := (ARRAY['<', '<=', '=', '>=', '>'])[1 + floor(random() * 5)::int];
    t1 timestamptz := ca_time(r.tbl, r.decoder, r.layout);
    t2 timestamptz := ca_time(r.tbl, r.decoder, r.layout);
    how float8 := random();
    zone text := (ARRAY['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Chatham', 'Pacific/Kiritimati'])[1 + floor(random() * 5)::int];
    lit1 text;
    lit2 text;
    kind text;
BEGIN
    PERFORM set_config('TimeZone', zone, true);
    -- The time as a timestamptz, or as ORMs send a naive datetime or a day: a timestamp or a date
    -- (its wall-clock time in this zone), which PostgreSQL compares in the session's TimeZone.
    kind := (ARRAY['timestamptz', 'timestamptz', 'timestamp', 'date'])[1 + floor(random() * 4)::int];
    lit1 := coalesce(quote_literal(CASE kind WHEN 'timestamp' THEN t1::timestamp::text WHEN 'date' THEN t1::date::text ELSE t1::text END) || '::' || kind, 'NULL::' || kind);
    lit2 := coalesce(quote_literal(CASE kind WHEN 'timestamp' THEN t2::timestamp::text WHEN 'date' THEN t2::date::text ELSE t2::text END) || '::' || kind, 'NULL::' || kind);
    IF how < 0.15 THEN
        cond := format('%s BETWEEN %s AND %s', f, lit1, lit2);
    ELSIF how < 0.3 THEN
        cond := format('%s %s %s', f, op, '$1' || CASE kind WHEN 'timestamptz' THEN '' ELSE '::' || kind END);
        param := t1;
    ELSIF how < 0.4 AND isfinite(t1) THEN
        -- A stable expression: the same instant, through now() (localtimestamp, current_date).
        cond := format('%s %s %s - (%s - %s)', f, op,
                       CASE kind WHEN 'timestamp' THEN 'localtimestamp' WHEN 'date' THEN 'current_date' ELSE 'now()' END,
                       CASE kind WHEN 'timestamp' THEN 'localtimestamp' WHEN 'date' THEN 'current_date' ELSE 'now()' END, lit1);
    ELSIF how < 0.65 THEN
        cond := format('%s %s %s', lit1, op, f);
    ELSE
        cond := format('%s %s %s', f, op, lit1);
    END IF;
END $$;

-- The ids a condition finds (sorted text); whether the plan read a key range (or none at all);
-- whether it read the key's index with any condition.
CREATE FUNCTION ca_rows(tbl text, cond text, param timestamptz, OUT ids text, OUT ranged boolean, OUT indexed boolean) LANGUAGE plpgsql AS $$
DECLARE
    plan text := '';
    line text;
BEGIN
    EXECUTE format('SELECT coalesce(string_agg(id::text, '','' ORDER BY id), '''') FROM %I WHERE %s', tbl, cond) INTO ids USING param;
    FOR line IN EXECUTE format('EXPLAIN SELECT id FROM %I WHERE %s', tbl, cond) USING param LOOP
        plan := plan || line || E'\n';
    END LOOP;
    -- A range on the key, or no row at all (a NULL time: PostgreSQL folds the condition).
    ranged := plan ~ 'Index Cond: \(\(?id [<>]=' OR plan ~ 'One-Time Filter: false';
    indexed := plan ~ 'Index Cond';
END $$;

CREATE FUNCTION ca_differential(n int) RETURNS TABLE (tbl text, cond text, param timestamptz, off_rows text, on_rows text, how text)
LANGUAGE plpgsql AS $$
DECLARE
    r ca_tables;
    c record;
    off_r record;
    on_r record;
    conditions int := 0;
    ranged int := 0;
    expected int := 0;
    more int := 0;
    i int;
    q text;
    a_off text;
    a_on text;
    made_in text;
    run_in text;
BEGIN
    FOR r IN SELECT * FROM ca_tables LOOP
        FOR i IN 1..n LOOP
            SELECT * INTO c FROM ca_condition(r);
            conditions := conditions + 1;
            PERFORM set_config('idgen.time_conditions', 'off', true);
            PERFORM set_config('enable_seqscan', 'on', true);
            SELECT * INTO off_r FROM ca_rows(r.tbl, c.cond, c.param);
            PERFORM set_config('idgen.time_conditions', 'on', true);
            -- Through the index: the added range decides which rows are read at all.
            PERFORM set_config('enable_seqscan', 'off', true);
            SELECT * INTO on_r FROM ca_rows(r.tbl, c.cond, c.param);
            IF r.derives THEN
                expected := expected + 1;
                ranged := ranged + on_r.ranged::int;
            ELSIF on_r.indexed THEN
                tbl := r.tbl; cond := c.cond; param := c.param; off_rows := ''; on_rows := ''; how := 'derived where nothing may be';
                RETURN NEXT;
            END IF;
            IF on_r.ids IS DISTINCT FROM off_r.ids THEN
                tbl := r.tbl; cond := c.cond; param := c.param; off_rows := off_r.ids; on_rows := on_r.ids; how := 'index';
                RETURN NEXT;
            END IF;
            -- As a filter beside the original, row by row.
            PERFORM set_config('enable_seqscan', 'on', true);
            PERFORM set_config('enable_indexscan', 'off', true);
            PERFORM set_config('enable_bitmapscan', 'off', true);
            SELECT * INTO on_r FROM ca_rows(r.tbl, c.cond, c.param);
            PERFORM set_config('enable_indexscan', 'on', true);
            PERFORM set_config('enable_bitmapscan', 'on', true);
            IF on_r.ids IS DISTINCT FROM off_r.ids THEN
                tbl := r.tbl; cond := c.cond; param := c.param; off_rows := off_r.ids; on_rows := on_r.ids; how := 'filter';
                RETURN NEXT;
            END IF;
            CONTINUE WHEN i % 8 <> 0;
            more := more + 1;
            -- The same rows deleted (rolled back).
            q := format('WITH d AS (DELETE FROM %I WHERE %s RETURNING id) SELECT count(*) || '':'' || coalesce(sum(hashtext(id::text)), 0) FROM d', r.tbl, c.cond);
            PERFORM set_config('idgen.time_conditions', 'off', true);
            a_off := ca_rolled_back(q, c.param);
            PERFORM set_config('idgen.time_conditions', 'on', true);
            a_on := ca_rolled_back(q, c.param);
            IF a_on IS DISTINCT FROM a_off THEN
                tbl := r.tbl; cond := c.cond; param := c.param; off_rows := a_off; on_rows := a_on; how := 'delete';
                RETURN NEXT;
            END IF;
            -- The same query as a SQL function's and a PL/pgSQL function's statement (the
            -- condition's $1 their parameter), each called twice (PL/pgSQL's second call runs
            -- the plan it cached), against the query off.
            q := format('SELECT coalesce(string_agg(id::text, '','' ORDER BY id), '''') FROM %I WHERE %s', r.tbl, c.cond);
            EXECUTE format('CREATE FUNCTION pg_temp.ca_sqlf(timestamptz) RETURNS text LANGUAGE sql STABLE AS %L', q);
            EXECUTE format('CREATE FUNCTION pg_temp.ca_plf(timestamptz) RETURNS text LANGUAGE plpgsql STABLE AS %L',
                           format('BEGIN RETURN (%s); END', q));
            a_on := ca_answer('SELECT pg_temp.ca_sqlf($1) || ''|'' || pg_temp.ca_plf($1) || ''|'' || pg_temp.ca_sqlf($1) || ''|'' || pg_temp.ca_plf($1)', c.param);
            DROP FUNCTION pg_temp.ca_sqlf(timestamptz);
            DROP FUNCTION pg_temp.ca_plf(timestamptz);
            PERFORM set_config('idgen.time_conditions', 'off', true);
            a_off := ca_answer(q, c.param);
            PERFORM set_config('idgen.time_conditions', 'on', true);
            IF a_on IS DISTINCT FROM (CASE WHEN a_off LIKE 'ERROR %' THEN a_off ELSE concat_ws('|', a_off, a_off, a_off, a_off) END) THEN
                tbl := r.tbl; cond := c.cond; param := c.param; off_rows := a_off; on_rows := a_on; how := 'SQL and PL/pgSQL functions';
                RETURN NEXT;
            END IF;
            -- A generic plan, made in the condition's zone and run in another: what a timestamp
            -- or a date means moves with the zone, and the range must move with it.
            made_in := current_setting('TimeZone');
            run_in := (ARRAY['UTC', 'America/Havana', 'Asia/Kathmandu', 'Pacific/Chatham', 'America/St_Johns'])[1 + floor(random() * 5)::int];
            q := format('SELECT coalesce(string_agg(id::text, '','' ORDER BY id), '''') FROM %I WHERE %s', r.tbl, c.cond);
            PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
            EXECUTE format('PREPARE ca_generic(timestamptz) AS %s', q);
            EXECUTE format('EXECUTE ca_generic(%L)', c.param) INTO a_on;
            PERFORM set_config('TimeZone', run_in, true);
            EXECUTE format('EXECUTE ca_generic(%L)', c.param) INTO a_on;
            EXECUTE 'DEALLOCATE ca_generic';
            PERFORM set_config('plan_cache_mode', 'auto', true);
            PERFORM set_config('idgen.time_conditions', 'off', true);
            EXECUTE q INTO a_off USING c.param;
            PERFORM set_config('idgen.time_conditions', 'on', true);
            IF a_on IS DISTINCT FROM a_off THEN
                tbl := r.tbl; cond := c.cond; param := c.param; off_rows := a_off; on_rows := a_on;
                how := format('generic plan made in %s, run in %s', made_in, run_in);
                RETURN NEXT;
            END IF;
        END LOOP;
    END LOOP;
    INSERT INTO ca_stats VALUES (conditions, (SELECT count(*) FROM ca_tables), ranged, expected, more);
    IF ranged < expected THEN
        tbl := NULL; cond := format('%s of %s plans read no key range', expected - ranged, expected); how := 'coverage';
        RETURN NEXT;
    END IF;
END $$;

-- The control: the original condition and, by hand, a bound one key (one UUID) too tight, with
-- the derivation off. Returns how many conditions then find other rows than the original alone.
CREATE FUNCTION ca_control(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    r ca_tables;
    t timestamptz;
    lower_side boolean;
    op text;
    f text;
    tight text;
    a text;
    b text;
    differ int := 0;
    i int;
BEGIN
    PERFORM set_config('idgen.time_conditions', 'off', true);
    FOR r IN SELECT * FROM ca_tables WHERE derives AND key_type = 'bigint' LOOP
        FOR i IN 1..n LOOP
            t := ca_time(r.tbl, r.decoder, r.layout);
            op := (ARRAY['<', '<=', '>=', '>'])[1 + floor(random() * 4)::int];
            lower_side := op LIKE '>%';
            f := format('id_timestamp(id, %L) %s $1', r.layout, op);
            tight := CASE WHEN lower_side
                          THEN format('id >= idgen_internal.id_time_lower($1, %L, %L) + 1', op = '>=', r.layout)
                          ELSE format('id <= idgen_internal.id_time_upper($1, %L, %L) - 1', op = '<=', r.layout) END;
            EXECUTE format('SELECT coalesce(string_agg(id::text, '','' ORDER BY id), '''') FROM %I WHERE %s', r.tbl, f) INTO a USING t;
            EXECUTE format('SELECT coalesce(string_agg(id::text, '','' ORDER BY id), '''') FROM %I WHERE %s AND %s', r.tbl, f, tight) INTO b USING t;
            differ := differ + (a IS DISTINCT FROM b)::int;
        END LOOP;
    END LOOP;
    RETURN differ;
END $$;

-- The shapes users write around a time, over every table: a subquery, a view over it, set
-- operations whose other branch carries another time, grouping sets, a join on the key, a sort
-- by the time, and min and max of the time; each with random conditions on the time, run with the
-- derivation off and on.
-- An error is an answer too (its SQLSTATE). Returns a row per disagreement (none expected).
-- ca_answer's parameter is the query's $1, of whatever type the query reads it as.
CREATE FUNCTION ca_answer(sql text, param anyelement) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    a text;
BEGIN
    EXECUTE sql INTO a USING param;
    RETURN coalesce(a, '');
EXCEPTION WHEN OTHERS THEN
    RETURN 'ERROR ' || SQLSTATE;
END $$;

-- A query's answer through a generic plan made in zone made_in (run there once) and run again
-- after SET TimeZone = run_in; 'ERROR <state>' for an error.
CREATE FUNCTION ca_generic_answer(sql text, param text, made_in text, run_in text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    a text;
    run text := CASE WHEN position('$1' IN sql) > 0 THEN format('EXECUTE ca_lg(%L)', param) ELSE 'EXECUTE ca_lg' END;
BEGIN
    PERFORM set_config('TimeZone', made_in, true);
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
    EXECUTE format('PREPARE ca_lg%s AS %s', CASE WHEN position('$1' IN sql) > 0 THEN '(text)' ELSE '' END, sql);
    EXECUTE run INTO a;
    PERFORM set_config('TimeZone', run_in, true);
    EXECUTE run INTO a;
    DEALLOCATE ca_lg;
    PERFORM set_config('plan_cache_mode', 'auto', true);
    RETURN coalesce(a, '');
EXCEPTION WHEN OTHERS THEN
    -- PREPARE is not undone with the subtransaction.
    DEALLOCATE ALL;
    RETURN 'ERROR ' || SQLSTATE;
END $$;

CREATE FUNCTION ca_shapes(n int) RETURNS TABLE (tbl text, shape text, query text, param timestamptz, off_answer text, on_answer text)
LANGUAGE plpgsql AS $$
DECLARE
    r ca_tables;
    f text;
    s text;
    c record;
    q text;
    a_off text;
    a_on text;
    shapes text[] := ARRAY[
        -- %1$s: the decoder over id; %2$s: the table
        'SELECT id, %1$s AS t FROM %2$I',
        'SELECT * FROM (SELECT id, %1$s AS t FROM %2$I) v WHERE id IS NOT NULL',
        'SELECT id, %1$s AS t FROM %2$I UNION ALL SELECT id, %1$s - interval ''90 minutes'' FROM %2$I',
        'SELECT id, %1$s AS t FROM %2$I UNION SELECT id, %1$s + interval ''1 day'' FROM %2$I',
        'SELECT id, %1$s AS t FROM %2$I INTERSECT SELECT id, %1$s FROM %2$I WHERE id IS NOT NULL',
        'SELECT id, %1$s AS t FROM %2$I EXCEPT SELECT id, %1$s FROM %2$I WHERE false',
        'SELECT id, %1$s AS t, count(*) AS n FROM %2$I GROUP BY ROLLUP (%1$s, id)',
        'SELECT id, %1$s AS t, count(*) AS n FROM %2$I GROUP BY CUBE (id, %1$s)',
        'SELECT id, %1$s AS t FROM %2$I GROUP BY GROUPING SETS ((%1$s), (%1$s, id), ())',
        'SELECT a.id, %1$s AS t FROM %2$I a LEFT JOIN %2$I b USING (id)',
        'SELECT b.id, b.t FROM %2$I a FULL JOIN (SELECT id, %1$s AS t FROM %2$I) b ON a.id = b.id'];
    disagree int := 0;
BEGIN
    FOR r IN SELECT * FROM ca_tables LOOP
        f := CASE WHEN r.layout IS NULL THEN format('%s(id)', r.decoder)
                  ELSE format('%s(id, %L)', r.decoder, r.layout) END;
        FOREACH s IN ARRAY shapes LOOP
            FOR i IN 1..n LOOP
                SELECT * INTO c FROM ca_condition(r);
                c.cond := replace(c.cond, f, 't');
                q := CASE WHEN i % 3 = 0
                    -- a sort by the time: the sequence of times (ties in any order)
                    THEN format('SELECT string_agg(coalesce(t::text, ''-''), '','') FROM (SELECT t FROM (%s) s WHERE %s ORDER BY t %s LIMIT %s) x',
                                format(s, f, r.tbl), c.cond,
                                (ARRAY['', 'DESC', 'NULLS FIRST', 'DESC NULLS LAST'])[1 + floor(random() * 4)::int], 1 + floor(random() * 30)::int)
                    -- the earliest and latest time (read from the key where the key's are)
                    WHEN i % 3 = 1
                    -- (whole, and inside expressions)
                    THEN format('SELECT m::text FROM (SELECT min(t), max(t), max(t) + interval ''1 microsecond'', coalesce(min(t), ''-infinity''), count(*) FROM (%s) s WHERE %s) m', format(s, f, r.tbl), c.cond)
                    ELSE format('SELECT count(*) || '':'' || coalesce(sum(hashtext(id::text)), 0) FROM (%s) s WHERE %s', format(s, f, r.tbl), c.cond) END;
                PERFORM set_config('idgen.time_conditions', 'off', true);
                a_off := ca_answer(q, c.param);
                PERFORM set_config('idgen.time_conditions', 'on', true);
                a_on := ca_answer(q, c.param);
                IF a_on IS DISTINCT FROM a_off THEN
                    tbl := r.tbl; shape := s; query := q; param := c.param; off_answer := a_off; on_answer := a_on;
                    RETURN NEXT;
                END IF;
            END LOOP;
        END LOOP;
        -- Thousands of conditions at once: the same answer.
        q := format('SELECT count(*) || '':'' || coalesce(sum(hashtext(id::text)), 0) FROM %I WHERE ', r.tbl) ||
             (SELECT string_agg(x.cond, ' AND ') FROM (SELECT (ca_condition(r)).cond FROM generate_series(1, 2000)) x
               WHERE x.cond NOT LIKE '%$1%');
        PERFORM set_config('idgen.time_conditions', 'off', true);
        a_off := ca_answer(q, NULL::timestamptz);
        PERFORM set_config('idgen.time_conditions', 'on', true);
        a_on := ca_answer(q, NULL::timestamptz);
        IF a_on IS DISTINCT FROM a_off THEN
            tbl := r.tbl; shape := '2000 conditions'; query := left(q, 200); off_answer := a_off; on_answer := a_on;
            RETURN NEXT;
        END IF;
    END LOOP;
    PERFORM set_config('TimeZone', 'UTC', true);
END $$;

-- Local times of the key's time, as ORMs write "on a given day" (::date, ::timestamp, AT TIME
-- ZONE, date_trunc of either, in the session's zone or a named one), compared with a constant, a
-- bind parameter or NULL, in session zones whose clocks change near the keys: keys every few
-- minutes around a fall back across midnight (Havana 2025, Sao Paulo 2019: the date goes back),
-- a spring forward at midnight (Havana, Sao Paulo 2018), a day skipped (Apia 2011), a 30-minute
-- change (Lord Howe), New York's; zones of odd or huge fixed offsets; abbreviations, fixed and
-- dynamic; units canonical, in capitals, plural and unknown; unknown zones (an error, on and off);
-- a truncated timestamptz also against a timestamp or a date (what Django's TruncDay sends).
-- One condition in three also through a generic plan made in its zone and run in another.
-- Returns a row per disagreement (none expected); ca_local_stats counts the conditions, those
-- whose plan read a key range, those replaced by it, and the generic plans.
CREATE TABLE ca_local_stats (conditions int, ranged int, replaced int, generic int);

CREATE FUNCTION ca_local_tables() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    x timestamptz;
BEGIN
    CREATE TABLE ca_local_u (id uuid PRIMARY KEY);
    CREATE TABLE ca_local_s (id bigint PRIMARY KEY);
    FOREACH x IN ARRAY ARRAY['2025-11-02 05:00+00', '2025-03-09 05:00+00', '2019-02-17 02:00+00',
                             '2018-11-04 03:00+00', '2011-12-30 10:00+00', '2025-04-05 15:00+00',
                             '2025-03-09 07:00+00', '2025-11-02 06:00+00']::timestamptz[] LOOP
        INSERT INTO ca_local_u SELECT DISTINCT uuidv7_from_timestamp(x + k * interval '7 minutes' + (k * 13 % 60) * interval '1 second')
          FROM generate_series(-720, 720) k ON CONFLICT DO NOTHING;
        INSERT INTO ca_local_s SELECT DISTINCT id_from_timestamp(x + k * interval '7 minutes' + (k * 13 % 60) * interval '1 second', 'twitter')
          FROM generate_series(-720, 720) k ON CONFLICT DO NOTHING;
    END LOOP;
    ANALYZE ca_local_u;
    ANALYZE ca_local_s;
    INSERT INTO ca_local_stats VALUES (0, 0, 0, 0);
END $$;

CREATE FUNCTION ca_local(n int) RETURNS TABLE (tbl text, zone text, query text, param text, off_answer text, on_answer text)
LANGUAGE plpgsql AS $$
DECLARE
    zones text[] := ARRAY['America/Havana', 'America/Sao_Paulo', 'Pacific/Apia', 'Australia/Lord_Howe',
                          'America/New_York', 'Asia/Kolkata', 'UTC', '<+150>-150', '<-167:59>+167:59'];
    named text[] := zones || ARRAY['EST', 'utc', 'MSK', 'IST', 'Europe/Nowhere', 'America/havana', ''];
    units text[] := ARRAY['day', 'day', 'hour', 'week', 'month', 'minute', 'DAY', 'days', 'fortnight', 'microseconds', 'quarter', 'year', ''];
    ops text[] := ARRAY['<', '<=', '=', '=', '>=', '>'];
    t record;
    f text;
    t0 timestamptz;
    z text;
    u text;
    form text;
    lhs text;
    kind text;
    c text;
    cond text;
    q text;
    p text;
    a_off text;
    a_on text;
    plan text;
    line text;
    made_in text;
    run_in text;
    i int;
BEGIN
    FOR t IN SELECT * FROM (VALUES ('ca_local_u', 'uuidv7_timestamp(id)'), ('ca_local_s', 'id_timestamp(id, ''twitter'')')) v(tbl, f) LOOP
        FOR i IN 1..n LOOP
            PERFORM set_config('TimeZone', zones[1 + floor(random() * array_length(zones, 1))::int], true);
            z := named[1 + floor(random() * array_length(named, 1))::int];
            u := units[1 + floor(random() * array_length(units, 1))::int];
            form := (ARRAY['date', 'timestamp', 'at', 'at_date', 'at_trunc', 'trunc', 'trunc_zone', 'local_trunc'])[1 + floor(random() * 8)::int];
            -- %1$s: the time; the form's value and the type of the constant it is compared with
            SELECT l, k INTO lhs, kind FROM (VALUES
                ('date', format('%s::date', t.f), 'date'),
                ('timestamp', format('%s::timestamp', t.f), 'timestamp'),
                ('at', format('%s AT TIME ZONE %L', t.f, z), 'timestamp'),
                ('at_date', format('(%s AT TIME ZONE %L)::date', t.f, z), 'date'),
                ('at_trunc', format('date_trunc(%L, %s AT TIME ZONE %L)', u, t.f, z), 'timestamp'),
                ('trunc', format('date_trunc(%L, %s)', u, t.f), (ARRAY['timestamptz', 'timestamp', 'date'])[1 + floor(random() * 3)::int]),
                ('trunc_zone', format('date_trunc(%L, %s, %L)', u, t.f, z), (ARRAY['timestamptz', 'timestamp', 'date'])[1 + floor(random() * 3)::int]),
                ('local_trunc', format('date_trunc(%L, %s::timestamp)', u, t.f), 'timestamp')) v(w, l, k)
              WHERE w = form;
            EXECUTE format('SELECT %s FROM %I ORDER BY random() LIMIT 1', t.f, t.tbl) INTO t0;
            -- The constant: a key's local time or day (in this or another zone), near it, an end, NULL.
            c := CASE floor(random() * 10)::int
                WHEN 0 THEN 'infinity' WHEN 1 THEN '-infinity' WHEN 2 THEN NULL
                ELSE CASE kind
                    WHEN 'date' THEN ((t0 AT TIME ZONE zones[1 + floor(random() * 7)::int])::date + floor(random() * 3)::int - 1)::text
                    WHEN 'timestamp' THEN (date_trunc('hour', t0 AT TIME ZONE zones[1 + floor(random() * 7)::int]) + floor(random() * 5 - 2) * interval '30 minutes')::text
                    ELSE (date_trunc('hour', t0) + floor(random() * 5 - 2) * interval '30 minutes')::text END END;
            p := NULL;
            IF random() < 0.25 THEN
                -- a bind parameter, as clients send one
                cond := format('%s %s $1::%s', lhs, ops[1 + floor(random() * 6)::int], kind);
                p := c;
            ELSIF random() < 0.15 THEN
                cond := format('%s BETWEEN %s AND %s', lhs, coalesce(quote_literal(c), 'NULL') || '::' || kind,
                               coalesce(quote_literal(c), 'NULL') || '::' || kind || ' + interval ''1 day''');
            ELSIF random() < 0.2 THEN
                cond := format('%s %s %s', coalesce(quote_literal(c), 'NULL') || '::' || kind, ops[1 + floor(random() * 6)::int], lhs);
            ELSE
                cond := format('%s %s %s', lhs, ops[1 + floor(random() * 6)::int], coalesce(quote_literal(c), 'NULL') || '::' || kind);
            END IF;
            q := format('SELECT count(*) || '':'' || coalesce(sum(hashtext(id::text)), 0) FROM %I WHERE %s', t.tbl, cond);
            PERFORM set_config('idgen.time_conditions', 'off', true);
            PERFORM set_config('enable_seqscan', 'on', true);
            a_off := ca_answer(q, p);
            PERFORM set_config('idgen.time_conditions', 'on', true);
            PERFORM set_config('enable_seqscan', 'off', true);
            a_on := ca_answer(q, p);
            plan := '';
            BEGIN
                FOR line IN EXECUTE 'EXPLAIN ' || q USING p LOOP
                    plan := plan || line || E'\n';
                END LOOP;
            EXCEPTION WHEN OTHERS THEN NULL;
            END;
            IF plan ~ 'Index Cond: \(\(?id [<>]=' THEN
                -- A key range; replaced where nothing is left to decode on each row.
                UPDATE ca_local_stats SET ranged = ranged + 1,
                    replaced = replaced + (plan !~ '(id_timestamp|uuidv7_timestamp)\(')::int;
            END IF;
            UPDATE ca_local_stats SET conditions = conditions + 1;
            IF a_on IS DISTINCT FROM a_off THEN
                tbl := t.tbl; zone := current_setting('TimeZone'); query := q; param := p; off_answer := a_off; on_answer := a_on;
                RETURN NEXT;
            END IF;
            CONTINUE WHEN i % 3 <> 0;
            -- A generic plan made in this zone and run in another (a day's instants computed while
            -- planning are this zone's: the plan must be made again), against the same off (a
            -- generic plan reads rows a custom one knows it need not: an error may be its answer).
            made_in := current_setting('TimeZone');
            run_in := zones[1 + floor(random() * array_length(zones, 1))::int];
            a_on := ca_generic_answer(q, p, made_in, run_in);
            PERFORM set_config('idgen.time_conditions', 'off', true);
            PERFORM set_config('enable_seqscan', 'on', true);
            a_off := ca_generic_answer(q, p, made_in, run_in);
            PERFORM set_config('idgen.time_conditions', 'on', true);
            PERFORM set_config('enable_seqscan', 'off', true);
            UPDATE ca_local_stats SET generic = generic + 1;
            IF a_on IS DISTINCT FROM a_off THEN
                tbl := t.tbl; zone := format('generic plan made in %s, run in %s', made_in, run_in); query := q; param := p; off_answer := a_off; on_answer := a_on;
                RETURN NEXT;
            END IF;
        END LOOP;
    END LOOP;
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('TimeZone', 'UTC', true);
END $$;

-- The control of ca_local: "on a given day" read as the naive range of instants, the day's
-- midnight and the next one's as PostgreSQL reads them in the session's zone, finds other rows
-- than the condition in the zones of these data (the keys reach the days whose clocks change):
-- how many of the days disagree.
CREATE FUNCTION ca_local_control() RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    z text;
    d date;
    a bigint;
    b bigint;
    wrong int := 0;
BEGIN
    FOR z, d IN VALUES ('America/Havana', date '2025-11-02'), ('America/Sao_Paulo', date '2019-02-16'),
                       ('America/Havana', date '2025-03-09'), ('Pacific/Apia', date '2011-12-31') LOOP
        PERFORM set_config('TimeZone', z, true);
        SELECT count(*) INTO a FROM ca_local_u WHERE uuidv7_timestamp(id)::date = d;
        SELECT count(*) INTO b FROM ca_local_u WHERE uuidv7_timestamp(id) >= d::timestamptz AND uuidv7_timestamp(id) < (d + 1)::timestamptz;
        wrong := wrong + (a <> b)::int;
    END LOOP;
    PERFORM set_config('TimeZone', 'UTC', true);
    RETURN wrong;
END $$;
