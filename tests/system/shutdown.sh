#!/usr/bin/env bash
# A fast shutdown (pg_ctl stop, the operator's everyday stop) ends every pg_idgen background
# worker at once, whatever the worker was waiting on when SIGTERM came. A worker that saw the
# signal in one of its waits, gave that wait up and then went on with its loop kept the server
# from stopping until pg_ctl gave up (60 s) and an immediate stop was needed: the CI saw it once in
# tests/system/leases.sh. Each stop below is timed while a worker is inside such a wait:
#   - the lease keeper, connecting to a coordinator that accepts the connection and never answers;
#   - the reservation renewer, waiting for a synchronous standby that is not there.
# (The allocator has no such wait: it locks a type's row with SKIP LOCKED, and its loop is
# the same as theirs, src/pg/worker_loop.rs.)
# Control, run on the build before the fix: both stops failed (pg_ctl: server does not shut down,
# after 60 s).
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
MUTE=$(port 0)
NODE=$(port 1)
trap 'kill "$mute" 2>/dev/null || true; cluster_stop sd_lease immediate; cluster_stop sd_node immediate' EXIT

# stopped_within NAME SECONDS: a fast stop of NAME ends within SECONDS (pg_ctl waits at most 60;
# a server still up then is stopped the hard way, for the next scenario).
stopped_within() {
  local t0=$SECONDS
  cluster_stop "$1" && [ $((SECONDS - t0)) -lt "$2" ] && return 0
  cluster_stop "$1" immediate
  return 1
}

# A coordinator that takes the connection and says nothing: the keeper waits in its connect.
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64)
held = []
while True:
    held.append(s.accept()[0])
' $MUTE &
mute=$!
cluster_init sd_lease $NODE "idgen.worker_id_source = lease" \
  "idgen.worker_lease_conninfo = 'host=127.0.0.1 port=$MUTE dbname=postgres connect_timeout=30'"
cluster_start sd_lease
# The keeper starts with the server and connects at once; give it a second to be in that wait.
sleep 1
check "a fast stop while the lease keeper waits on a coordinator that never answers ends in < 10 s" \
  stopped_within sd_lease 10
kill "$mute" 2>/dev/null || true

# A synchronous standby that is not there: the renewer's write of the mark waits for it, as a
# commit would (a caller's own reservation is cancellable; the worker's wait ends at shutdown).
cluster_init sd_node $NODE "idgen.worker_id = 1" "idgen.reserve_window = '200ms'" \
  "idgen.reserve_idle = '1min'"
cluster_start sd_node
q $NODE "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint); INSERT INTO t SELECT snowflake_next()" >/dev/null
sleep 0.5
ahead="SELECT reserved_until > now() FROM idgen.streams WHERE stream = 'snowflake'"
check "idle, the renewer keeps the stream's reservation ahead of the clock" eq "$(q $NODE "$ahead")" t
q $NODE "ALTER SYSTEM SET synchronous_standby_names = 'nobody'"
q $NODE "SELECT pg_reload_conf()" >/dev/null
sleep 1.5
# Waiting: the new mark's WAL record is written, but the reservation moves only once a standby
# has confirmed it.
check "with a synchronous standby named that is not there, the renewer waits: the reservation falls behind the clock" \
  eq "$(q $NODE "$ahead")" f
check "a fast stop while the reservation renewer waits for a missing synchronous standby ends in < 10 s" \
  stopped_within sd_node 10
check "... and the renewer said why it stopped waiting" grep -q \
  "could not renew the Snowflake reservation: the server is shutting down" "$(cluster_dir sd_node)/server.log"

finish
