#!/usr/bin/env bash
# Reading another role's table must not run that role's code with the reader's rights (the second
# rule of the design: no role acts with another's rights). pg_idgen reads users' tables in two
# places: idgen.segment_create looks for the largest ID in columns that default to segment_next()
# of the type, and the conversion functions read the largest key. Eve, a plain role, plants code in
# every table of hers that pg_idgen may read:
#   - a row-level security policy (FORCE, so it applies to every reader) calling her function;
#   - a view of hers whose function is hers too, and an expression index.
# Her function, whoever runs it, notes who that was, tries to read the live leases of
# idgen.workers and to delete idgen.segments_retired (which would let a dropped type's IDs come
# out again), and swallows its own errors so that the scan goes on. An administrator (a member of
# idgen_admin, not a superuser) and a superuser then do their ordinary work: segment_create of the
# type Eve's column uses, convert_schema_to_snowflake of her schema (a dry run, as its default),
# and convert_to_snowflake of her table. Her code may run as Eve, or not at all; never as them.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
cluster_init hostile $PORT "idgen.worker_id = 9"
cluster_start hostile
trap 'cluster_stop hostile immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen;
         CREATE ROLE eve LOGIN;
         CREATE ROLE boss LOGIN IN ROLE idgen_admin;
         CREATE SCHEMA eve_s AUTHORIZATION eve;
         GRANT USAGE ON SCHEMA eve_s TO PUBLIC" >/dev/null
q $PORT "SELECT idgen.segment_create('gone')" >/dev/null
q $PORT "SELECT segment_next('gone')" >/dev/null
q $PORT "SELECT idgen.segment_drop('gone')" >/dev/null
q $PORT "SELECT idgen.worker_acquire('some-app-server')" >/dev/null
as_eve() { psql -h 127.0.0.1 -p $PORT -U eve -d postgres -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
as_eve "
CREATE TABLE eve_s.loot (who text, what text);
GRANT INSERT ON eve_s.loot TO PUBLIC;
CREATE FUNCTION eve_s.spy(x bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS \$\$
BEGIN
    INSERT INTO eve_s.loot VALUES (current_user, 'ran');
    BEGIN
        INSERT INTO eve_s.loot SELECT current_user, 'lease ' || lease FROM idgen.workers;
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
    BEGIN
        DELETE FROM idgen.segments_retired;
        INSERT INTO eve_s.loot VALUES (current_user, 'deleted segments_retired');
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
    RETURN true;
END \$\$;
CREATE FUNCTION eve_s.spy_imm(x bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS 'SELECT x';
CREATE TABLE eve_s.orders (id bigint DEFAULT segment_next('order'), note text);
CREATE TABLE eve_s.legacy (id serial PRIMARY KEY, note text);
INSERT INTO eve_s.legacy (note) SELECT 'old' FROM generate_series(1, 10);
CREATE INDEX ON eve_s.legacy ((eve_s.spy_imm(id)));
ALTER TABLE eve_s.orders ENABLE ROW LEVEL SECURITY; ALTER TABLE eve_s.orders FORCE ROW LEVEL SECURITY;
ALTER TABLE eve_s.legacy ENABLE ROW LEVEL SECURITY; ALTER TABLE eve_s.legacy FORCE ROW LEVEL SECURITY;
CREATE POLICY p ON eve_s.orders USING (eve_s.spy(1));
CREATE POLICY p ON eve_s.legacy USING (eve_s.spy(id));
GRANT SELECT ON eve_s.orders, eve_s.legacy TO PUBLIC" >/dev/null
# The orders column holds IDs up to 5 already (inserted by Eve through her own policy).
as_eve "INSERT INTO eve_s.orders (id, note) VALUES (5, 'x')" >/dev/null 2>&1 || true
as_eve "DELETE FROM eve_s.loot" >/dev/null
check "Eve's code runs when Eve reads her table (the trap works)" eq \
  "$(as_eve "SELECT count(*) > 0 FROM eve_s.orders; SELECT count(*) > 0 FROM eve_s.loot WHERE who = 'eve'" | tail -1)" t
as_eve "DELETE FROM eve_s.loot" >/dev/null

as_boss() { psql -h 127.0.0.1 -p $PORT -U boss -d postgres -X -q -A -t -v ON_ERROR_STOP=1 -c "$1" 2>&1 || true; }
phase "the administrator (idgen_admin, not a superuser) at work"
out=$(as_boss "SELECT idgen.segment_create('order')")
check "segment_create ran (it read Eve's column as Eve: $(grep -o 'holds IDs up to [0-9]*' <<<"$out" || echo 'no notice'))" \
  eq "$(q $PORT "SELECT count(*) FROM idgen.segments WHERE biz_type = 'order'")" 1
out=$(as_boss "SELECT count(*) FROM idgen.convert_schema_to_snowflake('eve_s')")
check "convert_schema_to_snowflake (dry run) skips Eve's tables and says so" grep -q "skipped the tables of other roles: eve_s.legacy.id" <<<"$out"
check "convert_to_snowflake of Eve's table is refused (42501) before it reads anything" grep -q "must be owner of table eve_s.legacy" \
  <<<"$(as_boss "SELECT idgen.convert_to_snowflake('eve_s.legacy', 'id', dry_run => true)")"
# Eve's code may also raise: the administrator gets her error, with no Rust backtrace in it, and
# the session is the administrator's again, with its own search_path (the abort restores both).
as_eve "CREATE FUNCTION eve_s.bomb(x bigint) RETURNS boolean LANGUAGE plpgsql AS \$\$
        BEGIN RAISE EXCEPTION 'eve says no'; END \$\$;
        CREATE TABLE eve_s.bombs (id bigint DEFAULT segment_next('bomb'));
        INSERT INTO eve_s.bombs VALUES (1);
        ALTER TABLE eve_s.bombs ENABLE ROW LEVEL SECURITY; ALTER TABLE eve_s.bombs FORCE ROW LEVEL SECURITY;
        CREATE POLICY p ON eve_s.bombs USING (eve_s.bomb(id))" >/dev/null
out=$(as_boss "SELECT idgen.segment_create('bomb')")
check "an error of Eve's code reaches the administrator as her error, without a backtrace" eq \
  "$(grep -c 'eve says no' <<<"$out")|$(grep -ci 'pgrx\|backtrace\|panicking' <<<"$out")" "1|0"
check "after it the session is the administrator's again, with its own search_path" eq \
  "$(as_boss "DO \$\$ BEGIN PERFORM idgen.segment_create('bomb'); EXCEPTION WHEN OTHERS THEN NULL; END \$\$;
              SELECT current_user || ' / ' || current_setting('search_path')")" 'boss / "$user", public'

phase "a superuser at work"
q $PORT "SELECT idgen.segment_drop('order'); SELECT idgen.segment_create('order')" >/dev/null 2>&1
q $PORT "SELECT count(*) FROM idgen.convert_schema_to_snowflake('eve_s')" >/dev/null 2>&1 || true
check "a superuser's dry run of Eve's schema plans her table (a superuser owns everything), reading it as Eve" \
  eq "$(q $PORT "SELECT count(*) > 0 FROM idgen.convert_schema_to_snowflake('eve_s') WHERE table_name = 'eve_s.legacy'::regclass" 2>/dev/null)" t

who=$(q $PORT "SELECT coalesce(string_agg(DISTINCT who, ','), 'nobody') FROM eve_s.loot")
check "Eve's code never ran as the administrator or the superuser (it ran as: $who)" \
  eq "$(q $PORT "SELECT count(*) FROM eve_s.loot WHERE who <> 'eve'")" 0
check "it read no lease of idgen.workers" eq "$(q $PORT "SELECT count(*) FROM eve_s.loot WHERE what LIKE 'lease%'")" 0
check "idgen.segments_retired still holds the dropped type" eq "$(q $PORT "SELECT count(*) FROM idgen.segments_retired WHERE biz_type = 'gone'")" 1
check "the type Eve's column uses starts above her IDs" eq \
  "$(q $PORT "SELECT segment_next('order') > 5")" t
finish
