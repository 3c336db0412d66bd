-- Golden tests of the SQL surface whose output does not depend on the clock.
CREATE EXTENSION pg_idgen;

-- check: Published examples decode bit for bit.
SELECT ts AT TIME ZONE 'UTC' AS utc, datacenter_id, worker_id, sequence, layout
  FROM id_decode(1212092628029698048, 'twitter');
SELECT id_timestamp(1212092628029698048, 'leaf') AT TIME ZONE 'UTC';
-- The worker id as a scalar (IMMUTABLE with a layout, for distributed queries): the tweet's
-- worker field, NULL for a layout without worker bits, NULL for a NULL ID.
SELECT id_worker_id(1212092628029698048, 'twitter') AS tweet_worker,
       id_worker_id(1212092628029698048, 'twitter datacenter=0 worker=0 time=51') AS no_worker_bits,
       id_worker_id(NULL, 'twitter') AS null_id,
       id_worker_id(snowflake_next()) = (SELECT worker_id FROM idgen.status) AS node_layout;

-- check: The time-to-ID mapping is exact at tick boundaries.
SELECT id_from_timestamp('2019-12-31 19:26:16.771+00', 'twitter') <= 1212092628029698048 AS lower_ok,
       id_from_timestamp('2019-12-31 19:26:16.772+00', 'twitter') > 1212092628029698048 AS upper_ok;
SELECT id_from_timestamp('1970-01-01', 'twitter') AS before_epoch_is_zero;

-- check: The layout catalog.
SELECT name, unit, time_bits, datacenter_bits, worker_bits, rollback_bits, sequence_bits,
       reserved_bits, field_order, ids_per_tick, years, js_safe, can_generate
  FROM idgen.layouts WHERE NOT is_node_layout ORDER BY name;
SELECT name, is_node_layout FROM idgen.layouts WHERE is_node_layout;

-- check: Settings are reserved and visible.
SHOW idgen.layout;
SHOW idgen.clock_policy;
SET idgen.layout = 'twitter';
SET idgen.no_such_setting = 1;

-- check: Bad input is an ERROR with a SQLSTATE, never a crash.
\set VERBOSITY sqlstate
SELECT * FROM id_decode(1, 'nosuch');
SELECT * FROM id_decode(-5, 'twitter');
SELECT * FROM id_decode(9007199254740992, 'js_safe');
SELECT * FROM id_decode(1, 'twitter time=50');
SELECT * FROM id_decode(1, NULL);
SELECT id_from_timestamp('infinity');
SELECT id_from_timestamp('2300-01-01', 'twitter');
-- A finite ID whose time lies beyond PostgreSQL's timestamps is 22003, never infinity.
SELECT id_timestamp(9223372036854775807, 'unit=day time=40 worker=0 sequence=23');
SELECT * FROM id_decode(1, 'twitter epoch=9223372036854775807');
SELECT snowflake_next_batch(0);
SELECT snowflake_next_batch(-1);
SELECT snowflake_next_batch(NULL);
SELECT snowflake_next_batch(10000001);
\set VERBOSITY default

-- check: Generators work and agree with the decoders.
SELECT count(*) AS n, count(DISTINCT id) AS distinct_n FROM snowflake_next_batch(50000) id;
SELECT (SELECT worker_id FROM id_decode(snowflake_next())) = current_setting('idgen.worker_id')::bigint AS worker_ok;
-- id_decode: one row for a NULL ID (all NULL), so a LATERAL join keeps its rows; ROWS 1.
SELECT v.x, d.id, d.ts, d.layout FROM (VALUES (NULL::bigint), (1)) v(x)
  CROSS JOIN LATERAL id_decode(v.x, 'twitter') d ORDER BY v.x NULLS FIRST;
SELECT count(*) AS rows_for_null FROM id_decode(NULL);
SELECT prorows FROM pg_proc WHERE proname = 'id_decode' ORDER BY pronargs;
-- Decoding with the wrong layout is not silent: a tweet's ID decoded with this node's layout lies
-- years ahead of the clock, and a WARNING says so (once per statement, not per row).
SELECT count(d.ts) AS decoded FROM generate_series(0, 2) g, id_decode(1212092628029698048 + g) d;
SELECT extract(year FROM ts) AS tweet_year FROM id_decode(1212092628029698048, 'twitter');
SELECT id_timestamp(snowflake_next()) <= clock_timestamp() + interval '1 minute' AS own_id_no_warning;
-- drift_ms is how far the logical clock runs ahead of the wall clock: 0 on an idle node, never
-- negative (it used to fall below 0 as the last ID aged).
SELECT pg_sleep(0.05);
SELECT drift_ms = 0 AS idle_drift_is_zero FROM idgen.status;
-- idgen.streams: a row for each clock stream, with its capacity; the same drift as idgen.status's
-- for the Snowflake one, and every stream that made IDs covered by the durable mark.
SELECT s.stream, s.ids_per_second, s.drift_ms,
       s.last_tick_time IS NULL OR s.reserved_until > s.last_tick_time AS covered
  FROM idgen.streams s;
SELECT (SELECT drift_ms FROM idgen.streams WHERE stream = 'snowflake') = drift_ms AS same_drift FROM idgen.status;
DROP EXTENSION pg_idgen;
