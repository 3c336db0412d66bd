-- Segment mode (Didi Tinyid, Meituan Leaf): golden tests of the SQL surface. IDs are contiguous per
-- type whatever the timing of background refills, so the output does not depend on the clock.
CREATE EXTENSION pg_idgen;
SELECT idgen.segment_create('order');
SELECT idgen.segment_create('odd', 0, 10, 2, 1, 'odd IDs: database 1 of 2');
SELECT idgen.segment_create('even', 0, 10, 2, 0, 'even IDs: database 2 of 2');

-- check: Tinyid: the first ID of a type created at 0 is 1; delta 2 splits odd and even.
SELECT segment_next('order') AS first_order_id;
SELECT segment_next('odd') AS odd1, segment_next('odd') AS odd2,
       segment_next('even') AS even1, segment_next('even') AS even2;
-- A batch crosses several ranges of 10 without a gap.
SELECT array_agg(x ORDER BY x) FROM segment_next_batch('odd', 12) x;
SELECT count(*) AS ids, count(DISTINCT x) AS distinct_ids, min(x), max(x)
  FROM segment_next_batch('order', 5000) x;

-- check: A caller's ROLLBACK never gives IDs back.
BEGIN;
SELECT segment_next('even') AS rolled_back;
ROLLBACK;
SELECT segment_next('even') AS after_rollback;

-- check: Whole ranges for clients: committed before they are returned, never handed out twice,
-- and a ROLLBACK of the caller does not return them.
SELECT idgen.segment_create('client', 100, 50, 3, 2);
SELECT * FROM idgen.segment_alloc('client');
BEGIN;
SELECT start_id, end_id FROM idgen.segment_alloc('client');
ROLLBACK;
SELECT start_id, end_id, first_id, last_id, id_count FROM idgen.segment_alloc('client');
SELECT max_id, version FROM idgen.segments WHERE biz_type = 'client';

-- check: Administration.
SELECT idgen.segment_alter('order', step => 500, description => 'orders');
SELECT biz_type, configured_step, delta, remainder, description, cached
  FROM idgen.segment_status ORDER BY biz_type;
SELECT array(SELECT c::regclass::text FROM unnest(extconfig) c ORDER BY 1) AS dumped_tables
  FROM pg_extension WHERE extname = 'pg_idgen';

-- check: The top of bigint: the last IDs go out, then 22003.
SELECT idgen.segment_create('top', 9223372036854775807 - 20, 10);
SELECT count(*), max(x) FROM segment_next_batch('top', 20) x;

-- check: Bad input is an ERROR with a SQLSTATE, never a crash.
\set VERBOSITY sqlstate
SELECT segment_next('top');
SELECT segment_next('nosuch');
SELECT segment_next(NULL);
SELECT segment_next('');
SELECT segment_next(repeat('x', 64));
SELECT * FROM segment_next_batch('order', 0);
SELECT * FROM segment_next_batch('order', NULL);
SELECT * FROM idgen.segment_alloc('nosuch');
SELECT idgen.segment_create('order');
SELECT idgen.segment_create('bad', step => 0);
SELECT idgen.segment_create('bad', delta => 0);
SELECT idgen.segment_create('bad', step => 10, delta => 2, remainder => 2);
SELECT idgen.segment_create('bad', remainder => -1);
SELECT idgen.segment_create('bad', start_id => -1);
SELECT idgen.segment_create('bad', step => 2, delta => 3);
SELECT idgen.segment_create('bad', start_id => 9223372036854775807 - 10, step => 11);
SELECT idgen.segment_create(NULL);
SELECT idgen.segment_create('bad', step => NULL);
SELECT idgen.segment_alter('nosuch', step => 10);
SELECT idgen.segment_alter('order', step => 0);
SELECT idgen.segment_drop('nosuch');
UPDATE idgen.segments SET max_id = 0 WHERE biz_type = 'order';
-- A type created in an open transaction is not there for the allocator until it commits.
BEGIN;
SELECT idgen.segment_create('fresh');
SELECT segment_next('fresh');
ROLLBACK;
SELECT idgen.segment_drop('even');
SELECT segment_next('even');
-- Created again, a dropped type goes on above the IDs it reached (idgen.segments_retired).
SELECT idgen.segment_create('phoenix', start_id => 500, step => 10);
SELECT idgen.segment_drop('phoenix');
SELECT biz_type, max_id FROM idgen.segments_retired WHERE biz_type = 'phoenix';
\set VERBOSITY default
SELECT idgen.segment_create('phoenix', step => 10);
\set VERBOSITY sqlstate
SELECT segment_next('phoenix');
SELECT idgen.segment_drop('phoenix');
-- What the messages say.
\set VERBOSITY default
SELECT segment_next('top');
SELECT segment_next('nosuch');
SELECT idgen.segment_create('bad', step => 2, delta => 3);
SELECT biz_type FROM idgen.segments ORDER BY 1;
-- After a point-in-time recovery: every type (and every retired one) moves margin IDs further.
SELECT idgen.segment_create('adv', step => 10);
SELECT segment_next('adv') AS before_advance;
SELECT idgen.segment_drop('adv');
SELECT idgen.segment_create('adv', step => 10);
SELECT * FROM idgen.segment_advance(1000000, 'adv');
SELECT segment_next('adv') AS first_after_one_type;
-- All or nothing: the type near 2^63-1 ('top') refuses the margin, and nothing moves.
SELECT count(*) FROM idgen.segment_advance(5000);
SELECT max_id FROM idgen.segments WHERE biz_type = 'adv';
DELETE FROM idgen.segments WHERE biz_type = 'top';
DELETE FROM idgen.segments_retired WHERE biz_type = 'top';
SELECT count(*) FILTER (WHERE NOT retired) AS types, count(*) FILTER (WHERE retired) AS retired,
       bool_and(new_max_id = old_max_id + 5000) AS all_moved_by_margin
  FROM idgen.segment_advance(5000);
\set VERBOSITY sqlstate
SELECT idgen.segment_advance(NULL);
SELECT idgen.segment_advance(0);
SELECT idgen.segment_advance(10, 'nosuch');
SELECT idgen.segment_advance(9223372036854775000);
\set VERBOSITY default
DROP EXTENSION pg_idgen;
