-- The generators' SQL surface: Snowflake IDs, message IDs, UUIDv7s and ULIDs, TypeIDs, moving the
-- clock streams past an instant, and the streams' view (were #[pg_test]s of src/snowflake.rs,
-- src/msgid.rs, src/uuidv7.rs, src/typeid.rs, src/start_after.rs and src/status.rs). Each
-- "-- check:" line starts one check (tests/all.sh counts them); each runs in a transaction that is
-- rolled back. Times are shown only as comparisons, so the output does not depend on the clock.
CREATE EXTENSION pg_idgen;

-- check: snowflake_next() is increasing and decodes to now
SELECT snowflake_next() AS a \gset
SELECT snowflake_next() > :a AS increasing,
       abs(extract(epoch FROM id_timestamp(snowflake_next()) - clock_timestamp())) < 5 AS decodes_to_now;

-- check: a batch is ascending and unique
WITH b AS (SELECT id, row_number() OVER () AS rn FROM snowflake_next_batch(100000) AS id)
SELECT count(*), count(DISTINCT id) AS distinct, bool_and(id > coalesce(prev, -1)) AS ascending
  FROM (SELECT id, lag(id) OVER (ORDER BY rn) AS prev FROM b) s;

-- check: a batch refuses zero
SELECT snowflake_next_batch(0);

-- check: a batch refuses NULL
SELECT snowflake_next_batch(NULL);

-- check: a column default works
BEGIN;
CREATE TABLE t_sf (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int);
INSERT INTO t_sf (v) SELECT g FROM generate_series(1, 20000) g;
SELECT count(*), bool_and(id > 0) AS positive FROM t_sf;
ROLLBACK;

-- check: a message ID decodes to the bit layout, field by field
-- (the session hash is Java's String.hashCode of the session id, to 22 bits)
WITH m AS (SELECT msgid_next(7, 'group:42') AS id, clock_timestamp() AS t)
SELECT d.session_type, d.session_hash, abs(extract(epoch FROM d.ts - m.t)) < 5 AS now
  FROM m, msgid_decode(m.id) d;

-- check: the message IDs of one statement are unique and ordered
WITH m AS (SELECT g, msgid_next(1, 's' || (g % 7)) AS id FROM generate_series(1, 20000) g)
SELECT count(DISTINCT id) = 20000 AS unique, bool_and(id > prev COLLATE "C") AS ordered
  FROM (SELECT id, lag(id) OVER (ORDER BY g) AS prev FROM m) x;

-- check: a message ID's session type has four bits
SELECT msgid_next(16, 'x');

-- check: msgid_decode refuses a short text
SELECT * FROM msgid_decode('2222-2222-2222-222');

-- check: msgid_from_timestamp bounds the message IDs of an instant
WITH m AS (SELECT msgid_next(0, 'a') AS id)
SELECT msgid_from_timestamp(d.ts) <= m.id COLLATE "C" AS from_below,
       msgid_from_timestamp(d.ts + interval '1 millisecond') > m.id COLLATE "C" AS next_above
  FROM m, msgid_decode(m.id) d;

-- check: uuidv7_next() is a version 7 UUID of now, and increasing
WITH u AS (SELECT uuidv7_next() AS a, uuidv7_next() AS b)
SELECT b > a AS increasing, substr(a::text, 15, 1) AS version,
       substr(a::text, 20, 1) IN ('8', '9', 'a', 'b') AS variant,
       abs(extract(epoch FROM uuidv7_timestamp(b) - clock_timestamp())) < 5 AS now
  FROM u;

-- check: a UUIDv7 batch is ascending and unique
WITH b AS (SELECT id, row_number() OVER () AS rn FROM uuidv7_next_batch(100000) AS id)
SELECT count(*), count(DISTINCT id) AS distinct, bool_and(id > prev) AS ascending
  FROM (SELECT id, lag(id) OVER (ORDER BY rn) AS prev FROM b) s;

-- check: a ULID is the same bits in the same order
WITH u AS (SELECT g, ulid_next() AS id FROM generate_series(1, 20000) g)
SELECT count(DISTINCT id) = 20000 AS unique,
       bool_and(length(id) = 26) AS length_26,
       bool_and(uuid_to_ulid(ulid_to_uuid(id)) = id) AS round_trips,
       bool_and(id > prev COLLATE "C") AS text_ordered,
       bool_and(ulid_to_uuid(id) > ulid_to_uuid(prev)) AS uuid_ordered,
       bool_and(ulid_timestamp(id) = uuidv7_timestamp(ulid_to_uuid(id))) AS same_time
  FROM (SELECT id, lag(id) OVER (ORDER BY g) AS prev FROM u) x;

-- check: uuidv7_from_timestamp bounds the UUIDs of an instant
WITH u AS (SELECT uuidv7_next() AS id)
SELECT uuidv7_from_timestamp(uuidv7_timestamp(id)) <= id AS from_below,
       uuidv7_from_timestamp(uuidv7_timestamp(id) + interval '1 millisecond') > id AS next_above
  FROM u;

-- check: uuidv7_timestamp refuses a version 4 UUID
SELECT uuidv7_timestamp('550e8400-e29b-41d4-a716-446655440000');

-- check: ulid_to_uuid refuses a short text
SELECT ulid_to_uuid('01ARYZ6S41');

-- check: typeid_next() is a UUIDv7 of the node, in order
WITH t AS (SELECT typeid_next('user') AS t FROM generate_series(1, 1000) g)
SELECT bool_and(typeid_prefix(t) = 'user' AND uuidv7_timestamp(typeid_to_uuid(t, 'user')) IS NOT NULL) AS user_v7,
       count(DISTINCT t) AS distinct
  FROM t;

-- check: a TypeID of another type is refused
SELECT typeid_to_uuid('order_01h455vb4pex5vsknk084sn02q', 'user');

-- check: a bad prefix takes nothing
SELECT typeid_next('User');

-- check: each stream counts its own IDs, and its mark covers its last tick
SELECT (SELECT ids_issued FROM idgen.streams WHERE stream = 'msgid') AS msgid_before,
       (SELECT ids_issued FROM idgen.streams WHERE stream = 'uuidv7') AS uuidv7_before \gset
SELECT count(uuidv7_next()) + count(ulid_next()) AS uuids FROM generate_series(1, 5);
SELECT count(msgid_next(1, 'x')) AS msgids FROM generate_series(1, 3);
SELECT (SELECT ids_issued FROM idgen.streams WHERE stream = 'msgid') - :msgid_before AS msgids_counted,
       (SELECT ids_issued FROM idgen.streams WHERE stream = 'uuidv7') - :uuidv7_before AS uuids_counted;
SELECT string_agg(stream || ':' || ids_per_second, ',') AS covered
  FROM idgen.streams
 WHERE last_tick_time IS NULL OR reserved_until > last_tick_time;

-- check: the node's wall clock is PostgreSQL's
-- (idgen.status's wall_clock, read between two clock_timestamp()s, to the millisecond)
SELECT clock_timestamp() AS t0 \gset
SELECT wall_clock AS wall FROM idgen.status \gset
SELECT date_trunc('milliseconds', :'t0'::timestamptz) <= :'wall' AS not_before,
       :'wall' <= clock_timestamp() AS not_after;

-- check: every refusal reason is counted under its own name, for every stream
SELECT stream, count(*) AS reasons, count(DISTINCT reason) AS names,
       string_agg(reason, ',' ORDER BY n) AS in_order
  FROM (SELECT *, row_number() OVER () AS n FROM idgen.refusals) r
 GROUP BY stream ORDER BY min(n);

-- check: snowflake_start_after moves the next IDs past the instant
-- (the streams stay ahead of the clock until it reaches the instant: waited out below, so that the
-- files after this one find an idle node, whose drift is 0)
SELECT (clock_timestamp() + interval '2 s')::text AS ts \gset
SELECT idgen.snowflake_start_after(:'ts') > :'ts' AS starts_after;
SELECT id_timestamp(snowflake_next()) > :'ts' AS snowflake_past;
SELECT m.ts > :'ts' AS msgid_past FROM msgid_decode(msgid_next(1, 'x')) m;
SELECT persisted_mark > :'ts' AS durable FROM idgen.status;
SELECT pg_sleep(greatest(0, extract(epoch FROM :'ts'::timestamptz - clock_timestamp())) + 0.01) AS waited_out;

-- check: snowflake_start_after refuses the far future
\set VERBOSITY terse
SELECT idgen.snowflake_start_after('2100-01-01 UTC');

DROP EXTENSION pg_idgen;
