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
