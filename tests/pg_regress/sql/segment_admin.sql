-- Administering business types (were #[pg_test]s of src/segment/admin.rs; segment.sql takes ranges).
-- Each "-- check:" line starts one check (tests/all.sh counts them); each runs in a transaction that
-- is rolled back, as the allocator sees only committed rows.
CREATE EXTENSION pg_idgen;
\set VERBOSITY default

-- check: segment_create fills the Tinyid row
BEGIN;
SELECT idgen.segment_create('invoice', 500, 2000, 4, 3, 'invoices');
SELECT max_id, step, version, description FROM idgen.segments WHERE biz_type = 'invoice';
-- Not in the cache until used; the view still lists it.
SELECT cached FROM idgen.segment_status WHERE biz_type = 'invoice';
ROLLBACK;

-- check: a type is created once
BEGIN;
SELECT idgen.segment_create('invoice');
SELECT idgen.segment_create('invoice');
ROLLBACK;

-- check: segment_alter changes step and text, not the position
BEGIN;
SELECT idgen.segment_create('t', 42);
SELECT idgen.segment_alter('t', step => 5000);
SELECT idgen.segment_alter('t', description => 'text');
SELECT max_id, step, description FROM idgen.segments WHERE biz_type = 't';
ROLLBACK;

-- check: segment_alter keeps every range non-empty
BEGIN;
SELECT idgen.segment_create('t', step => 9, delta => 3);
SELECT idgen.segment_alter('t', step => 2);
ROLLBACK;

-- check: max_id never moves backwards
BEGIN;
SELECT idgen.segment_create('t', 100);
UPDATE idgen.segments SET max_id = 150 WHERE biz_type = 't';
UPDATE idgen.segments SET max_id = 150, step = 7 WHERE biz_type = 't';
UPDATE idgen.segments SET max_id = 149 WHERE biz_type = 't';
ROLLBACK;

-- check: segment_drop removes the row
BEGIN;
SELECT idgen.segment_create('gone');
SELECT idgen.segment_drop('gone');
SELECT count(*) FROM idgen.segments WHERE biz_type = 'gone';
ROLLBACK;

-- check: a dropped type created again goes on above its old IDs
BEGIN;
SELECT idgen.segment_create('again', 500);
UPDATE idgen.segments SET max_id = 700 WHERE biz_type = 'again';
SELECT idgen.segment_drop('again');
SELECT max_id AS retired_at FROM idgen.segments_retired WHERE biz_type = 'again';
SELECT idgen.segment_create('again');
SELECT max_id FROM idgen.segments WHERE biz_type = 'again';
-- Created again with a start above the old IDs: that start is kept as given.
DELETE FROM idgen.segments WHERE biz_type = 'again';
SELECT idgen.segment_create('again', 9000);
SELECT max_id FROM idgen.segments WHERE biz_type = 'again';
-- An administrator who deletes the retired row allows the old IDs again, knowingly.
DELETE FROM idgen.segments WHERE biz_type = 'again';
DELETE FROM idgen.segments_retired WHERE biz_type = 'again';
SELECT idgen.segment_create('again');
SELECT max_id FROM idgen.segments WHERE biz_type = 'again';
ROLLBACK;

-- check: renamed and truncated types are retired too
BEGIN;
SELECT idgen.segment_create('old_name', 300);
SELECT idgen.segment_create('other', 40);
UPDATE idgen.segments SET biz_type = 'new_name' WHERE biz_type = 'old_name';
SELECT idgen.segment_create('old_name');
SELECT biz_type, max_id FROM idgen.segments WHERE biz_type IN ('old_name', 'new_name') ORDER BY 1;
TRUNCATE idgen.segments;
SELECT idgen.segment_create('other');
SELECT idgen.segment_create('new_name', 5);
SELECT biz_type, max_id FROM idgen.segments WHERE biz_type IN ('other', 'new_name') ORDER BY 1;
-- Renaming onto a retired name also goes on above that name's old IDs.
INSERT INTO idgen.segments_retired (biz_type, max_id) VALUES ('target', 9999);
UPDATE idgen.segments SET biz_type = 'target' WHERE biz_type = 'other';
SELECT max_id FROM idgen.segments WHERE biz_type = 'target';
ROLLBACK;

-- check: creating an existing type still fails after a drop
BEGIN;
SELECT idgen.segment_create('dup', 10);
SELECT idgen.segment_drop('dup');
SELECT idgen.segment_create('dup');
SELECT idgen.segment_create('dup');
ROLLBACK;

-- check: a type is usable once committed
-- (ranges are only ever taken from committed rows: the allocator, in its own transaction, does not
-- see this type)
BEGIN;
SELECT idgen.segment_create('uncommitted');
SELECT segment_next('uncommitted');
ROLLBACK;

-- check: long names are refused
SELECT segment_next(repeat('x', 64));

-- check: segment_alloc refuses NULL
SELECT * FROM idgen.segment_alloc(NULL);

-- check: names are data, never SQL
BEGIN;
SELECT idgen.segment_create($n$x'); DROP TABLE idgen.segments; --$n$);
SELECT count(*) FROM idgen.segments WHERE biz_type = $n$x'); DROP TABLE idgen.segments; --$n$;
ROLLBACK;

DROP EXTENSION pg_idgen;
