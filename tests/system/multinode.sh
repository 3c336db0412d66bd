#!/usr/bin/env bash
# docs/guarantees.md, guarantee 7 across real clusters, merged by PostgreSQL's own logical replication:
#   - node A takes its worker id from the setting (1023); nodes B and C lease theirs from a
#     coordinator cluster (range 0..1000); all three write rows with DEFAULT snowflake_next()
#     into the same table, 4 sessions each, and an aggregator subscribes to all three: every row
#     arrives, no key conflicts, and id_decode() names each row's origin node;
#   - segments with delta 3 and remainders 0, 1, 2 on the three nodes, merged the same way,
#     never overlap;
#   - the coordinator is stopped: B and C go on within their lease, then stop with a clean
#     ERROR; once it is back they lease again and go on, still without a repeat;
#   - B is killed (immediate stop, no release): its worker id goes to the next holder only after
#     ttl + grace, and that holder starts after B's last ID;
#   - the time a node takes to get its lease at start.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
COORD=$(port 0)
A=$(port 1)
B=$(port 2)
C=$(port 3)
AGG=$(port 4)
TTL_S=3
SECONDS=0
trap 'for n in mn_a mn_b mn_c mn_agg mn_coord; do cluster_stop $n immediate; done' EXIT

cluster_init mn_coord $COORD "idgen.worker_lease_grace = '1s'"
cluster_start mn_coord
q $COORD "CREATE EXTENSION pg_idgen"
lease_conf=(
  "idgen.worker_id_source = lease"
  "idgen.worker_lease_conninfo = 'host=127.0.0.1 port=$COORD dbname=postgres user=postgres'"
  "idgen.worker_lease_ttl = '${TTL_S}s'"
  "idgen.worker_lease_max = 1000"
)
cluster_init mn_a $A "wal_level = logical" "idgen.worker_id = 1023"
cluster_init mn_b $B "wal_level = logical" "${lease_conf[@]}"
cluster_init mn_c $C "wal_level = logical" "${lease_conf[@]}"
cluster_init mn_agg $AGG
for n in mn_a mn_b mn_c mn_agg; do cluster_start $n; done

# How long a node takes to get its lease once it accepts connections.
wait_for_lease() { # PORT -> prints milliseconds until snowflake_next() works
  local t0 t1
  t0=$(date +%s%N)
  local i
  for i in $(seq 1 3000); do q "$1" "SELECT snowflake_next()" >/dev/null 2>&1 && break; sleep 0.01; done
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}
SCHEMA="CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), origin text NOT NULL, phase int NOT NULL);
        CREATE TABLE s (id bigint PRIMARY KEY, origin text NOT NULL);"
for p in $A $B $C $AGG; do q $p "CREATE EXTENSION pg_idgen; $SCHEMA"; done
for p in $B $C; do
  ms=$(wait_for_lease $p)
  phase "node on port $p: its keeper had the lease $(q $p "SELECT first_lease_ms FROM idgen.worker_status") ms after it started"
done
WB=$(q $B "SELECT worker_id FROM idgen.worker_status")
WC=$(q $C "SELECT worker_id FROM idgen.worker_status")
check "B and C leased distinct worker ids in 0..1000 ($WB, $WC)" test "$WB" != "$WC" -a "$WB" -le 1000 -a "$WC" -le 1000
check "the coordinator shows both leases held" eq "$(q $COORD "SELECT count(*) FROM idgen.worker_leases WHERE state = 'held'")" 2
check "idgen.status names the lease as B's worker id source" eq \
  "$(q $B "SELECT worker_id = $WB AND worker_id_source LIKE 'lease from coordinator%' FROM idgen.status")" t

for p in $A $B $C; do q $p "CREATE PUBLICATION pub FOR TABLE t, s"; done
for n in a:$A b:$B c:$C; do
  PGOPTIONS="-c client_min_messages=warning" q $AGG "CREATE SUBSCRIPTION sub_${n%%:*} CONNECTION 'host=127.0.0.1 port=${n##*:} dbname=postgres user=postgres' PUBLICATION pub"
done

phase "three nodes write at once"
for n in a:$A b:$B c:$C; do
  for s in 1 2 3 4; do
    q ${n##*:} "INSERT INTO t (origin, phase) SELECT '${n%%:*}', 1 FROM generate_series(1, 25000)" &
  done
done
q $A "SELECT idgen.segment_create('order', delta => 3, remainder => 0)" >/dev/null
q $B "SELECT idgen.segment_create('order', delta => 3, remainder => 1)" >/dev/null
q $C "SELECT idgen.segment_create('order', delta => 3, remainder => 2)" >/dev/null
for n in a:$A b:$B c:$C; do
  q ${n##*:} "INSERT INTO s SELECT segment_next('order'), '${n%%:*}' FROM generate_series(1, 50000)" &
done
wait

wait_rows() { # SQL EXPECTED: polls the aggregator for up to 90 s
  local i
  for i in $(seq 1 900); do
    [ "$(q $AGG "$1")" = "$2" ] && return 0
    sleep 0.1
  done
  return 1
}
check "aggregator: all 300,000 rows arrived" wait_rows "SELECT count(*) FROM t" 300000
check "aggregator: all 150,000 segment IDs arrived" wait_rows "SELECT count(*) FROM s" 150000
check "aggregator: no apply conflict in its log" eq "$(grep -c 'duplicate key\|conflict' "$(cluster_dir mn_agg)/server.log")" 0
check "aggregator: id_decode names each row's origin (A 1023, B $WB, C $WC)" eq \
  "$(q $AGG "SELECT count(*) FROM t, id_decode(t.id) d WHERE d.worker_id <> CASE origin WHEN 'a' THEN 1023 WHEN 'b' THEN $WB ELSE $WC END")" 0
check "aggregator: 100,000 rows per origin" eq "$(q $AGG "SELECT string_agg(origin || count, ',' ORDER BY origin) FROM (SELECT origin, count(*) FROM t GROUP BY 1) x")" "a100000,b100000,c100000"
check "segments: each node's IDs are its remainder mod 3" eq \
  "$(q $AGG "SELECT count(*) FROM s WHERE id % 3 <> CASE origin WHEN 'a' THEN 0 WHEN 'b' THEN 1 ELSE 2 END")" 0

phase "the coordinator stops"
# (An immediate stop: a fast one waits for a checkpoint, which on a loaded machine can take
# longer than what is left of B's lease, and the next check would then test nothing.)
cluster_stop mn_coord immediate
t_stop=$(date +%s%N)
check "B goes on within its lease" q $B "INSERT INTO t (origin, phase) SELECT 'b', 2 FROM generate_series(1, 1000)"
# B's last heartbeat was before the stop, so its lease covers at most a ttl after it: no statement
# started later may make an ID. The first refusal comes a poll later (bounded: a node that never
# stops fails the check, it does not hang the suite).
read -r last_ok refused < <(until_refused "$t_stop" $B "INSERT INTO t (origin, phase) VALUES ('b', 2)")
check "B made no ID more than a ttl after the coordinator's stop (the last started ${last_ok} ms after it)" \
  test "$last_ok" -le $((TTL_S * 1000))
check "B stops within a ttl, give or take the polling (refused ${refused} ms after the stop)" \
  test "$refused" -le $((TTL_S * 1000 + 2000))
err=$(q $B "SELECT snowflake_next()" 2>&1 || true)
check "B's ERROR says the lease lapsed" eq "$(echo "$err" | grep -c 'the lease of worker id [0-9]* has lapsed')" 1
for i in $(seq 1 200); do q $C "SELECT snowflake_next()" >/dev/null 2>&1 || break; sleep 0.05; done
check "C refuses too, and both servers stay up" eq "$(q $C "SELECT state, can_generate FROM idgen.worker_status")|$(q $B "SELECT 1")" "lapsed|f|1"
check "A (worker id from the setting) goes on" q $A "INSERT INTO t (origin, phase) SELECT 'a', 2 FROM generate_series(1, 1000)"

phase "the coordinator is back"
cluster_start mn_coord
wait_for_lease $B >/dev/null
wait_for_lease $C >/dev/null
WB2=$(q $B "SELECT worker_id FROM idgen.worker_status")
WC2=$(q $C "SELECT worker_id FROM idgen.worker_status")
check "B and C hold distinct leases again ($WB2, $WC2)" test "$WB2" != "$WC2"
for n in b:$B c:$C; do q ${n##*:} "INSERT INTO t (origin, phase) SELECT '${n%%:*}', 3 FROM generate_series(1, 20000)" & done
wait
check "aggregator: every row of every phase arrived, no conflicts" wait_rows "SELECT count(*) = count(DISTINCT id) AND count(*) > 300000 + 40000 FROM t" t

phase "B is killed without a release"
last_b=$(q $B "SELECT max(id) FROM t")
cluster_stop mn_b immediate
got=""
t_kill=$(date +%s%N)
for i in $(seq 1 300); do
  [ -n "$got" ] && break
  got=$(q $COORD "SELECT start_after FROM idgen.worker_acquire('heir', '1 min', $WB2, $WB2)" 2>/dev/null || true)
  [ -z "$got" ] && sleep 0.1
done
waited=$((($(date +%s%N) - t_kill) / 1000000))
check "B's worker id went to the heir only after B's lease and the grace ran out (${waited} ms)" test $waited -ge $((TTL_S * 1000 - 1000))
check "the heir starts after B's last ID" eq "$(q $A "SELECT '$got'::timestamptz > id_timestamp($last_b)")" t
check "no node logged a crash" eq "$(cat "$WORK"/mn_*/server.log | grep -c 'PANIC\|terminated by signal')" 0
finish
