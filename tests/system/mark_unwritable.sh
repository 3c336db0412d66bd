#!/usr/bin/env bash
# A mark file that cannot be written disables generation, never the database (docs/guarantees.md, guarantee 3).
# With pg_idgen.mark not replaceable (a directory stands where its temporary file goes), a
# reservation writes its WAL record and then fails: callers get 58030. A crash in that state
# replays the record, whose file write fails again: recovery must go on (it used to stop with
# FATAL "could not apply a replayed Snowflake mark", and the server stayed down), with Snowflake
# and message IDs refused (55000) and everything else working. Once the file is repaired and the
# server restarted, IDs go on above all earlier ones.
# (Control, run by hand on the code before the fix: recovery stops with that FATAL, the server
# stays down, and six checks fail.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
dir=$(cluster_dir mu_node)
trap 'rmdir "$dir/pg_idgen.mark.tmp" 2>/dev/null || true; cluster_stop mu_node immediate' EXIT
cluster_init mu_node $PORT "idgen.reserve_window = '200ms'"
cluster_start mu_node
q $PORT "CREATE EXTENSION pg_idgen; CREATE TABLE ids (id bigint); CREATE TABLE other (x int)"
q $PORT "INSERT INTO ids SELECT snowflake_next() FROM generate_series(1, 1000)"
mkdir "$dir/pg_idgen.mark.tmp"
state() { psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -c "\set VERBOSITY sqlstate" -c "$1" 2>&1 || true; }
for _ in $(seq 1 50); do
  out=$(state "INSERT INTO ids SELECT snowflake_next()")
  [ -n "$out" ] && break
  sleep 0.05
done
check "with the mark unwritable, generation stops with 58030" grep -q 58030 <<<"$out"

# A crash: a backend killed with SIGKILL makes the postmaster reinitialise and run recovery.
psql -h 127.0.0.1 -p $PORT -U postgres -X -q -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
sleep 0.5
kill -9 "$(q $PORT "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(60)%' LIMIT 1")"
wait
up=f
for _ in $(seq 1 60); do
  [ "$(q $PORT "SELECT NOT pg_is_in_recovery()" 2>/dev/null)" = t ] && up=t && break
  sleep 0.5
done
check "the server came back after the crash" eq "$up" t
check "... having logged why generation is off" grep -q "a mark replayed from the WAL could not be written" "$dir/server.log"
check "Snowflake IDs are refused with 55000" grep -q 55000 <<<"$(state "SELECT snowflake_next()")"
check "message IDs are refused with 55000" grep -q 55000 <<<"$(state "SELECT msgid_next(1, 'x')")"
check "idgen.status names the problem" grep -q "could not be written" <<<"$(q $PORT "SELECT problem FROM idgen.status")"
check "the rest of the database works" eq "$(state "INSERT INTO other VALUES (1)")" ""

rmdir "$dir/pg_idgen.mark.tmp"
cluster_stop mu_node fast
cluster_start mu_node
q $PORT "INSERT INTO ids SELECT snowflake_next() FROM generate_series(1, 1000)"
check "repaired and restarted: IDs again, none repeated" eq \
  "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM ids")" 0
finish
