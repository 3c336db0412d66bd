-- Decoding Snowflake IDs and their text forms (were #[pg_test]s of src/decode.rs and src/codec.rs).
-- Each "-- check:" line starts one check, counted on its own by tests/all.sh; each runs in a
-- transaction that is rolled back, so none sees another's rows or settings.
CREATE EXTENSION pg_idgen;
SET DateStyle = 'ISO';
SET IntervalStyle = 'postgres';

-- check: every base round-trips generated IDs and keeps their order
BEGIN;
WITH i AS (SELECT id FROM snowflake_next_batch(2000) id
           UNION ALL VALUES (0), (1), (9223372036854775807), (-1))
SELECT base,
       (SELECT bool_and(id_from_text(id_to_text(id, base), base) = id) FROM i) AS round_trips,
       (SELECT bool_and(a < b)
          FROM (SELECT id_to_text(id, base) COLLATE "C" AS a,
                       lead(id_to_text(id, base)) OVER (ORDER BY id) COLLATE "C" AS b
                  FROM i WHERE id >= 0) x
         WHERE b IS NOT NULL) AS in_order
  FROM unnest(ARRAY['base32', 'crockford32', 'base36', 'base58', 'base62', 'hex']) base
 ORDER BY base;
ROLLBACK;

-- check: base62 is the default
SELECT id_to_text(61) AS base62, id_from_text('0000000000z') AS back;

-- check: an unknown base is an error
SELECT id_to_text(1, 'base64');

-- check: a text of the wrong length is an error
SELECT id_from_text('fffffffffffffffff', 'hex');

-- check: the bare decoders agree with the full decode
-- (id_timestamp in both forms, uuidv7_timestamp: over every preset, tick edges, both ends of each
-- layout and random IDs; keys the bare path does not take go to the guarded one)
BEGIN;
SET LOCAL TimeZone = 'UTC';
SET LOCAL client_min_messages = error; -- IDs past the clock warn (once, on the first of them)
WITH l AS (SELECT name FROM idgen.layouts WHERE NOT is_node_layout OR name = 'pg_idgen'),
k AS (SELECT l.name, k.id
        FROM l, LATERAL (SELECT idgen_internal.id_time_upper('infinity', true, l.name) AS max_id) m,
        LATERAL (SELECT unnest(ARRAY[0, 1, m.max_id - 1, m.max_id]) AS id
                 UNION ALL SELECT (random() * m.max_id)::numeric::bigint FROM generate_series(1, 200)) k)
SELECT count(*) AS disagree FROM k
 WHERE id_timestamp(id, name) IS DISTINCT FROM (SELECT ts FROM id_decode(id, name))
    OR (name = 'pg_idgen' AND id_timestamp(id) IS DISTINCT FROM (SELECT ts FROM id_decode(id)));
SELECT count(*) AS uuids_disagree
  FROM (SELECT uuidv7_next() AS u FROM generate_series(1, 500)) g
 WHERE uuidv7_timestamp(u) IS DISTINCT FROM ulid_timestamp(uuid_to_ulid(u));
ROLLBACK;

-- check: the bare path leaves a negative ID to the refusal
SELECT id_timestamp(1::bigint << 22) IS NOT NULL AS decoded;
SELECT id_timestamp(-1);

-- check: id_range is the partition of a time range
SELECT lower = id_from_timestamp('2026-11-26 00:00+00', 'pg_idgen')
       AND upper = id_from_timestamp('2026-11-27 00:00+00', 'pg_idgen')
       AND upper - lower = id_span('1 day', 'pg_idgen')
       AND upper - lower = 86400000::bigint << 22 AS partition_of_the_day
  FROM id_range('2026-11-26 00:00+00', '2026-11-27 00:00+00', 'pg_idgen');
-- The node's layout (pg_idgen here): the same bounds.
SELECT (SELECT (lower, upper) FROM id_range('2026-11-26', '2026-11-27'))
     = (SELECT (lower, upper) FROM id_range('2026-11-26', '2026-11-27', 'pg_idgen')) AS same_bounds;

-- check: id_range refuses an empty range
BEGIN;
SET LOCAL TimeZone = 'UTC';
SELECT * FROM id_range('2026-11-26', '2026-11-26', 'pg_idgen');
ROLLBACK;

-- check: id_span refuses part of a tick
SELECT id_span('15 milliseconds', 'sonyflake');

-- check: id_span refuses months
SELECT id_span('1 month', 'pg_idgen');

-- check: a tweet decodes to its published time
-- (tweet 1212092628029698048 was posted 2019-12-31 19:26:16.771 UTC)
SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') AS posted,
       datacenter_id = (1212092628029698048 >> 17) & 31 AS datacenter_bits,
       worker_id = (1212092628029698048 >> 12) & 31 AS worker_bits
  FROM id_decode(1212092628029698048, 'twitter');

-- check: the node's ID round-trips through decode
WITH i AS (SELECT snowflake_next() AS id)
SELECT d.worker_id = current_setting('idgen.worker_id')::bigint AS worker,
       d.id = i.id AS same_id,
       id_from_timestamp(d.ts) <= i.id AS after_its_tick_start,
       id_from_timestamp(d.ts + interval '1 millisecond') > i.id AS before_the_next_tick
  FROM i, id_decode(i.id) d;

-- check: an unknown layout is an error
SELECT * FROM id_decode(1, 'nosuch');

-- check: a negative ID is an error
SELECT id_timestamp(-1);

-- check: an ID outside the layout is an error
SELECT * FROM id_decode(9007199254740992, 'js_safe');

-- check: an infinite timestamp is an error
SELECT id_from_timestamp('infinity'::timestamptz);

-- check: decoders pass NULL through
SELECT id_from_timestamp(NULL::timestamptz, 'twitter') IS NULL AS null_id;
-- One row, all NULL: a LATERAL join over a NULL ID keeps its row.
SELECT count(*) AS one_null_row FROM id_decode(NULL::bigint, 'twitter') d WHERE d.id IS NULL AND d.ts IS NULL;
SELECT count(*) AS one_null_row FROM id_decode(NULL::bigint) d WHERE d.layout IS NULL;

DROP EXTENSION pg_idgen;
