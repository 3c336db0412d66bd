#!/usr/bin/env bash
# docs/worker-ids.md's app-server example (examples/app_server.py) against a coordinator: app servers
# that run their own Snowflake generator on a leased worker id.
#   - 4 app servers at once: 4 distinct worker ids, every ID unique, each ID decodes (twitter
#     layout) to its server's worker id;
#   - a server restarted under the same code gets its worker id back;
#   - a server whose lease is taken from it (expired by hand on the coordinator) is told so by
#     its next heartbeat and stops making IDs; the id's next holder starts after its last ID.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
OUT="$WORK/app_server.out"
PY=/usr/bin/python3
APP="$REPO/examples/app_server.py"
cluster_init apps $PORT "idgen.worker_lease_grace = '1s'"
cluster_start apps
trap 'cluster_stop apps immediate' EXIT
rm -rf "$OUT" && mkdir -p "$OUT"
SECONDS=0
q $PORT "CREATE EXTENSION pg_idgen; CREATE TABLE ids (id bigint, app int)"
CONN="host=127.0.0.1 port=$PORT dbname=postgres user=postgres"

for a in 1 2 3 4; do
  $PY "$APP" "$CONN" --code "10.0.0.$a:8080" --ttl 3 --seconds 3 --out "$OUT/ids.$a" >"$OUT/log.$a" 2>&1 &
done
wait
phase "4 app servers done"
for a in 1 2 3 4; do awk -v a=$a '{ print $0 "," a }' "$OUT/ids.$a"; done >"$OUT/all.csv"
q $PORT "COPY ids FROM '$OUT/all.csv' (FORMAT csv)"
check "4 app servers leased 4 distinct worker ids" eq "$(grep -ho 'leased worker id [0-9]*' "$OUT"/log.* | sort -u | wc -l)" 4
check "4 app servers: IDs were made and all are unique" eq \
  "$(q $PORT "SELECT count(*) > 100000 AND count(*) = count(DISTINCT id) FROM ids")" t
check "each ID decodes to its server's worker id" eq \
  "$(q $PORT "SELECT count(DISTINCT (app, d.worker_id)) FROM ids, id_decode(ids.id, 'twitter') d")" 4
check "all 4 leases were released on the way out" eq "$(q $PORT "SELECT count(*) FROM idgen.worker_leases WHERE state = 'released'")" 4

w1=$(grep -o 'leased worker id [0-9]*' "$OUT/log.1" | grep -o '[0-9]*$')
$PY "$APP" "$CONN" --code "10.0.0.1:8080" --ttl 3 --seconds 0.5 >"$OUT/log.1b" 2>&1
check "a restart under the same code gets worker id $w1 back" eq "$(grep -o 'leased worker id [0-9]*' "$OUT/log.1b" | grep -o '[0-9]*$')" "$w1"

phase "a lease taken away"
# A lease taken away while its holder runs.
$PY "$APP" "$CONN" --code "victim" --ttl 1.5 --seconds 20 --min-id 500 --max-id 500 --out "$OUT/victim" >"$OUT/log.victim" 2>&1 &
pid=$!
sleep 1.5
q $PORT "UPDATE idgen.workers SET expires_at = now() - interval '1 h' WHERE code = 'victim'"
t0=$(date +%s%N)
rc=0
wait $pid || rc=$?
stopped=$((($(date +%s%N) - t0) / 1000000))
check "the victim stopped with exit code 1 within its ttl (${stopped} ms)" test $rc -eq 1 -a $stopped -le 1600
check "the victim was told the lease was lost" grep -q "lease lost" "$OUT/log.victim"
heir=""
for i in $(seq 1 100); do # free once the victim's own deadline and the grace have passed
  heir=$(q $PORT "SELECT floor(extract(epoch FROM start_after) * 1000) FROM idgen.worker_acquire('heir', '1 min', 500, 500)" 2>/dev/null) && break
  sleep 0.1
done
q $PORT "TRUNCATE ids; COPY ids (id) FROM '$OUT/victim'"
check "the heir of worker id 500 starts after the victim's last ID" eq \
  "$(q $PORT "SELECT $heir > max(extract(epoch FROM id_timestamp(id, 'twitter')) * 1000) FROM ids")" t
finish
