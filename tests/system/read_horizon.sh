#!/usr/bin/env bash
# The read horizon (docs/read-horizon.md): readers that page by ID below
# idgen.read_horizon() never miss a row that commits late.
#   - 8 writers for a minute (tests/system/horizon_stress.py): transactions of 1-50 IDs and more, a
#     random 0-300 ms before COMMIT, 10% ROLLBACK, some rolled back to a savepoint, some PREPAREd
#     and committed (or rolled back) by another session 1-4 s later, some taking IDs they never
#     insert; readers paging with examples/outbox_relay.py's recipe the whole time (READ COMMITTED
#     by Snowflake ID, REPEATABLE READ per page by Snowflake ID, READ COMMITTED by UUIDv7). During
#     the run the server's clock steps back 3 s and forward again (libfaketime), a writer's
#     backend is killed with kill -9 mid-transaction (a crash restart: every session reconnects,
#     prepared transactions survive), and the postmaster itself is killed with kill -9 and
#     started again; and once (writer 0's first PREPARE after 5 s) gdb kills a backend inside
#     PREPARE TRANSACTION after the server saved it, before the client heard: the client sees a
#     lost connection, the server restarts with the transaction prepared, and the finisher, which
#     is handed every PREPARE that raised, ends it by its gid. At the end each reader has read
#     every committed row exactly once, and nothing is left in pg_prepared_xacts.
#   - The control, in the same run: a reader paging by `id > last` alone misses rows.
#   - After the crashes the horizon moves on: nothing holds it, and it is above every row.
#   - What holds it is shown (idgen.read_horizon_holders) for an open and a prepared transaction,
#     and for a prepared transaction from before a restart, which holds it at 0 until it ends.
#   - A physical standby refuses it (25006); the recipe for reading there (the horizon and the WAL
#     position on the primary, the page on the standby once replayed) reads every row once from a
#     standby that replays 100 ms behind, where the same reader without the wait misses rows.
#   - Several nodes: two write the table for 20 s and publish it to a third by logical
#     replication; a reader there with the recipe (read_page_nodes: make one ID on each writer, the
#     smallest of their horizons, then a marker row on each, read once the markers have arrived)
#     reads every row of both exactly once; paging by `id > last` alone misses rows. (Without the
#     one ID on each writer, the last rows of one node stayed above the other's idle horizon, and
#     the reader missed them; before the tables were synchronized, a reader missed 2 rows.)
#   - REPEATABLE READ refuses to take it (25001); a layout under clock_policy rollback_flag too.
# Every statement after the run has a lock_timeout: a prepared transaction left holding the table
# is a failed check, never a hang. (Control, run by hand: with the harness handing the finisher
# only the PREPAREs that returned, as it did, the crash inside PREPARE left 'hz-0-33' in
# pg_prepared_xacts, holding the horizon: 5 checks failed (that gid not ended, "none left", the
# three readers, which stopped 114,476 rows short at the held horizon), and the script went on to
# its end, where it used to wait for the TRUNCATE's lock forever.)
# (Control, run by hand: with node/horizon.rs's `publish` storing nothing, the three readers of
# the recipe missed 71,693, 71,972 and 71,577 of 121,939 rows, as the control reader (75,909);
# the holders checks failed too.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/clients.sh"
P=$(port 0) FLAG=$(port 1) STANDBY=$(port 2) HZ_A=$(port 3) HZ_B=$(port 4) HZ_C=$(port 5)
VENV=$(py_venv) || skip_test "pip could not install psycopg from PyPI ($VENV)"
CLOCK="$WORK/read_horizon.faketime"
setclock() { echo "$1" | as_pg tee "$CLOCK" >/dev/null; }
setclock "+0"
trap 'cluster_stop horizon immediate' EXIT
cluster_init horizon $P "max_prepared_transactions = 64" "idgen.worker_id = 3"
cluster_start_faketime horizon "$CLOCK"
q $P "CREATE EXTENSION pg_idgen;
      CREATE TABLE outbox (id bigint PRIMARY KEY DEFAULT snowflake_next(),
                           u uuid UNIQUE DEFAULT uuidv7_next(), writer int, n int)"

# What holds the horizon, and the refusals.
psql -h 127.0.0.1 -p $P -U postgres -X -q -A -t -c "BEGIN" -c "INSERT INTO outbox (writer) VALUES (0)" \
  -c "SELECT pg_sleep(3)" -c "COMMIT" >/dev/null &
sleep 1
check "an open transaction holds both horizons, shown with its pid" eq \
  "$(q $P "SELECT string_agg(kind || ':' || stream || ':' || (pid IS NOT NULL), ',' ORDER BY stream) FROM idgen.read_horizon_holders")" \
  "transaction:snowflake:true,transaction:uuidv7:true"
check "... the horizon is at its ID, which is not visible yet" eq \
  "$(q $P "SELECT idgen.read_horizon() = (SELECT oldest_id::bigint FROM idgen.read_horizon_holders WHERE stream = 'snowflake')
               AND NOT EXISTS (SELECT FROM outbox)")" t
wait
check "... and once it commits, the horizon is above its row" eq \
  "$(q $P "SELECT idgen.read_horizon() > max(id) AND idgen.read_horizon_uuid() > (SELECT u FROM outbox ORDER BY u DESC LIMIT 1) FROM outbox")" t
q $P "BEGIN; INSERT INTO outbox (writer) VALUES (0); PREPARE TRANSACTION 'held'"
check "a prepared transaction holds it, named by its gid" eq \
  "$(q $P "SELECT string_agg(DISTINCT kind || ':' || gid, ',') FROM idgen.read_horizon_holders")" "prepared:held"
check "... at its ID" eq "$(q $P "SELECT idgen.read_horizon() = (SELECT oldest_id::bigint FROM idgen.read_horizon_holders WHERE stream = 'snowflake')")" t
cluster_stop horizon fast
cluster_start_faketime horizon "$CLOCK"
check "after a restart, a prepared transaction from before it holds the horizon at 0" eq \
  "$(q $P "SELECT idgen.read_horizon(), (SELECT kind || ':' || gid FROM idgen.read_horizon_holders)")" "0|prepared before start:held"
q $P "COMMIT PREPARED 'held'"
check "... until it is committed: then the horizon is above its row and nothing holds it" eq \
  "$(q $P "SELECT idgen.read_horizon() > max(id) AND NOT EXISTS (SELECT FROM idgen.read_horizon_holders) FROM outbox")" t
err=$(psql -h 127.0.0.1 -p $P -U postgres -X -q -A -t -c "\set VERBOSITY sqlstate" \
  -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT idgen.read_horizon()" 2>&1 || true)
check "REPEATABLE READ: refused with 25001" grep -q "25001" <<<"$err"
q $P "CREATE ROLE plain LOGIN"
check "a plain role may take both horizons and read what holds them" eq \
  "$(psql -h 127.0.0.1 -p $P -U plain -d postgres -X -q -A -t -c "SELECT idgen.read_horizon() > 0, idgen.read_horizon_uuid() IS NOT NULL, (SELECT count(*) FROM idgen.read_horizon_holders)")" "t|t|0"
q $P "TRUNCATE outbox"

# The run: faults at 12 s (clock 3 s back), 22 s (kill -9 of a writer's backend), 32 s (kill -9 of
# the postmaster, started again), 45 s (the clock forward again).
log "read_horizon: 60 s of writers and readers, with faults"
HZ_CRASH_IN_PREPARE=1 "$VENV/bin/python" "$REPO/tests/system/horizon_stress.py" \
  "host=127.0.0.1 port=$P user=postgres dbname=postgres" 60 "$REPO/examples" >"$WORK/horizon.json" 2>"$WORK/horizon.err" &
stress=$!
sleep 12
setclock "-3s"
sleep 10
victim=$(q $P "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'hz-writer-%' AND state = 'idle in transaction' LIMIT 1")
[ -n "$victim" ] || victim=$(q $P "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'hz-writer-%' LIMIT 1")
check "found a writer's backend to kill" test -n "$victim"
kill -9 "$victim" || true
sleep 10
kill_server horizon
cluster_start_faketime horizon "$CLOCK"
sleep 13
setclock "+0"
wait $stress || true
export PGOPTIONS="-c lock_timeout=60s"
out=$(cat "$WORK/horizon.json")
echo "    $out"
check "the run finished" test -n "$out"
[ -n "$out" ] || tail -20 "$WORK/horizon.err"
check "the writer's kill -9 caused a crash restart" grep -q "terminated by signal 9" "$(cluster_dir horizon)/server.log"
check "the writers committed, rolled back, prepared and rolled back to savepoints" test \
  "$(field "$out" committed)" -gt 100 -a "$(field "$out" rolled_back)" -gt 5 -a "$(field "$out" prepared_committed)" -gt 5 \
  -a "$(field "$out" savepoints_rolled_back)" -gt 5 -a "$(field "$out" ids_not_inserted)" -gt 10
check "the clients reconnected after the crashes" test "$(field "$out" reconnects)" -ge 8
check "gdb killed a backend inside PREPARE TRANSACTION, after the server saved it" eq \
  "$(python3 -c "import json,sys; print(json.load(sys.stdin)['crash_in_prepare']['gdb_said_breakpoint'])" <<<"$out")" True
check "... the client heard an error, and the finisher still ended that transaction by its gid" test \
  "$(field "$out" prepared_without_reply)" -ge 1
check "every prepared transaction was committed or rolled back by its gid (none left in pg_prepared_xacts)" eq \
  "$(python3 -c "import json,sys; print(json.load(sys.stdin).get('stuck', 'no output'))" <<<"$out")" "[]"
# (What a failed run left prepared is rolled back here, so that the parts below still run.)
for gid in $(q $P "SELECT gid FROM pg_prepared_xacts"); do q $P "ROLLBACK PREPARED '$gid'"; done
for r in rc_id rr_id rc_uuid; do
  check "reader $r (the recipe) read every committed row exactly once, in order" eq \
    "$(python3 -c "import json,sys; r=json.load(sys.stdin)['$r']; print(r['exactly_once'], r['in_order'], r['missed'])" <<<"$out")" \
    "True True 0"
done
check "the control reader (id > last alone) missed rows" test \
  "$(python3 -c "import json,sys; print(json.load(sys.stdin)['control_id']['missed'])" <<<"$out")" -gt 0
check "after the run the horizon moved on: nothing holds it, and it is above every row" eq \
  "$(q $P "SELECT idgen.read_horizon() > max(id) AND idgen.read_horizon_uuid() > (SELECT u FROM outbox ORDER BY u DESC LIMIT 1)
                 AND NOT EXISTS (SELECT FROM idgen.read_horizon_holders) FROM outbox")" t

# On a physical standby the horizon cannot be known (it does not see the primary's open
# transactions): refused. The recipe there (read_page_standby): the horizon and then the WAL
# insert position on the primary, the page on the standby once it has replayed past it.
trap 'cluster_stop horizon immediate; cluster_stop horizon_standby immediate' EXIT
q $P "TRUNCATE outbox"
standby_init horizon_standby $P $STANDBY
# Replay 100 ms behind the primary, as a loaded standby is: what the recipe's wait is for.
cluster_conf horizon_standby "recovery_min_apply_delay = '100ms'"
cluster_start horizon_standby
for f in "idgen.read_horizon()" "idgen.read_horizon_uuid()"; do
  err=$(psql -h 127.0.0.1 -p $STANDBY -U postgres -X -q -A -t -c "\set VERBOSITY sqlstate" -c "SELECT $f" 2>&1 || true)
  check "on a standby $f is refused with 25006" grep -q "25006" <<<"$err"
done
log "read_horizon: 20 s of writers, readers on the standby"
HZ_STANDBY="host=127.0.0.1 port=$STANDBY user=postgres dbname=postgres" HZ_READERS=standby_id,standby_control \
  "$VENV/bin/python" "$REPO/tests/system/horizon_stress.py" "host=127.0.0.1 port=$P user=postgres dbname=postgres" 20 \
  "$REPO/examples" >"$WORK/horizon_standby.json" 2>"$WORK/horizon_standby.err" || true
out=$(cat "$WORK/horizon_standby.json")
echo "    $out"
[ -n "$out" ] || tail -20 "$WORK/horizon_standby.err"
check "reader standby_id (the recipe on a standby) read every committed row exactly once, in order" eq \
  "$(python3 -c "import json,sys; j=json.load(sys.stdin); r=j['standby_id']; print(j['rows'] > 1000, r['exactly_once'], r['in_order'], r['missed'])" <<<"$out")" \
  "True True True 0"
check "the control (the horizon from the primary, no wait for the standby's replay) missed rows" test \
  "$(python3 -c "import json,sys; print(json.load(sys.stdin)['standby_control']['missed'])" <<<"$out")" -gt 0
cluster_stop horizon_standby fast

# Several nodes: two write the table and publish it (logical replication) to a third, where a
# reader pages with the recipe (read_page_nodes: the smallest horizon of the writers, then a
# marker row moved on each writer, read once the markers have arrived).
trap 'cluster_stop horizon immediate; cluster_stop hz_a immediate; cluster_stop hz_b immediate; cluster_stop hz_c immediate' EXIT
for n in a:$HZ_A:1 b:$HZ_B:2 c:$HZ_C:3; do
  IFS=: read -r name port worker <<<"$n"
  cluster_init "hz_$name" "$port" "wal_level = logical" "idgen.worker_id = $worker"
  cluster_start "hz_$name"
  q "$port" "CREATE EXTENSION pg_idgen;
             CREATE TABLE outbox (id bigint PRIMARY KEY DEFAULT snowflake_next(), node int, n int);
             CREATE TABLE relay_marker (node int PRIMARY KEY, seq bigint)"
done
q $HZ_A "CREATE PUBLICATION relay FOR TABLE outbox, relay_marker"
q $HZ_B "CREATE PUBLICATION relay FOR TABLE outbox, relay_marker"
# (One statement per call: CREATE SUBSCRIPTION cannot run in a transaction block.)
q $HZ_C "CREATE SUBSCRIPTION from_a CONNECTION 'host=127.0.0.1 port=$HZ_A user=postgres dbname=postgres' PUBLICATION relay" 2>/dev/null
q $HZ_C "CREATE SUBSCRIPTION from_b CONNECTION 'host=127.0.0.1 port=$HZ_B user=postgres dbname=postgres' PUBLICATION relay" 2>/dev/null
# Until a subscription's tables are synchronized, each table catches up on its own, out of the
# publisher's commit order: the recipe holds once they are ready.
for i in $(seq 1 120); do
  [ "$(q $HZ_C "SELECT count(*) FILTER (WHERE srsubstate = 'r') FROM pg_subscription_rel")" = 4 ] && break
  sleep 0.5
done
check "the subscriptions' tables are synchronized" eq "$(q $HZ_C "SELECT count(*) FILTER (WHERE srsubstate = 'r') FROM pg_subscription_rel")" 4
log "read_horizon: 20 s of writers on two nodes, readers on their subscriber"
"$VENV/bin/python" "$REPO/tests/system/horizon_nodes.py" "host=127.0.0.1 port=$HZ_A user=postgres dbname=postgres" \
  "host=127.0.0.1 port=$HZ_B user=postgres dbname=postgres" "host=127.0.0.1 port=$HZ_C user=postgres dbname=postgres" 20 \
  "$REPO/examples" >"$WORK/horizon_nodes.json" 2>"$WORK/horizon_nodes.err" || true
out=$(cat "$WORK/horizon_nodes.json")
echo "    $out"
[ -n "$out" ] || tail -20 "$WORK/horizon_nodes.err"
check "rows of both nodes arrived at the subscriber" test "$(field "$out" rows_of_node_1)" -gt 1000 -a "$(field "$out" rows_of_node_2)" -gt 1000
check "the recipe (read_page_nodes) read every row of both nodes exactly once, in order" eq \
  "$(python3 -c "import json,sys; r=json.load(sys.stdin)['recipe']; print(r['exactly_once'], r['in_order'], r['missed'])" <<<"$out")" "True True 0"
check "the control (id > last alone) missed rows" test \
  "$(python3 -c "import json,sys; print(json.load(sys.stdin)['control_id']['missed'])" <<<"$out")" -gt 0
for n in a b c; do cluster_stop "hz_$n" fast; done

# examples/outbox_relay.py run as docs/read-horizon.md says (psycopg 3 in a venv), on the page's
# table: a row of a transaction that commits after later rows is relayed too, once, in ID order.
q $P "CREATE DATABASE relay"
qdb $P relay "CREATE EXTENSION pg_idgen; CREATE TABLE outbox (id bigint PRIMARY KEY DEFAULT snowflake_next(), payload jsonb)"
qdb $P relay "INSERT INTO outbox (payload) VALUES ('{\"order\": 1}'), ('{\"order\": 2}')"
timeout 12 "$VENV/bin/python" "$REPO/examples/outbox_relay.py" "host=127.0.0.1 port=$P user=postgres dbname=relay" \
  >"$WORK/relay.out" 2>"$WORK/relay.err" &
relay_pid=$!
psql -h 127.0.0.1 -p $P -U postgres -d relay -X -q -c "BEGIN" -c "INSERT INTO outbox (payload) VALUES ('{\"order\": 3}')" \
  -c "SELECT pg_sleep(3)" -c "COMMIT" >/dev/null &
sleep 1
qdb $P relay "INSERT INTO outbox (payload) VALUES ('{\"order\": 4}')"
wait $relay_pid || true
wait
check "the relay, run as the page says, printed every row once, in ID order (order 3 committed after 4)" eq \
  "$(python3 -c "
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ids = [int(r['id']) for r in rows]
print(sorted(r['payload']['order'] for r in rows), ids == sorted(set(ids)))" "$WORK/relay.out")" "[1, 2, 3, 4] True"
show_errors "$WORK/relay.err"

# Under clock_policy rollback_flag IDs after a flip sort below earlier ones: refused.
trap 'cluster_stop horizon immediate; cluster_stop horizon_flag immediate' EXIT
cluster_init horizon_flag $FLAG "idgen.layout = 'raindrop'" "idgen.clock_policy = 'rollback_flag'" "idgen.worker_id = 1"
cluster_start horizon_flag
q $FLAG "CREATE EXTENSION pg_idgen"
err=$(psql -h 127.0.0.1 -p $FLAG -U postgres -X -q -A -t -c "\set VERBOSITY sqlstate" -c "SELECT idgen.read_horizon()" 2>&1 || true)
check "rollback_flag: refused with 55000" grep -q "55000" <<<"$err"
finish
