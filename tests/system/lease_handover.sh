#!/usr/bin/env bash
# The one rule across a lease handover (docs/guarantees.md, guarantee 7), when the old holder ran ahead of its
# clock and then stalled. A coordinator and two lease-mode nodes limited to worker id 0, ttl 10 s,
# js_safe layout (256 IDs per ms), correct clocks. Node A leases the id; right after a renewal its
# lease keeper is stopped (SIGSTOP: a stuck process, or a partition from the coordinator). While
# its lease is still valid by its own clock, A serves large batches: the continue policy would let
# its logical clock run up to idgen.max_drift (60 s) ahead. A's lease lapses, B leases the id: every
# ID B makes must be above every ID A made. A lease covers IDs only up to the holder's last
# heartbeat plus the ttl (core::lease::ceiling_ms), which the coordinator's start_after covers.
# (Control, run by hand: with the cap removed from snowflake.rs take(), A's batches run up to
# 58.6 s past the stall and all 20,000 of B's first IDs were IDs A had made: 4 checks fail.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
COORD=$(port 0)
A=$(port 1)
B=$(port 2)
trap 'kill -CONT $keeper 2>/dev/null; cluster_stop lh_a immediate; cluster_stop lh_b immediate; cluster_stop lh_coord immediate' EXIT
keeper=""
cluster_init lh_coord $COORD "idgen.worker_lease_grace = '1s'"
cluster_start lh_coord
q $COORD "CREATE EXTENSION pg_idgen"
node() { # node NAME PORT
  # idgen.worker_id is ignored under a lease: an ID that carried it would show.
  cluster_init "$1" "$2" "idgen.layout = 'js_safe'" "idgen.max_drift = '60s'" "idgen.max_wait = '200ms'" \
    "idgen.worker_id_source = lease" "idgen.worker_lease_ttl = '10s'" "idgen.worker_id = 5" \
    "idgen.worker_lease_min = 0" "idgen.worker_lease_max = 0" \
    "idgen.worker_lease_conninfo = 'host=127.0.0.1 port=$COORD dbname=postgres user=postgres'"
  cluster_start "$1"
  q "$2" "CREATE EXTENSION pg_idgen; CREATE TABLE ids (id bigint, n bigint DEFAULT 1)"
}
wait_lease() { # wait_lease PORT SECONDS
  local i
  for i in $(seq 1 $(($2 * 20))); do
    q "$1" "SELECT snowflake_next()" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  return 1
}
node lh_a $A
check "node A leased worker id 0" wait_lease $A 10
node lh_b $B
check "node B cannot lease it meanwhile" eq "$(q $B "SELECT state, can_generate FROM idgen.worker_status")" "acquiring|f"

# Right after a renewal, A's keeper stalls.
apid=$(head -1 "$(cluster_dir lh_a)/postmaster.pid")
keeper=$(ps -o pid=,args= --ppid "$apid" | awk '/lease keeper/ {print $1}')
r0=$(q $A "SELECT renewals FROM idgen.worker_status")
for _ in $(seq 1 200); do
  [ "$(q $A "SELECT renewals FROM idgen.worker_status")" != "$r0" ] && break
  sleep 0.02
done
kill -STOP "$keeper"
stalled_at=$(date +%s%N)

# A serves large batches, and as many single IDs, for as long as it can (its lease is valid for
# up to 10 s more); each statement's 250,000 IDs are about 1 s of js_safe ticks. Only each
# statement's largest ID is kept.
errors=$(mktemp)
for _ in $(seq 1 30); do
  q $A "INSERT INTO ids SELECT max(id), count(*) FROM snowflake_next_batch(250000) id" 2>>"$errors" || true
  q $A "INSERT INTO ids SELECT max(id), count(*) FROM (SELECT snowflake_next() FROM generate_series(1, 250000)) s(id)" 2>>"$errors" || true
  [ $((($(date +%s%N) - stalled_at) / 1000000)) -gt 11000 ] && break
done
made=$(q $A "SELECT sum(n) FROM ids")
a_max=$(q $A "SELECT max(id) FROM ids")
past=$(q $A "SELECT (extract(epoch FROM id_timestamp($a_max)) * 1000)::int8 - $stalled_at / 1000000")
echo "    A made $made IDs after the stall, the last one timed ${past} ms after the stall"
check "A made IDs while its lease was valid" test "$made" -gt 1000000
check "A never made an ID timed past its last heartbeat + ttl (${past} ms after the stall)" \
  test "$past" -le 10500
check "A was stopped by what its lease covers" \
  grep -q "later than this node's worker-id lease covers" "$errors"

check "B leases worker id 0 once A's lease has lapsed" wait_lease $B 30
q $B "INSERT INTO ids SELECT snowflake_next() FROM generate_series(1, 20000)"
b_min=$(q $B "SELECT min(id) FROM ids")
check "A's and B's IDs carry worker id 0, the lease's" eq "$(q $A "SELECT DISTINCT worker_id FROM ids, id_decode(id)")|$(q $B "SELECT DISTINCT worker_id FROM ids, id_decode(id)")" "0|0"
check "every ID of B is above every ID A made (${b_min} > ${a_max})" test "$b_min" -gt "$a_max"
check "none of B's 20000 IDs was made by A" eq \
  "$(q $B "SELECT count(*) FROM ids WHERE id <= $a_max")" 0
rm -f "$errors"
finish
