#!/usr/bin/env bash
# The #[pg_test] layer never touches a library a running server has mapped. (Issue 57: while
# `make test` ran its layer, every server on the machine that preloaded pg_idgen from the system's
# PostgreSQL 15 crashed at the same instant: `cargo pgrx test` copied its build over the installed
# library.) tests/all.sh gives the layer a copy of the PostgreSQL under test (private_tree in
# tests/helpers/pg_versions.sh; pg_tests in lib.sh). Here a server of the real tree preloads
# pg_idgen, with sessions taking IDs and segments, while pg_tests, the layer's own command, builds,
# installs and runs one #[pg_test] on a server of its own: the server stays up, its library file is
# the one it started with, and it goes on serving IDs.
# (Control, run by hand: the layer given the real tree (PGRX_HOME naming it), as it was before: its
# install wrote over the mapped library (same inode, other bytes), and within the second the
# postmaster and every process of the server died of a general protection fault (the kernel's
# log; the server's says nothing), the sessions cut off. 3 checks failed; the postmaster's passed,
# as it read only the pid file, and now also asks `kill -0`.)
# idgen-test: alone (run by itself it builds the #[pg_test] layer for minutes; in the test command
# the layer has just built it)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=26446
LIB="$("$PG_CONFIG" --pkglibdir)/pg_idgen.so"
cluster_init layer $PORT "idgen.worker_id = 4"
cluster_start layer
trap 'cluster_stop layer immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen; SELECT idgen.segment_create('t', step => 10);
         CREATE TABLE got (id bigint, seg bigint)" >/dev/null
inode=$(stat -c %i "$LIB")
sum=$(md5sum <"$LIB")
pm=$(head -1 "$(cluster_dir layer)/postmaster.pid")

# Sessions busy for as long as the layer's command runs (until it writes $done).
done_file=$(mktemp)
rm -f "$done_file"
for s in 1 2; do
  (while [ ! -e "$done_file" ]; do
     q $PORT "INSERT INTO got SELECT snowflake_next(), segment_next('t') FROM generate_series(1, 500)" || exit 1
     sleep 0.2
   done) &
done
test_config=$(private_tree "$PG" "$PG_CONFIG")
check "the layer's PostgreSQL is a copy, apart from the one under test" ne \
  "$("$test_config" --pkglibdir)" "$("$PG_CONFIG" --pkglibdir)"
log "the layer's command, pg_tests (one #[pg_test]), while the server runs"
status=0
pg_tests a_node_with_a_worker_id_setting_reports_it >"$WORK/pg_test_layer.log" 2>&1 || status=$?
touch "$done_file"
sessions=0
for job in $(jobs -p); do wait "$job" || sessions=$((sessions + 1)); done
rm -f "$done_file"
check "the layer's command ran its #[pg_test]" eq \
  "$status|$(grep -c 'test result: ok. 1 passed' "$WORK/pg_test_layer.log")" "0|1"
[ "$status" = 0 ] || tail -20 "$WORK/pg_test_layer.log"
check "the library the server mapped is untouched (same file, same bytes)" eq \
  "$(stat -c %i "$LIB") $(md5sum <"$LIB")" "$inode $sum"
check "the sessions ran through it without an error" eq "$sessions" 0
check "the server is the same postmaster, alive, and no process of it died" eq \
  "$(kill -0 "$pm" && head -1 "$(cluster_dir layer)/postmaster.pid")|$(grep -c 'terminated by signal\|PANIC\|was terminated' "$(cluster_dir layer)/server.log")" \
  "$pm|0"
check "it goes on serving IDs, none repeated" eq \
  "$(q $PORT "SELECT snowflake_next() > 0 AND segment_next('t') > 0, (SELECT count(*) > 0 AND count(*) = count(DISTINCT id) AND count(*) = count(DISTINCT seg) FROM got)")" \
  "t|t"
finish
