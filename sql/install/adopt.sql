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
