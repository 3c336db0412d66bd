#!/usr/bin/env bash
# Installing a new build under a running server that preloads pg_idgen (issue: copying the new
# library over the mapped one crashed the reserver and the postmaster). tools/install.sh renames
# each file into place, so the server keeps the library it mapped until it is restarted. Here:
# sessions and the workers busy, a different build (debug) installed under them, then the release
# build again; the server stays up and serves IDs throughout, and loads the new build on restart.
# idgen-test: alone (it installs a debug build over the one every other test loads)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
LIB="$("$PG_CONFIG" --pkglibdir)/pg_idgen.so"
cluster_init live $PORT "idgen.worker_id = 3"
cluster_start live
DEBUG_TREE=$(mktemp -d)
trap 'cluster_stop live immediate; rm -rf "$DEBUG_TREE"; bash "$REPO/tools/install.sh" --pg-config "$PG_CONFIG" >/dev/null 2>&1 || true' EXIT
q $PORT "CREATE EXTENSION pg_idgen; SELECT idgen.segment_create('t', step => 10);
         CREATE TABLE got (id bigint, seg bigint)" >/dev/null

# A different build of the library: the debug profile.
(cd "$REPO" && cargo pgrx package --debug --pg-config "$PG_CONFIG" --no-default-features --features "$PG_FEATURES" \
  --out-dir "$DEBUG_TREE") >/dev/null 2>&1
check "a debug build differs from the installed one" not_grep -q . <(cmp -s "$LIB" "$(find "$DEBUG_TREE" -name pg_idgen.so)" && echo same)

# Sessions and the workers busy while the library is replaced twice.
for s in 1 2 3; do
  q $PORT "DO \$\$ BEGIN FOR i IN 1..150 LOOP
             INSERT INTO got SELECT snowflake_next(), segment_next('t') FROM generate_series(1, 200);
             PERFORM pg_sleep(0.01);
           END LOOP; END \$\$" &
done
sleep 0.5
inode=$(stat -c %i "$LIB")
bash "$REPO/tools/install.sh" --pg-config "$PG_CONFIG" --from "$DEBUG_TREE" 2>/dev/null
check "the install put a new file in place (new inode)" ne "$(stat -c %i "$LIB")" "$inode"
sleep 0.5
bash "$REPO/tools/install.sh" --pg-config "$PG_CONFIG" 2>/dev/null
wait
check "the sessions went on through both installs (90,000 rows)" eq "$(q $PORT "SELECT count(*) FROM got")" 90000
check "no ID repeats" eq "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM got")|$(q $PORT "SELECT count(*) - count(DISTINCT seg) FROM got")" "0|0"
check "new sessions get IDs" test "$(q $PORT "SELECT snowflake_next() > 0 AND segment_next('t') > 0 AND msgid_next(1, 'x') IS NOT NULL")" = t
check "no process of the server died" eq "$(grep -c 'terminated by signal\|PANIC\|was terminated' "$(cluster_dir live)/server.log")" 0
cluster_stop live
cluster_start live
check "after a restart the installed build serves IDs above the old ones" eq \
  "$(q $PORT "SELECT snowflake_next() > max(id) AND segment_next('t') > max(seg) FROM got")" t
finish
