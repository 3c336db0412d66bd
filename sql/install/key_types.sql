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
