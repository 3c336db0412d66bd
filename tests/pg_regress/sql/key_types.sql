-- A column whose default is snowflake_next() or segment_next() and whose type cannot hold the IDs
-- is caught when the DDL runs (event trigger idgen_key_types, setting idgen.key_type_check), not at
-- the first INSERT with a bare "integer out of range".
CREATE EXTENSION pg_idgen;
\set SHOW_CONTEXT never
\set VERBOSITY default
-- Refused: every Snowflake ID is out of range of these types.
CREATE TABLE kt_int (id integer PRIMARY KEY DEFAULT snowflake_next());
CREATE TABLE kt_small (id smallint DEFAULT snowflake_next());
CREATE TABLE kt_real (id real DEFAULT snowflake_next());
CREATE DOMAIN kt_dom AS integer;
CREATE TABLE kt_domain (id kt_dom DEFAULT snowflake_next());
-- double precision rounds IDs above 2^53 into repeats (the node's layout is not js_safe).
CREATE TABLE kt_double (id double precision DEFAULT snowflake_next());
-- Domains at any depth count as their base type; a numeric that cannot hold 19 digits, or whose
-- negative scale rounds IDs together, is refused too.
CREATE DOMAIN kt_dom2 AS kt_dom;
CREATE TABLE kt_domain2 (id kt_dom2 DEFAULT snowflake_next());
CREATE DOMAIN kt_ddom AS double precision;
CREATE DOMAIN kt_ddom2 AS kt_ddom;
CREATE TABLE kt_ddomain2 (id kt_ddom2 DEFAULT snowflake_next());
CREATE TABLE kt_num10 (id numeric(10,0) DEFAULT snowflake_next());
CREATE TABLE kt_numneg (id numeric(20,-6) DEFAULT snowflake_next());
-- A parent's column retyped after an inheritance child or a partition got the default.
CREATE TABLE kt_parent (id bigint, v int);
CREATE TABLE kt_child () INHERITS (kt_parent);
ALTER TABLE kt_child ALTER COLUMN id SET DEFAULT snowflake_next();
ALTER TABLE kt_parent ALTER COLUMN id TYPE integer;
ALTER TABLE kt_parent ALTER COLUMN id TYPE double precision;
CREATE TABLE kt_parted (id bigint, k int) PARTITION BY LIST (k);
CREATE TABLE kt_part PARTITION OF kt_parted FOR VALUES IN (1);
ALTER TABLE kt_part ALTER COLUMN id SET DEFAULT snowflake_next();
ALTER TABLE kt_parted ALTER COLUMN id TYPE integer;
ALTER TABLE kt_parted ALTER COLUMN id TYPE double precision;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid IN ('kt_child'::regclass, 'kt_part'::regclass) AND attname = 'id';
-- The same through ALTER TABLE: a default set later, or the type changed later.
CREATE TABLE kt_plain (id integer, v int);
ALTER TABLE kt_plain ALTER COLUMN id SET DEFAULT snowflake_next();
CREATE TABLE kt_ok (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int);
ALTER TABLE kt_ok ALTER COLUMN id TYPE integer;
-- The SQLSTATE is 42804 (datatype_mismatch).
\set VERBOSITY sqlstate
CREATE TABLE kt_int (id integer DEFAULT snowflake_next());
\set VERBOSITY default
-- Accepted: bigint, numeric, and the tables above that were refused do not exist.
CREATE TABLE kt_numeric (id numeric DEFAULT snowflake_next());
CREATE TABLE kt_num25 (id numeric(25,2) DEFAULT snowflake_next());
SELECT count(*) FROM pg_class WHERE relname IN ('kt_int', 'kt_small', 'kt_real', 'kt_domain', 'kt_double');
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'kt_ok'::regclass AND attname = 'id';
INSERT INTO kt_ok (v) VALUES (1) RETURNING id > 2147483647 AS beyond_integer;
-- segment_next() in an integer column works until its numbers pass 2^31 - 1: a WARNING.
SELECT idgen.segment_create('kt');
CREATE TABLE kt_seg (id integer PRIMARY KEY DEFAULT segment_next('kt'));
INSERT INTO kt_seg DEFAULT VALUES RETURNING id;
-- real rounds segment IDs above 2^24 (a WARNING); a negative scale rounds the first ones (refused).
CREATE TABLE kt_seg_real (id real DEFAULT segment_next('kt'));
CREATE TABLE kt_seg_neg (id numeric(20,-6) DEFAULT segment_next('kt'));
-- idgen.key_type_check = warning lets a refused command through (restoring an old schema);
-- off skips the check; anything else is refused by the setting.
SET idgen.key_type_check = warning;
CREATE TABLE kt_restored (id integer DEFAULT snowflake_next());
SET idgen.key_type_check = off;
CREATE TABLE kt_off (id integer DEFAULT snowflake_next());
SET idgen.key_type_check = refuse;
RESET idgen.key_type_check;
-- A role without any privilege on the idgen schemas gets the same answer.
CREATE ROLE kt_role;
GRANT CREATE ON SCHEMA public TO kt_role;
SET ROLE kt_role;
CREATE TABLE kt_by_role (id integer DEFAULT snowflake_next());
CREATE TABLE kt_by_role (id bigint DEFAULT snowflake_next());
RESET ROLE;
-- Unrelated DDL is not touched.
CREATE SEQUENCE kt_seq;
CREATE TABLE kt_unrelated (id integer DEFAULT nextval('kt_seq'));
CREATE TABLE kt_as AS SELECT 1::int AS id;
DROP TABLE kt_ok, kt_numeric, kt_num25, kt_seg, kt_seg_real, kt_restored, kt_off, kt_by_role, kt_plain, kt_as,
    kt_parent, kt_child, kt_parted;
DROP DOMAIN kt_dom2, kt_ddom2, kt_ddom;
DROP TABLE kt_unrelated;
DROP SEQUENCE kt_seq;
DROP DOMAIN kt_dom;
REVOKE CREATE ON SCHEMA public FROM kt_role;
DROP ROLE kt_role;
SELECT idgen.segment_drop('kt');
DROP EXTENSION pg_idgen;
