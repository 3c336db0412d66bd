-- Message IDs (RongCloud's format) and the text forms of IDs: golden output that does not depend on the
-- clock (fixed inputs), plus properties of generated message IDs.
CREATE EXTENSION pg_idgen;

-- check: Every base at the edges. Text order is numeric order for IDs >= 0; -1 is the 64-bit pattern.
SELECT b AS base, id_to_text(0, b) AS zero, id_to_text(1, b) AS one,
       id_to_text(9223372036854775807, b) AS max, id_to_text(-1, b) AS minus_one
  FROM unnest(ARRAY['base32', 'crockford32', 'base36', 'base58', 'base62', 'hex']) b;
SELECT id_to_text(1212092628029698048) AS tweet_base62,
       id_from_text(id_to_text(1212092628029698048)) AS back;
SELECT id_from_text('000000000000o', 'crockford32') AS crockford_o_is_zero,
       id_from_text('7FFFFFFFFFFFFFFF', 'hex') AS hex_any_case;

-- check: Message IDs: RongCloud's layout, field by field, from fixed text.
SELECT * FROM msgid_decode('2222-2222-2222-2222');
SELECT * FROM msgid_decode('ZZZZ-ZZZZ-ZZZZ-ZZZZ');
SELECT ts AT TIME ZONE 'UTC' AS utc, sequence, session_type, session_hash
  FROM msgid_decode(msgid_from_timestamp('2023-11-14 22:13:20.123+00'));
SELECT msgid_from_timestamp('2023-11-14 22:13:20.123+00') AS first_of_that_ms;
-- docs/text-forms.md's example, computed independently: 2023-11-14 22:13:20.123, sequence 5, type 1.
SELECT ts AT TIME ZONE 'UTC' AS utc, sequence, session_type,
       session_hash = msgid_session_hash('group:1001') AS hash_of_group_1001
  FROM msgid_decode('EDTZ-LQJY-S2C6-K75V');
SELECT msgid_session_hash('hello') AS java_hello, 99162322 & 4194303 AS expected,
       msgid_session_hash('') AS empty;

-- check: Generated ones: 19 characters in four groups, unique, in time order, fields as asked for.
CREATE TEMP TABLE m AS
  SELECT g, msgid_next(g % 16, 'session-' || (g % 100)) AS id FROM generate_series(1, 5000) g;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(id ~ '^[2-9A-HJ-NP-Z]{4}(-[2-9A-HJ-NP-Z]{4}){3}$') AS form_ok
  FROM m;
SELECT count(*) AS out_of_order FROM (SELECT id, lag(id) OVER (ORDER BY g) AS prev FROM m) x
 WHERE id COLLATE "C" <= prev COLLATE "C";
SELECT bool_and(d.session_type = g % 16 AND d.session_hash = msgid_session_hash('session-' || (g % 100)))
       AS fields_ok
  FROM m, msgid_decode(m.id) d;

-- check: Bad input is an ERROR with a SQLSTATE, never a crash; NULLs pass through decoders.
\set VERBOSITY sqlstate
SELECT id_to_text(1, 'base64');
SELECT id_from_text('abc', 'hex');
SELECT id_from_text('000000000000_', 'base36');
SELECT id_from_text('zzzzzzzzzzz', 'base62');
SELECT id_from_text('ZZZZZZZZZZZZZ', 'base32');
SELECT msgid_next(16, 'x');
SELECT msgid_next(-1, 'x');
SELECT msgid_next(NULL, 'x');
SELECT msgid_next(1, NULL);
SELECT * FROM msgid_decode('2222-2222-2222-222');
SELECT * FROM msgid_decode('2222-2222-2222-222I');
SELECT * FROM msgid_decode('2222+2222-2222-2222');
SELECT msgid_from_timestamp('infinity');
SELECT msgid_from_timestamp('2200-01-01');
\set VERBOSITY default
SELECT id_from_text('zzzzzzzzzzz', 'base62');
SELECT * FROM msgid_decode('2222-2222-2222-222I');
-- A long bad text is repeated in the error cut after 100 characters.
SELECT ulid_to_uuid(repeat('x', 5000));
SELECT * FROM msgid_decode(repeat('2', 5000));
SELECT id_from_text(repeat('z', 5000), 'base62');
SELECT id_to_text(NULL) IS NULL AS null_in_null_out, count(*) AS decoded_rows FROM msgid_decode(NULL);
DROP EXTENSION pg_idgen;
