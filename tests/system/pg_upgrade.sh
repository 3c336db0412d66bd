#!/usr/bin/env bash
# pg_upgrade never leads to a repeated ID (docs/guarantees.md, guarantee 3), from PostgreSQL 18 to 19 (both
# provided by this repository, tests/helpers/pg_versions.sh; whatever PG the run tests). The node also
# makes IDs at a past time (backfill counters) and public IDs: after the upgrade, backfills at the
# same instant repeat none of the old ones and the old public IDs decode to the same keys. A js_safe_s node
# (4,096 IDs a second) with idgen.max_drift = 300s ran about 98 s ahead of its clock; it is
# upgraded three times with pg_upgrade (copy mode, so the old cluster stays as it was); an adopted
# sequence of the application draws from the same stream and stays adopted:
# 1. Nothing copied but the obvious settings (preload, worker id, layout), and a smaller
#    idgen.max_drift (5s): pg_upgrade copies no settings. Every time-based ID of the node is
#    refused, also in a database created after the upgrade (it used to make the old node's IDs
#    there), until the hint's recipe: the old max_drift, then snowflake_start_after() in the
#    upgraded database (with the new node's own max_drift, the old recipe repeated IDs). Then no
#    new ID in any database is at or below the old ones.
# 2. The old data directory's pg_idgen.mark and pg_idgen.layouts copied in before the first start:
#    nothing is refused, and every ID is above the old ones.
# 3. The same with idgen.layout changed to js_safe, whose IDs (milliseconds << 12) are below
#    js_safe_s's (seconds << 22) for years: the change is checked against the copied history and
#    refused, as at a restart. (Without the copied history a change at pg_upgrade goes unchecked;
#    docs/operations.md says so.)
# (Control, run by hand: with the node-wide refusal taken out of node/origin_check.rs and the recipe run with
# the new node's max_drift, 7 checks of part 1 fail: the new database's IDs and the recipe's are at
# or below the old ones.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
OLD=$(port 0)
NEW=$(port 1)
OLD_MAJOR=18
NEW_MAJOR=19
trap 'PGBIN=$OLD_BIN cluster_stop pu_old immediate; PGBIN=$NEW_BIN cluster_stop pu_new immediate' EXIT
OLD_BIN=$(install_for $OLD_MAJOR) || { echo "  FAIL: pg_idgen for PostgreSQL $OLD_MAJOR"; exit 1; }
NEW_BIN=$(install_for $NEW_MAJOR) || { echo "  FAIL: pg_idgen for PostgreSQL $NEW_MAJOR"; exit 1; }

phase "the old node: PostgreSQL $OLD_MAJOR, js_safe_s, max_drift 300s, about 98 s ahead"
PGBIN=$OLD_BIN
# Data checksums alike on both sides (pg_upgrade needs that): off, as 16 and older had them.
BACKFILL=("idgen.backfill_worker_id = 1023" "idgen.backfill_database = 'app'")
INITDB_OPTS=--no-data-checksums cluster_init pu_old $OLD "idgen.layout = 'js_safe_s'" "idgen.worker_id = 1" "idgen.max_drift = '300s'" "${BACKFILL[@]}"
cluster_start pu_old
q $OLD "CREATE DATABASE app"
qdb $OLD app "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int);
        CREATE TABLE m (m text)"
qdb $OLD app "INSERT INTO t (v) SELECT g FROM generate_series(1, 1000) g"
# 400,000 IDs (a batch of 200,000 and a default for each) at 4,096 a second: the last ones are
# about 98 s ahead of the clock.
qdb $OLD app "INSERT INTO t (v) SELECT -1 FROM snowflake_next_batch(200000)"
qdb $OLD app "INSERT INTO m SELECT msgid_next(1, 'x') FROM generate_series(1, 1000)"
# An application's own bigserial table, its sequence adopted: its keys come from the same stream.
qdb $OLD app "CREATE TABLE adopted (id bigserial PRIMARY KEY, v int); SELECT count(*) FROM idgen.adopt_sequence('adopted_id_seq');
              INSERT INTO adopted (v) SELECT 1 FROM generate_series(1, 1000)" >/dev/null
# Backfills at one past instant (js_safe_s: 4,096 a second; 1,000 before, 1,000 after), and public IDs under a key given as a bind parameter (never a
# literal; \bind is psql 16's).
T="timestamptz '2025-03-01 12:00:00+00'"
qdb $OLD app "CREATE TABLE b AS SELECT snowflake_at($T) AS id, 'old' AS made FROM generate_series(1, 1000)"
"$OLD_BIN/psql" -h 127.0.0.1 -p $OLD -U postgres -d app -X -q -v ON_ERROR_STOP=1 -v key="\\x$(openssl rand -hex 32)" >/dev/null <<'SQL'
SELECT idgen.public_key_create('inv', 'inv', $1::bytea) \bind :key \g
CREATE TABLE p AS SELECT id, idgen.id_to_public(id, 'inv') AS pub FROM t ORDER BY id LIMIT 1000;
SQL
old_max=$(qdb $OLD app "SELECT greatest(max(id), (SELECT max(id) FROM adopted)) FROM t")
ahead=$(qdb $OLD app "SELECT round(extract(epoch FROM id_timestamp($old_max) - clock_timestamp()))")
echo "    the old node's last ID is ${ahead} s ahead of its clock"
old_sys=$(q $OLD "SELECT system_identifier FROM pg_control_system()")
cluster_stop pu_old fast
check "the old node's mark says which system wrote it" \
  grep -q "^system_identifier=$old_sys$" "$(cluster_dir pu_old)/pg_idgen.mark"

# upgrade NAME_OF_RUN [postgresql.conf lines]: a new PostgreSQL 19 cluster (pu_new), pg_upgrade
# from the old one into it; not started.
upgrade() {
  local run=$1 udir
  shift
  PGBIN=$NEW_BIN
  INITDB_OPTS=--no-data-checksums cluster_init pu_new $NEW "$@" "${BACKFILL[@]}"
  udir="$WORK/pu_upgrade"
  as_pg rm -rf "$udir" && as_pg mkdir -p "$udir"
  if ! (cd "$udir" && as_pg "$NEW_BIN/pg_upgrade" -b "$OLD_BIN" -B "$NEW_BIN" -d "$(cluster_dir pu_old)" \
    -D "$(cluster_dir pu_new)" -p $OLD -P $NEW >"$udir/out.txt" 2>&1); then
    tail -20 "$udir/out.txt"
  fi
  check "$run: pg_upgrade $OLD_MAJOR -> $NEW_MAJOR succeeded" grep -q "Upgrade Complete" "$udir/out.txt"
}
# start_with_old_files: docs/operations.md's recipe: the old data directory's mark and layout history
# copied into the new one before its first start.
start_with_old_files() {
  local f
  for f in pg_idgen.mark pg_idgen.layouts; do
    as_pg cp "$(cluster_dir pu_old)/$f" "$(cluster_dir pu_new)/$f"
  done
  PGBIN=$NEW_BIN cluster_start pu_new
}
state() { psql -h 127.0.0.1 -p $NEW -U postgres -d "$1" -X -q -A -t -c "\set VERBOSITY verbose" -c "$2" 2>&1 || true; }
# no_repeats RUN: new IDs in app and in a new database, none at or below the old node's last.
no_repeats() {
  local run=$1
  qdb $NEW app "INSERT INTO t (v) SELECT 0 FROM generate_series(1, 100000)"
  qdb $NEW app "INSERT INTO m SELECT msgid_next(1, 'x') FROM generate_series(1, 1000)"
  check "$run: every new Snowflake ID in app is above every old one" eq \
    "$(qdb $NEW app "SELECT min(id) > $old_max FROM t WHERE v = 0")" t
  qdb $NEW app "INSERT INTO adopted (v) SELECT 0 FROM generate_series(1, 1000)"
  check "$run: the adopted sequence is adopted still; its new keys are above every old one" eq \
    "$(qdb $NEW app "SELECT (SELECT count(*) FROM idgen.adopted_sequences) || ' ' || (min(id) > $old_max) FROM adopted WHERE v = 0")" "1 true"
  check "$run: no message ID repeats" eq "$(qdb $NEW app "SELECT count(*) = count(DISTINCT m) FROM m")" t
  check "$run: every Snowflake ID of another database is above the old ones" eq \
    "$(qdb $NEW other "SELECT min(id) > $old_max FROM snowflake_next_batch(20000) id")" t
  qdb $NEW app "INSERT INTO b SELECT snowflake_at($T), '$run' FROM generate_series(1, 1000)"
  check "$run: backfills at the old instant repeat none of the old ones" eq \
    "$(qdb $NEW app "SELECT count(*) FILTER (WHERE made = '$run'), count(DISTINCT id) = count(*) FROM b")" "1000|t"
  check "$run: the old public IDs decode to the same keys" eq \
    "$(qdb $NEW app "SELECT count(*) FILTER (WHERE idgen.public_to_id(pub, 'inv') = id) FROM p")" 1000
}

phase "1. nothing copied, a smaller max_drift"
upgrade "1" "idgen.layout = 'js_safe_s'" "idgen.worker_id = 1" "idgen.max_drift = '5s'"
PGBIN=$NEW_BIN cluster_start pu_new
check "1: the new data directory has no pg_idgen.mark" test ! -e "$(cluster_dir pu_new)/pg_idgen.mark"
check "1: ... and records that pg_upgrade filled it" \
  grep -q "^upgraded_without_mark=true$" "$(cluster_dir pu_new)/pg_idgen.origins"
err=$(state app "INSERT INTO t (v) VALUES (0)")
check "1: Snowflake IDs are refused in the upgraded database: 55000" grep -q "ERROR:  55000" <<<"$err"
check "1: ... saying pg_upgrade filled the node without the old mark" grep -q "pg_upgrade filled" <<<"$err"
check "1: ... with both recipes in the hint" grep -q "copy pg_idgen.mark and pg_idgen.layouts.*at least the old server's" <<<"$err"
q $NEW "CREATE DATABASE other"
qdb $NEW other "CREATE EXTENSION pg_idgen"
check "1: Snowflake IDs are refused in a database created after the upgrade" \
  grep -q "ERROR:  55000" <<<"$(state other "SELECT snowflake_next_batch(20000)")"
check "1: message IDs and UUIDv7s too" eq \
  "$(state other "SELECT msgid_next(1, 'x')" | grep -c "ERROR:  55000")$(state other "SELECT uuidv7_next()" | grep -c "ERROR:  55000")" 11
check "1: IDs at a past time too (snowflake_at, uuidv7_at), saying why" eq \
  "$(state other "SELECT snowflake_at(now() - interval '1 day')" | grep -c "ERROR:  55000: .*pg_upgrade filled")$(state other "SELECT uuidv7_at(now() - interval '1 day')" | grep -c "ERROR:  55000: .*pg_upgrade filled")" 11
check "1: idgen.status.problem says so" grep -q "pg_upgrade filled" <<<"$(qdb $NEW other "SELECT problem FROM idgen.status")"
check "1: decoding works meanwhile" eq "$(qdb $NEW app "SET client_min_messages = error; SELECT count(*) FROM t, id_decode(id)")" 201000
# The hint: the old node's max_drift first, then the recipe in one database.
PGBIN=$NEW_BIN cluster_conf pu_new "idgen.max_drift = '300s'"
q $NEW "SELECT pg_reload_conf()" >/dev/null
sleep 1
qdb $NEW app "SELECT idgen.snowflake_start_after(clock_timestamp() + current_setting('idgen.max_drift')::interval)" >/dev/null
check "1: after the recipe, only this system is recorded in app" eq \
  "$(qdb $NEW app "SELECT count(*), bool_and(system_identifier = idgen.node_system_identifier()) FROM idgen.node_origins")" "1|t"
check "1: ... and the node no longer records the upgrade" not_grep -q "upgraded_without_mark" "$(cluster_dir pu_new)/pg_idgen.origins"
no_repeats "1"
PGBIN=$NEW_BIN
as_pg "$PGBIN/pg_ctl" -D "$(cluster_dir pu_new)" -m fast -w restart -l "$(cluster_dir pu_new)/server.log" >/dev/null
check "1: after a restart both databases are still accepted" eq \
  "$(state app "SELECT snowflake_next() > $old_max")$(state other "SELECT snowflake_next() > $old_max")" tt
PGBIN=$NEW_BIN cluster_stop pu_new fast

phase "2. the old mark and layout history copied in, max_drift 120s"
upgrade "2" "idgen.layout = 'js_safe_s'" "idgen.worker_id = 1" "idgen.max_drift = '120s'"
start_with_old_files
check "2: the node logs that it starts above the old system's mark" \
  grep -q "starts above the mark of database system $old_sys" "$(cluster_dir pu_new)/server.log"
check "2: ... and records that system" grep -q "^past=$old_sys$" "$(cluster_dir pu_new)/pg_idgen.origins"
q $NEW "CREATE DATABASE other"
qdb $NEW other "CREATE EXTENSION pg_idgen"
check "2: nothing is refused" eq "$(state app "SELECT snowflake_next() > $old_max")" t
check "2: idgen.status.problem is empty" eq "$(qdb $NEW app "SELECT problem IS NULL FROM idgen.status")" t
no_repeats "2"
PGBIN=$NEW_BIN cluster_stop pu_new fast

phase "3. the old files copied in, idgen.layout changed to js_safe (milliseconds: smaller IDs)"
upgrade "3" "idgen.layout = 'js_safe'" "idgen.worker_id = 1" "idgen.max_drift = '300s'"
start_with_old_files
err=$(state app "SELECT snowflake_next()")
check "3: the layout change is refused: 55000" grep -q "ERROR:  55000" <<<"$err"
check "3: ... naming the old layout's history" grep -q "pg_idgen.layouts" <<<"$err"
PGBIN=$NEW_BIN cluster_stop pu_new fast
finish
