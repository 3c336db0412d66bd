-- The generators inside parallel plans: segment_next() runs in the leader (PARALLEL RESTRICTED),
-- snowflake_next() and msgid_next() anywhere. Each type is first looked up inside the parallel
-- plan (this session has not used it before), which needs a read-only lookup: a read-write one
-- assigns a transaction id, which PostgreSQL refuses during a parallel operation (XX000).
CREATE EXTENSION pg_idgen;
SELECT idgen.segment_create('par'), idgen.segment_create('par_ctas'), idgen.segment_create('par_forced');
CREATE TABLE big AS SELECT g FROM generate_series(1, 200000) g;
ANALYZE big;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT segment_next('par'), g FROM big WHERE g % 100 = 0;
SELECT count(*) AS ids, count(DISTINCT s) AS distinct_ids, min(s), max(s)
  FROM (SELECT segment_next('par') s, g FROM big WHERE g % 100 = 0) x;
-- CREATE TABLE AS with a parallel scan.
EXPLAIN (COSTS OFF) CREATE TABLE made AS SELECT segment_next('par_ctas') s, snowflake_next() f, g FROM big WHERE g % 100 = 0;
CREATE TABLE made AS SELECT segment_next('par_ctas') s, snowflake_next() f, g FROM big WHERE g % 100 = 0;
SELECT count(*) AS ids, count(DISTINCT s) AS distinct_segment, count(DISTINCT f) AS distinct_snowflake FROM made;
-- An unknown type is 42704 there too.
\set VERBOSITY sqlstate
SELECT segment_next('par_nosuch'), g FROM big WHERE g % 100 = 0;
\set VERBOSITY default
-- Forced parallel mode (force_parallel_mode in PostgreSQL 15, debug_parallel_query from 16).
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false) AS forced;
SELECT segment_next('par_forced') AS first_forced;
SELECT count(DISTINCT x) AS batch FROM segment_next_batch('par_forced', 2500) x;
SELECT count(DISTINCT m) AS msgids FROM (SELECT msgid_next(1, 'abc') m FROM generate_series(1, 100)) x;
RESET ALL;
DROP TABLE big, made;
DROP EXTENSION pg_idgen;
