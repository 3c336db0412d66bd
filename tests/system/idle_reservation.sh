#!/usr/bin/env bash
# The first ID after a pause without a flush of its own (idgen.reserve_idle, docs/operations.md):
# the reserver keeps a stream's durable mark reserved ahead of the clock for reserve_idle after its
# last ID, so the first ID after a pause finds its tick reserved (no WAL write and flush, no wait
# for a synchronous standby, in the caller). What it must keep:
#   - reserved ahead after 2 s and 4 s without IDs, and lapsed once reserve_idle (6 s) has passed
#     (the idle cost is bounded); control: reserve_idle = 0, lapsed after 2 s;
#   - a restart while idle-reserved: IDs at once, at the right time; kill -9 while idle-reserved:
#     the next IDs are above every earlier one.
# (Not tried here: a wall clock that jumps ahead while the node is idle. The reserver follows only
# the time that has really passed since the last ID, by the monotonic clock; but libfaketime does
# not reach the reserver's process here (its renewals kept to the real clock with the guard taken
# out, the control), so a step of the clock cannot be shown to it.)
# (The model of the mark covers the renewal, crates/core/src/models/mark.rs: its control, a
# renewal that publishes its ticks without their record, repeats an ID.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
trap 'cluster_stop idle immediate' EXIT
start() { cluster_start idle; }
cluster_init idle $P "idgen.worker_id = 1" "idgen.reserve_idle = '6s'" "idgen.max_drift = '10s'" "idgen.max_wait = '100ms'"
start
q $P "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next())"
quietly() { "$@" >/dev/null; }
ahead() { q $P "SELECT (reserved_until - clock_timestamp()) > interval '0' FROM idgen.streams WHERE stream = 'snowflake'"; }

phase "reserved ahead while idle, for reserve_idle"
q $P "INSERT INTO t DEFAULT VALUES"
sleep 2
check "2 s after the last ID the snowflake stream is still reserved ahead of the clock" eq "$(ahead)" t
sleep 2
check "... and 4 s after" eq "$(ahead)" t
sleep 4
check "8 s after (reserve_idle is 6 s) it has lapsed: an idle server stops writing" eq "$(ahead)" f
before=$(q $P "SELECT persisted_mark FROM idgen.status")
sleep 2
check "... and writes no mark while idle past it" eq "$(q $P "SELECT persisted_mark = '$before' FROM idgen.status")" t
check "the first ID then reserves for itself, as before" quietly q $P "INSERT INTO t DEFAULT VALUES"

phase "control: reserve_idle = 0"
q $P "ALTER SYSTEM SET idgen.reserve_idle = 0" && q $P "SELECT pg_reload_conf()" >/dev/null
q $P "INSERT INTO t DEFAULT VALUES"
sleep 2
check "2 s after the last ID the reservation has lapsed" eq "$(ahead)" f
q $P "ALTER SYSTEM RESET idgen.reserve_idle" && q $P "SELECT pg_reload_conf()" >/dev/null

phase "a restart while idle-reserved"
q $P "INSERT INTO t DEFAULT VALUES"
sleep 2
cluster_stop idle fast
start
check "after a clean restart, IDs are made at once" quietly q $P "INSERT INTO t DEFAULT VALUES"
check "... at the right time" eq "$(q $P "SELECT id_timestamp(max(id)) < clock_timestamp() + interval '5 s' FROM t")" t

phase "kill -9 while idle-reserved"
q $P "INSERT INTO t SELECT snowflake_next() FROM generate_series(1, 10000)"
sleep 2
before_max=$(q $P "SELECT max(id) FROM t")
kill_server idle
start
wait_ready $P
check "after kill -9, the next IDs are above every earlier one" eq \
  "$(q $P "SELECT min(n) > $before_max FROM snowflake_next_batch(1000) n")" t
finish
