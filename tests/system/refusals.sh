#!/usr/bin/env bash
# Every refusal the reference lists (docs/reference.md's Errors lines), caused on a real node:
# its SQLSTATE as the reference says, and a HINT, as docs/operations.md promises for every refusal
# that is not of a bad argument
# (tests/system/refusals.tsv lists them; tests/system/refusals.py walks them, and checks that every function's
# every SQLSTATE has a line). A refusal only another system test can cause (a standby, a stepped
# clock) names that test, which must check the SQLSTATE. Control: a line expecting another
# SQLSTATE fails.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
trap 'cluster_stop refusals immediate' EXIT
cluster_init refusals $P "idgen.worker_id = 1" "idgen.backfill_worker_id = 1023" "idgen.backfill_database = 'postgres'"
cluster_start refusals
q $P "CREATE EXTENSION pg_idgen;
      CREATE ROLE plain LOGIN; CREATE ROLE client LOGIN IN ROLE idgen_client; CREATE ROLE admin LOGIN IN ROLE idgen_admin;
      SELECT idgen.public_key_create('invoice', 'inv'); SELECT idgen.public_key_create('literal', '');
      SELECT idgen.public_key_create('many', 'm');
      CREATE TABLE conv_int (id serial PRIMARY KEY); CREATE TABLE conv_text (id text PRIMARY KEY);
      CREATE TABLE conv_nokey (id serial); CREATE TABLE conv_shadowed (id serial PRIMARY KEY, id_idgen_new bigint);
      CREATE TABLE conv_done (id serial PRIMARY KEY);
      CREATE SEQUENCE rf_plain; CREATE SEQUENCE rf_int AS integer; CREATE SEQUENCE rf_cycle CYCLE;
      CREATE SEQUENCE rf_adopted; CREATE SEQUENCE rf_small MAXVALUE 100;
      SELECT idgen.adopt_sequence('rf_adopted'); SELECT idgen.adopt_sequence('rf_small')" >/dev/null
q $P "SELECT count(*) FROM idgen.convert_online('conv_done', 'id')" >/dev/null 2>&1
for i in $(seq 1 150); do [ "$(q $P "SELECT state FROM idgen.online_conversions")" = done ] && break; sleep 0.2; done
v1=$(q $P "SELECT idgen.id_to_public(42, 'invoice')")
q $P "SELECT idgen.public_key_rotate('invoice'); SELECT idgen.public_key_drop('invoice', 1)" >/dev/null
q $P "SELECT idgen.segment_create('order');
      SELECT idgen.segment_create('locked');
      SELECT idgen.segment_create('near_end', start_id => 9223372036854775000, step => 100);
      SELECT idgen.segment_create('near_end2', start_id => 9223372036854774800, step => 1000)" >/dev/null
lease=$(q $P "SELECT worker_id || ',' || lease FROM idgen.worker_acquire('holder', '1 min', 100, 100)")
# A transaction that holds the row of type "locked": the allocator cannot commit its ranges.
psql -h 127.0.0.1 -p $P -U postgres -X -q -c "BEGIN" -c "SELECT 1 FROM idgen.segments WHERE biz_type = 'locked' FOR UPDATE" \
  -c "SELECT pg_sleep(120)" >/dev/null 2>&1 &
locker=$!
sleep 0.5
"$(command -v python3)" "$REPO/tests/system/refusals.py" $P "v1=$v1,worker=${lease%,*},lease=${lease#*,}" | tee "$WORK/refusals.out"
kill $locker 2>/dev/null || true
check "every refusal of the reference: its SQLSTATE, and a HINT where the argument is not at fault" not_grep -q "FAIL" "$WORK/refusals.out"
finish
