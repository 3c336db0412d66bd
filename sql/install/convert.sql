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
