#!/usr/bin/env bash
# Clock steps on a node in lease mode (docs/guarantees.md, guarantees 2 and 7 together). How long a lease stays
# valid is measured on CLOCK_BOOTTIME, which a step of the wall clock does not move (libfaketime
# runs with FAKETIME_DONT_FAKE_MONOTONIC=1, as a real NTP step behaves):
#   - the node's wall clock steps back 5 s, then forward 2 s: IDs go on above all earlier ones,
#     and the lease stays held and is renewed;
#   - 10 s ahead of the coordinator's clock, more than the 3 s ttl: the lease is still held and
#     renewed, but IDs are refused (the next holder's start_after would not cover them), not made;
#   - the coordinator stops and, at the same moment, the node's wall clock steps back 20 s: the
#     node still stops making IDs within its ttl, with a clear ERROR;
#   - the coordinator comes back: the node leases again and its IDs go on above all earlier ones.
# (Control, run by hand: with the lease clock switched to CLOCK_REALTIME in lease/mod.rs, the
# 10 s step ahead makes the lease look expired, and after the 20 s step back the node goes on
# making IDs for 20 s with the coordinator gone: 5 checks failed. Until the lease ceiling, the node
# went on making IDs 10 s ahead, beyond what its successor's start_after covers.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
COORD=$(port 1)
TTL_S=3
CLOCK="$WORK/lease_clock.faketime"
setclock() { echo "$1" | as_pg tee "$CLOCK" >/dev/null; }
setclock "+0"
trap 'cluster_stop lc_node immediate; cluster_stop lc_coord immediate' EXIT
cluster_init lc_coord $COORD "idgen.worker_lease_grace = '1s'"
cluster_start lc_coord
q $COORD "CREATE EXTENSION pg_idgen"
cluster_init lc_node $PORT "idgen.max_drift = '5min'" \
  "idgen.worker_id_source = lease" "idgen.worker_lease_ttl = '${TTL_S}s'" \
  "idgen.worker_lease_conninfo = 'host=127.0.0.1 port=$COORD dbname=postgres user=postgres'"
cluster_start lc_node LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$CLOCK" FAKETIME_NO_CACHE=1 \
  FAKETIME_DONT_FAKE_MONOTONIC=1
wait_lease() {
  local i
  for i in $(seq 1 500); do q $PORT "SELECT snowflake_next()" >/dev/null 2>&1 && return 0; sleep 0.02; done
  return 1
}
q $PORT "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint PRIMARY KEY, phase text)"
check "the node leased a worker id" wait_lease
take() { # (the WARNING of a step back is expected here; it is checked in clock_and_crash.sh)
  q $PORT "SET client_min_messages = error; INSERT INTO t SELECT snowflake_next(), '$1' FROM generate_series(1, 20000)"
}
above() { q $PORT "SELECT (SELECT min(id) FROM t WHERE phase = '$1') > (SELECT max(id) FROM t WHERE phase < '$1')"; }
take a
step() { # step OFFSET WHAT PHASE: move the node's wall clock, then check IDs and the lease
  local r0
  setclock "$1"
  check "wall clock $2: the node goes on making IDs" take "$3"
  check "wall clock $2: IDs go on above the earlier ones" eq "$(above "$3")" t
  r0=$(q $PORT "SELECT renewals FROM idgen.worker_status")
  sleep $((TTL_S + 1))
  check "wall clock $2: the lease is still held and was renewed" eq \
    "$(q $PORT "SELECT state, can_generate, renewals > $r0 FROM idgen.worker_status")" "leased|t|t"
}
step "-5s" "5 s back" b
setclock "+10s"
r0=$(q $PORT "SELECT renewals FROM idgen.worker_status")
check "wall clock 10 s ahead of the coordinator's: IDs are refused, with why" \
  grep -q "later than this node's worker-id lease covers" <<<"$(q $PORT "SELECT snowflake_next()" 2>&1 || true)"
sleep $((TTL_S + 1))
check "wall clock 10 s ahead: the lease is still held and renewed, IDs still refused" eq \
  "$(q $PORT "SELECT state, renewals > $r0 FROM idgen.worker_status")|$(q $PORT "SELECT snowflake_next()" 2>&1 | grep -c 'later than this node')" "leased|t|1"
step "+2s" "2 s ahead" c

# The coordinator stops and the node's wall clock steps 20 s back at the same moment.
# Its last heartbeat was before the stop: no statement started more than a ttl later may make an
# ID (with the lease timed on the wall clock, it would go on for 20 s more).
cluster_stop lc_coord immediate
setclock "-20s"
read -r last_ok refused < <(until_refused "$(date +%s%N)" $PORT "INSERT INTO t SELECT snowflake_next(), 'd'")
check "coordinator gone, wall clock 20 s back: no ID more than a ttl later (the last started ${last_ok} ms after)" \
  test "$last_ok" -le $((TTL_S * 1000))
check "... and it stops within a ttl, give or take the polling (refused after ${refused} ms)" \
  test "$refused" -le $((TTL_S * 1000 + 2000))
check "... with an ERROR saying the lease lapsed" grep -q 'the lease of worker id [0-9]* has lapsed' \
  <<<"$(q $PORT "SELECT snowflake_next()" 2>&1 || true)"

cluster_start lc_coord
check "the coordinator is back: the node leases again" wait_lease
take e
check "after the new lease: IDs go on above all earlier ones" eq "$(above e)" t
check "no ID repeats" eq "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM t")" 0

finish
