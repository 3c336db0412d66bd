-- Golden tests of the SQL surface whose output does not depend on the clock.
CREATE EXTENSION pg_idgen;

-- Published examples decode bit for bit.
SELECT ts AT TIME ZONE 'UTC' AS utc, datacenter_id, worker_id, sequence, layout
  FROM id_decode(1212092628029698048, 'twitter');
SELECT id_timestamp(1212092628029698048, 'leaf') AT TIME ZONE 'UTC';

-- The time-to-ID mapping is exact at tick boundaries.
SELECT id_from_timestamp('2019-12-31 19:26:16.771+00', 'twitter') <= 1212092628029698048 AS lower_ok,
       id_from_timestamp('2019-12-31 19:26:16.772+00', 'twitter') > 1212092628029698048 AS upper_ok;
SELECT id_from_timestamp('1970-01-01', 'twitter') AS before_epoch_is_zero;

-- The layout catalog.
SELECT name, unit, time_bits, datacenter_bits, worker_bits, rollback_bits, sequence_bits,
       reserved_bits, field_order, ids_per_tick, years, js_safe, can_generate
  FROM idgen.layouts WHERE NOT is_node_layout ORDER BY name;
SELECT name, is_node_layout FROM idgen.layouts WHERE is_node_layout;

-- Settings are reserved and visible.
SHOW idgen.layout;
SHOW idgen.clock_policy;
SET idgen.layout = 'twitter';
SET idgen.no_such_setting = 1;

-- Bad input is an ERROR with a SQLSTATE, never a crash.
\set VERBOSITY sqlstate
SELECT * FROM id_decode(1, 'nosuch');
SELECT * FROM id_decode(-5, 'twitter');
SELECT * FROM id_decode(9007199254740992, 'js_safe');
SELECT * FROM id_decode(1, 'twitter time=50');
SELECT * FROM id_decode(1, NULL);
SELECT id_from_timestamp('infinity');
SELECT id_from_timestamp('2300-01-01', 'twitter');
SELECT snowflake_next_batch(0);
SELECT snowflake_next_batch(-1);
SELECT snowflake_next_batch(NULL);
SELECT snowflake_next_batch(10000001);
\set VERBOSITY default

-- Generators work and agree with the decoders.
SELECT count(*) AS n, count(DISTINCT id) AS distinct_n FROM snowflake_next_batch(50000) id;
SELECT (SELECT worker_id FROM id_decode(snowflake_next())) = current_setting('idgen.worker_id')::bigint AS worker_ok;
DROP EXTENSION pg_idgen;
