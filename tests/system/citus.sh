#!/usr/bin/env bash
# pg_idgen as the ID source of a Citus cluster (Citus 13.2 built from $IDGEN_VENDOR_DIR by
# tests/helpers/citus.sh): a coordinator and two workers on loopback ports, each preloading citus,pg_idgen
# with idgen.worker_id_source = citus (the node's Citus group id is its worker id). Every check
# looks for repeats among all rows, and checks that the worker id inside each ID names the node
# that made it (a column filled by the same INSERT on the same node):
#   - a node outside a cluster refuses (55000) with what to do;
#   - a distributed table written at once by single-row INSERTs, multi-row INSERTs and COPY
#     through the coordinator, INSERT ... SELECT through each worker (MX), and INSERT ... SELECT
#     that Citus pushes down into the shards (the default evaluated there);
#   - decoding, filtering and grouping by an ID's worker and time in distributed queries; a free
#     created_at there: the shards read their key index, the rows (and an UPDATE's) those of the
#     condition nothing is derived from, local times (::date, AT TIME ZONE, date_trunc) too;
#   - a reference table with a Snowflake key written from all three nodes;
#   - a segment type on every node, split by delta/remainder from the group id in one command;
#   - a worker restarted with its clock 30 s back; a worker killed with kill -9 mid-load;
#   - a third worker added with citus_add_node while writes go on: its own worker id, also in a
#     transaction on it whose snapshot is older than the add;
#   - docs/citus.md's SQL, as written but for the addresses, in a database of its own.
# Skipped (exit 77, counted as skipped), saying why, without Citus's source in IDGEN_VENDOR_DIR or
# on PostgreSQL 18.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
source "$REPO/tests/helpers/citus.sh"
citus_ensure || exit 77
C=$(port 0)
W1=$(port 1)
W2=$(port 2)
W3=$(port 3)
CLOCK="$WORK/citus_w1.faketime"
echo "+0" | as_pg tee "$CLOCK" >/dev/null
setclock() { echo "$1" | as_pg tee "$CLOCK" >/dev/null; }
conf=("shared_preload_libraries = 'citus,pg_idgen'" "idgen.worker_id_source = citus" "max_connections = 300")
cluster_init citus_c $C "${conf[@]}"
cluster_init citus_w1 $W1 "${conf[@]}"
cluster_init citus_w2 $W2 "${conf[@]}"
cluster_init citus_w3 $W3 "${conf[@]}"
cluster_start citus_c
cluster_start_faketime citus_w1 "$CLOCK"
cluster_start citus_w2
cluster_start citus_w3
trap 'for n in citus_c citus_w1 citus_w2 citus_w3; do cluster_stop $n immediate; done' EXIT
for p in $C $W1 $W2 $W3; do q $p "CREATE EXTENSION citus; CREATE EXTENSION pg_idgen" >/dev/null; done
sqlstate() { psql -h 127.0.0.1 -p "$1" -U postgres -X -q -A -t -c "\set VERBOSITY verbose" -c "$2" 2>&1 || true; }
# Runs SQL in the background as one session; its exit status lands in $WORK/citus_bg/NAME.
mkdir -p "$WORK/citus_bg" && rm -f "$WORK/citus_bg"/*
bg() { # bg NAME PORT SQL-or-@FILE
  local name=$1 port=$2 sql=$3
  (
    if [[ $sql == @* ]]; then
      psql -h 127.0.0.1 -p "$port" -U postgres -X -q -v ON_ERROR_STOP=1 -f "${sql#@}" >/dev/null 2>"$WORK/citus_bg/$name.err"
    else
      psql -h 127.0.0.1 -p "$port" -U postgres -X -q -v ON_ERROR_STOP=1 -c "$sql" >/dev/null 2>"$WORK/citus_bg/$name.err"
    fi
    echo $? >"$WORK/citus_bg/$name"
  ) &
}
bg_failed() { # the sessions that did not exit 0, with their first error
  local f
  for f in "$WORK/citus_bg"/*; do
    [[ $f == *.err ]] && continue
    [ "$(cat "$f")" = 0 ] || echo "$(basename "$f"): $(head -1 "$f.err")"
  done
}

phase "a node outside a cluster"
check "a worker not yet added refuses with 55000" grep -q "55000: this node is not part of a Citus cluster" <<<"$(sqlstate $W1 "SELECT snowflake_next()")"
check "the coordinator before it knows it is one refuses too" grep -q "55000: this node is not part of a Citus cluster" <<<"$(sqlstate $C "SELECT snowflake_next()")"
check "idgen.worker_status says why" eq "$(q $W1 "SELECT source || ' ' || state || ' ' || (last_error LIKE 'this node is not part of a Citus cluster%') FROM idgen.worker_status")" "citus no group true"
q $C "SELECT citus_set_coordinator_host('127.0.0.1', $C)" >/dev/null
q $C "SELECT citus_add_node('127.0.0.1', $W1); SELECT citus_add_node('127.0.0.1', $W2)" >/dev/null
check "coordinator, workers: worker ids 0, 1, 2 (their Citus group ids), with no setting" eq \
  "$(for p in $C $W1 $W2; do q $p "SELECT id_worker_id(snowflake_next()) || '/' || worker_id FROM idgen.status"; done | tr '\n' ' ')" "0/0 1/1 2/2 "

q $C "CREATE FUNCTION node_group() RETURNS int LANGUAGE sql STABLE
        AS 'SELECT groupid FROM pg_catalog.pg_dist_local_group';
      CREATE TABLE ev (id bigint DEFAULT snowflake_next(), node int DEFAULT node_group(), how text, v int);
      SELECT create_distributed_table('ev', 'v');
      CREATE TABLE ref (id bigint PRIMARY KEY DEFAULT snowflake_next(), node int DEFAULT node_group(), v int);
      SELECT create_reference_table('ref');
      INSERT INTO ev (how, v) SELECT 'seed', g FROM generate_series(1, 5000) g" >/dev/null

phase "a distributed table, written every way at once"
single="$WORK/citus_single.sql"
multi="$WORK/citus_multi.sql"
for i in $(seq 1 300); do echo "INSERT INTO ev (how, v) VALUES ('single', $i);"; done >"$single"
for i in $(seq 1 20); do
  echo "INSERT INTO ev (how, v) VALUES $(seq -s, 1 500 | sed "s/\([0-9]*\)/('multi', \1)/g");"
done >"$multi"
copy() { seq 1 20000 | sed 's/^/copy\t/' | psql -h 127.0.0.1 -p $C -U postgres -X -q -v ON_ERROR_STOP=1 -c "COPY ev (how, v) FROM STDIN"; }
for s in 1 2 3 4; do bg single$s $C "@$single"; done
for s in 1 2; do bg multi$s $C "@$multi"; done
for s in 1 2; do bg mx_w1_$s $W1 "INSERT INTO ev (how, v) SELECT 'mx', g FROM generate_series(1, 10000) g"; done
for s in 1 2; do bg mx_w2_$s $W2 "INSERT INTO ev (how, v) SELECT 'mx', g FROM generate_series(1, 10000) g"; done
for s in 1 2; do bg push$s $C "INSERT INTO ev (how, v) SELECT 'push', v FROM ev WHERE how = 'seed'"; done
copy & c1=$!
copy & c2=$!
copy_status=0
wait $c1 || copy_status=1
wait $c2 || copy_status=1
wait
check "14 sessions and 2 COPYs all succeeded" eq "$(bg_failed)$copy_status" "0"
counts=$(q $C "SELECT string_agg(how || ' ' || n, ', ' ORDER BY how) FROM (SELECT how, count(*) n FROM ev GROUP BY how) x")
echo "    rows: $counts"
check "rows as written: 1,200 single, 20,000 multi, 40,000 COPY, 40,000 MX, 10,000 pushed down" eq "$counts" \
  "copy 40000, multi 20000, mx 40000, push 10000, seed 5000, single 1200"
check "no ID repeats among the 116,200 rows" eq "$(q $C "SELECT count(*) - count(DISTINCT id) FROM ev")" 0
check "the worker id inside every ID names the node that made it" eq \
  "$(q $C "SELECT count(*) FROM ev WHERE id_worker_id(id, 'pg_idgen') IS DISTINCT FROM node")" 0
check "through the coordinator: worker id 0; MX and pushed down: both workers" eq "$(q $C "
  SELECT string_agg(how || ':' || ids, ' ' ORDER BY how)
    FROM (SELECT how, string_agg(DISTINCT id_worker_id(id, 'pg_idgen')::text, ',') ids FROM ev GROUP BY how) x")" \
  "copy:0 multi:0 mx:1,2 push:1,2 seed:0 single:0"

phase "decoding in distributed queries"
check "id_decode with the node's layout (STABLE) in a scalar subquery is what Citus cannot push down" grep -q "cannot push down this subquery" \
  <<<"$(sqlstate $C "SELECT count(*) FROM ev WHERE (SELECT worker_id FROM id_decode(id)) = 1")"
check "the same with a named layout (IMMUTABLE) is pushed down: rows of worker 1" eq \
  "$(q $C "SELECT count(*) FROM ev WHERE (SELECT worker_id FROM id_decode(id, 'pg_idgen')) = 1")" \
  "$(q $C "SELECT count(*) FROM ev WHERE node = 1")"
check "GROUP BY id_worker_id(id, layout) agrees with the node column" eq \
  "$(q $C "SELECT string_agg(w || ':' || n, ' ' ORDER BY w) FROM (SELECT id_worker_id(id, 'pg_idgen') w, count(*) n FROM ev GROUP BY 1) x")" \
  "$(q $C "SELECT string_agg(w || ':' || n, ' ' ORDER BY w) FROM (SELECT node w, count(*) n FROM ev GROUP BY 1) x")"
check "GROUP BY the hour inside the ID (id_timestamp with a layout) covers every row" eq \
  "$(q $C "SELECT sum(n) FROM (SELECT date_trunc('hour', id_timestamp(id, 'pg_idgen')) h, count(*) n FROM ev GROUP BY 1) x")" 116200
check "WHERE id >= id_from_timestamp(now() - 1 hour) finds every row" eq \
  "$(q $C "SELECT count(*) FROM ev WHERE id >= id_from_timestamp(now() - interval '1 hour')")" 116200

# A free created_at (docs/snowflake.md): a condition on the time inside the key reaches the shards
# with the key range it implies beside it, so each shard reads its index on the key. The rows are
# those of the same condition written so that nothing is derived from it (IS TRUE hides it), at a
# cut through the middle of the rows.
phase "a query by the time inside a key, distributed"
q $C "CREATE INDEX ev_id ON ev (id)" >/dev/null
q $C "ANALYZE ev" >/dev/null
plan=$(q $C "EXPLAIN (COSTS OFF) SELECT count(*) FROM ev WHERE id_timestamp(id) >= now() + interval '1 hour'")
# once: the coordinator's hook adds the range, and the shard's, seeing it there, adds it no more
reads_key_index_once() {
  [ "$(grep "Index Cond: (id >= " <<<"$1" | grep -o id_time_lower | wc -l)" = 1 ] ||
    { echo "$1" | sed 's/^/    /' >&2; return 1; }
}
check "id_timestamp(id) >= now() + 1 hour: the shards read their index on the key, by the range added once" \
  reads_key_index_once "$plan"
cut=$(q $C "SELECT id_timestamp(id, 'pg_idgen') FROM ev ORDER BY id OFFSET 50000 LIMIT 1")
by_time=$(q $C "SELECT count(*) FROM ev WHERE id_timestamp(id, 'pg_idgen') < '$cut'")
check "id_timestamp(id, layout) < a cut through the rows: the same rows as the condition nothing is derived from" eq \
  "$by_time" "$(q $C "SELECT count(*) FROM ev WHERE (id_timestamp(id, 'pg_idgen') < '$cut') IS TRUE")"
check "... and the cut has rows on both sides" eq "$(( by_time > 0 && by_time < 116200 ))" 1
naive_cut="SET TimeZone = 'Asia/Kathmandu'; SELECT count(*) FROM ev WHERE id_timestamp(id, 'pg_idgen') < ('$cut'::timestamptz)::timestamp"
check "the cut as a timestamp without time zone (what ORMs send), in a zone of odd offset: the same rows; the next hour as one: each shard reads its index" eq \
  "$(q $C "$naive_cut")|$(q $C "$(sed 's/^\(.*\) WHERE \(.*\)$/\1 WHERE (\2) IS TRUE/' <<<"$naive_cut")")|$(q $C "SET TimeZone = 'Asia/Kathmandu'; EXPLAIN (COSTS OFF) SELECT count(*) FROM ev WHERE id_timestamp(id, 'pg_idgen') >= localtimestamp + interval '1 hour'" | grep -c "Index Cond: (id >= ")" \
  "$by_time|$by_time|1"
# Local times of the key's time (::date, AT TIME ZONE, date_trunc), and an UPDATE: the same rows
# as the condition nothing is derived from, each read through the shards' key index where a
# range is added (and the kept condition's within_range() runs on the workers).
for c in "date_trunc('second', id_timestamp(id, 'pg_idgen')) <= date_trunc('second', '$cut'::timestamptz)" \
         "id_timestamp(id, 'pg_idgen') AT TIME ZONE 'UTC' < '$cut'::timestamptz AT TIME ZONE 'UTC'" \
         "date_trunc('second', id_timestamp(id, 'pg_idgen') AT TIME ZONE 'Asia/Kathmandu') > date_trunc('second', '$cut'::timestamptz AT TIME ZONE 'Asia/Kathmandu')" \
         "id_timestamp(id, 'pg_idgen')::date = ('$cut'::timestamptz)::date" \
         "id_timestamp(id, 'pg_idgen')::date < ('$cut'::timestamptz)::date"; do
  check "distributed, $c: the same rows as the condition nothing is derived from" eq \
    "$(q $C "SELECT count(*) FROM ev WHERE $c")" "$(q $C "SELECT count(*) FROM ev WHERE ($c) IS TRUE")"
done
check "... and the shards read their key index for a local time, its comparison kept (date_trunc('second', ...) >= the cut)" eq \
  "$(q $C "EXPLAIN (COSTS OFF) SELECT count(*) FROM ev WHERE date_trunc('second', id_timestamp(id, 'pg_idgen')) >= date_trunc('second', now() + interval '1 hour')" | grep -c "Index Cond: (id >= .*time_trunc_lower")" 1
update_by() { q $C "BEGIN; WITH u AS (UPDATE ev SET how = how WHERE $1 RETURNING 1) SELECT count(*) FROM u; ROLLBACK" | grep -E '^[0-9]+$'; }
check "distributed UPDATE ... WHERE id_timestamp(id) < the cut: the same rows changed" eq \
  "$(update_by "id_timestamp(id, 'pg_idgen') < '$cut'")" "$(update_by "(id_timestamp(id, 'pg_idgen') < '$cut') IS TRUE")"

phase "a reference table from every node"
for p in $C $W1 $W2; do for s in 1 2; do bg ref_${p}_$s $p "INSERT INTO ref (v) SELECT g FROM generate_series(1, 2000) g"; done; done
wait
check "6 sessions on 3 nodes succeeded (the primary key would refuse a repeat)" eq "$(bg_failed)" ""
check "12,000 rows, distinct, each ID's worker id names its node" eq \
  "$(q $C "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || count(*) FILTER (WHERE id_worker_id(id, 'pg_idgen') <> node) FROM ref")" "12000 12000 0"

phase "a segment type on every node"
q $C "SELECT run_command_on_all_nodes(\$\$SELECT idgen.segment_create('order', step => 500, delta => 16,
        remainder => (SELECT groupid FROM pg_catalog.pg_dist_local_group)::int)\$\$)" >/dev/null
q $C "CREATE TABLE segs (id bigint DEFAULT segment_next('order'), node int DEFAULT node_group(), v int);
      SELECT create_distributed_table('segs', 'v')" >/dev/null
for p in $C $W1 $W2; do for s in 1 2; do bg seg_${p}_$s $p "INSERT INTO segs (v) SELECT g FROM generate_series(1, 5000) g"; done; done
wait
bg seg_push $C "INSERT INTO segs (v) SELECT v FROM segs"
wait
check "segment sessions succeeded" eq "$(bg_failed)" ""
check "60,000 segment IDs from 3 nodes, none repeated, each = its node's group (mod 16)" eq \
  "$(q $C "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || count(*) FILTER (WHERE id % 16 <> node) FROM segs")" "60000 60000 0"

phase "a worker restarted with its clock 30 s back"
before_w1=$(q $C "SELECT max(id) FROM ev WHERE node = 1")
cluster_stop citus_w1 fast
setclock "-30s"
cluster_start_faketime citus_w1 "$CLOCK"
wait_ready $W1
q $W1 "INSERT INTO ev (how, v) SELECT 'w1_behind', g FROM generate_series(1, 10000) g"
check "its IDs go on above all its earlier ones" eq "$(q $C "SELECT min(id) > $before_w1 FROM ev WHERE how = 'w1_behind'")" t
check "and carry its worker id" eq "$(q $C "SELECT string_agg(DISTINCT id_worker_id(id, 'pg_idgen')::text, ',') FROM ev WHERE how = 'w1_behind'")" 1
setclock "+0"

phase "a worker killed with kill -9 mid-load"
bg dying $W2 "INSERT INTO ev (how, v) SELECT 'dying', g FROM generate_series(1, 50000000) g"
bg live_c $C "INSERT INTO ev (how, v) SELECT 'during_kill', g FROM generate_series(1, 20000) g"
sleep 3
before_w2=$(q $C "SELECT max(id) FROM ev WHERE node = 2")
kill_server citus_w2
wait
cluster_start citus_w2
wait_ready $W2
q $W2 "INSERT INTO ev (how, v) SELECT 'after_kill', g FROM generate_series(1, 10000) g"
check "after kill -9 its IDs go on above all its earlier ones" eq "$(q $C "SELECT min(id) > $before_w2 FROM ev WHERE how = 'after_kill'")" t
rm -f "$WORK/citus_bg"/*

phase "a third worker added while writes go on"
check "before it is added, it refuses" grep -q "55000: this node is not part of a Citus cluster" <<<"$(sqlstate $W3 "SELECT snowflake_next()")"
# A session on the new worker whose snapshot is older than the add: it must still see its group
# (pg_idgen reads it under the latest snapshot), not the 0 its snapshot shows.
psql -h 127.0.0.1 -p $W3 -U postgres -X -q -A -t -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT 1" \
  -c "SELECT pg_sleep(3)" -c "SELECT 'worker ' || id_worker_id(snowflake_next())" -c "COMMIT" >"$WORK/citus_old_snapshot.out" 2>&1 &
for s in 1 2; do bg during_add_c$s $C "INSERT INTO ev (how, v) SELECT 'during_add', g FROM generate_series(1, 200000) g"; done
bg during_add_w1 $W1 "INSERT INTO ev (how, v) SELECT 'during_add', g FROM generate_series(1, 200000) g"
sleep 0.5
q $C "SELECT citus_add_node('127.0.0.1', $W3)" >/dev/null
q $W3 "INSERT INTO ev (how, v) SELECT 'w3', g FROM generate_series(1, 10000) g"
wait
check "the writes during the add all succeeded" eq "$(bg_failed)" ""
w3_group=$(q $W3 "SELECT groupid FROM pg_dist_local_group")
check "the new worker has a group of its own (3)" eq "$w3_group" 3
check "a transaction whose snapshot predates the add makes IDs with the new group" grep -qx "worker 3" "$WORK/citus_old_snapshot.out"
check "its IDs carry worker id 3" eq "$(q $C "SELECT string_agg(DISTINCT id_worker_id(id, 'pg_idgen')::text, ',') || ' ' || count(*) FROM ev WHERE how = 'w3'")" "3 10000"

phase "all rows"
total=$(q $C "SELECT count(*) FROM ev")
echo "    $total rows in ev"
check "no ID repeats across every phase ($total rows)" eq "$(q $C "SELECT count(*) - count(DISTINCT id) FROM ev")" 0
check "the worker id inside every ID names its node" eq \
  "$(q $C "SELECT count(*) FROM ev WHERE id_worker_id(id, 'pg_idgen') IS DISTINCT FROM node")" 0

# docs/citus.md's SQL, as written but for the nodes' addresses, in a database of its own on the
# coordinator and the first two workers (tools/doctest.py --blocks gives its three blocks: every
# node, the coordinator, the split of a segment type).
phase "docs/citus.md's examples"
blocks="$WORK/citus_doc_blocks"
rm -rf "$blocks" && mkdir -p "$blocks"
python3 "$REPO/tools/doctest.py" --blocks "$REPO/docs/citus.md" |
  awk -v dir="$blocks" '/^-- doctest block [0-9]+ /{f = dir "/" $4 ".sql"; next} {print > f}'
sed -i "s/'coord.internal', 5432/'127.0.0.1', $C/; s/'worker-1.internal', 5432/'127.0.0.1', $W1/;
        s/'worker-2.internal', 5432/'127.0.0.1', $W2/" "$blocks/1.sql"
doc_sql() { psql -h 127.0.0.1 -p "$1" -U postgres -d citus_docs -X -q -A -t -v ON_ERROR_STOP=1 -f "$2" 2>&1; }
for p in $C $W1 $W2; do q $p "CREATE DATABASE citus_docs" >/dev/null; done
check "every node: the page's first block" eq "$(for p in $C $W1 $W2; do doc_sql $p "$blocks/0.sql" >/dev/null && echo ok; done | tr -d '\n')" okokok
out=$(doc_sql $C "$blocks/1.sql")
echo "$out" | sed 's/^/    /'
check "the coordinator: the page's second block runs; its 1,000 rows, made through the coordinator, decode to worker id 0" \
  grep -qx "0|1000" <<<"$out"
out=$(doc_sql $C "$blocks/2.sql")
check "the page's segment split: on each node a type whose remainder is its group" eq \
  "$(for p in $C $W1 $W2; do qdb $p citus_docs "SELECT remainder FROM idgen.segments WHERE biz_type = 'order'"; done | tr '\n' ' ')" "0 1 2 "
finish
