#!/usr/bin/env bash
# docs/guarantees.md, guarantee 7 on a coordinator: worker-id leases under many clients at once, trying to make
# two holders share a worker id.
#   - 32 clients x 20 acquisitions at once, nothing released: 640 distinct ids, no error;
#   - 32 clients acquiring and releasing in a loop: every (worker id, lease number) is unique and
#     each id's last lease is the largest handed out, so no acquisition was lost or doubled;
#   - another client (idgen_client) learns no holder's code or lease number from errors, and
#     cannot renew or release a live lease by guessing them;
#   - 40 clients at once on a range of 16 ids: exactly 16 win, 24 get 53000 naming the count;
#   - 100 ids being claimed by acquirers slow to commit: the next acquirer skips them;
#   - a holder killed without release: its id comes back only after ttl + grace, and the next
#     holder is told to start after the killed holder's last reported time.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
OUT="$WORK/leases.out"
cluster_init leases $PORT "max_connections = 120" "idgen.worker_lease_grace = '1s'"
cluster_start leases
trap 'cluster_stop leases immediate; cluster_stop lease_node immediate' EXIT
rm -rf "$OUT" && mkdir -p "$OUT"
q $PORT "CREATE EXTENSION pg_idgen"
psqlc() { psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t "$@"; }

# 32 clients x 20 acquisitions, all at once; none released, so all 640 must differ.
for c in $(seq 1 32); do
  for i in $(seq 1 20); do
    echo "SELECT worker_id, lease FROM idgen.worker_acquire('host-$c-$i', '5 min');"
  done >"$OUT/acq.$c.sql"
  psqlc -v ON_ERROR_STOP=1 -f "$OUT/acq.$c.sql" >"$OUT/acq.$c.out" 2>"$OUT/acq.$c.err" &
done
wait
cat "$OUT"/acq.*.out >"$OUT/acquired"
check "32 clients: 640 acquisitions, no error" eq "$(wc -l <"$OUT/acquired") $(cat "$OUT"/acq.*.err | wc -c)" "640 0"
show_errors "$OUT"/acq.*.err
check "32 clients: 640 distinct worker ids" eq "$(cut -d'|' -f1 "$OUT/acquired" | sort -u | wc -l)" 640
check "32 clients: the table agrees (640 held leases, one per code)" eq \
  "$(q $PORT "SELECT count(*), count(DISTINCT code) FROM idgen.worker_leases WHERE state = 'held'")" "640|640"

# Acquire and release in a loop, 32 clients, on a range of 48 ids that is always contended.
q $PORT "DELETE FROM idgen.workers"
for c in $(seq 1 32); do
  for i in $(seq 1 30); do
    echo "SELECT worker_id || '|' || lease || '|' || idgen.worker_release(worker_id, 'loop-$c', lease => lease) FROM idgen.worker_acquire('loop-$c', '1 min', 0, 47);"
  done >"$OUT/loop.$c.sql"
  psqlc -v ON_ERROR_STOP=1 -f "$OUT/loop.$c.sql" >"$OUT/loop.$c.out" 2>"$OUT/loop.$c.err" &
done
wait
cat "$OUT"/loop.*.out >"$OUT/cycles"
check "acquire/release loop: 960 cycles, no error" eq "$(wc -l <"$OUT/cycles") $(cat "$OUT"/loop.*.err | wc -c)" "960 0"
show_errors "$OUT"/loop.*.err
check "acquire/release loop: every release found its own lease" eq "$(grep -vc '|true$' "$OUT/cycles")" 0
check "acquire/release loop: (worker id, lease) pairs are unique" eq "$(cut -d'|' -f1,2 "$OUT/cycles" | sort | uniq -d | wc -l)" 0
check "acquire/release loop: each id's last lease in the table is the largest one handed out (none lost)" eq \
  "$(awk -F'|' '{ if ($2 > m[$1]) m[$1] = $2 } END { for (k in m) print k "|" m[k] }' "$OUT/cycles" | sort)" \
  "$(q $PORT "SELECT worker_id || '|' || lease FROM idgen.workers WHERE worker_id BETWEEN 0 AND 47" | sort)"
check "acquire/release loop: the ids stayed within 0..47" eq "$(awk -F'|' '$1 < 0 || $1 > 47' "$OUT/cycles" | wc -l)" 0

# Another client cannot take over a live lease: errors name no holder's code or lease number,
# lease numbers are not small counters one could guess, and a release needs the holder's.
held=$(q $PORT "SELECT lease FROM idgen.worker_acquire('10.0.0.7:8080#victim', '5 min', 4000, 4000)")
q $PORT "CREATE ROLE intruder LOGIN IN ROLE idgen_client" >/dev/null
as_intruder() { psql -h 127.0.0.1 -p $PORT -U intruder -d postgres -X -q -A -t -v VERBOSITY=verbose -c "$1" 2>&1 || true; }
leak=$(as_intruder "SELECT idgen.worker_heartbeat(4000, 'guess')"; as_intruder "SELECT idgen.worker_release(4000, 'guess')";
       as_intruder "SELECT idgen.worker_heartbeat(4000, 'guess', NULL, 1)"; as_intruder "SELECT idgen.worker_release(4000, 'guess', NULL, 1)")
check "intruder: without a lease number, refused for want of the proof (42501); with a guessed one, refused (55000)" eq \
  "$(grep -c '^ERROR:  42501' <<<"$leak")|$(grep -c '^ERROR:  55000' <<<"$leak")" "2|2"
check "intruder: no error names the holder's code or lease number" eq "$(grep -c "victim\|$held" <<<"$leak")" 0
check "intruder: lease numbers are no small counter (the first one here is $held)" test "$held" -gt 1000
check "intruder: the holder's code with a guessed lease number is refused" grep -q '^ERROR:  55000' \
  <<<"$(as_intruder "SELECT idgen.worker_release(4000, '10.0.0.7:8080#victim', NULL, 1)")"
check "intruder: the lease is still held, and the id not handed out" eq \
  "$(q $PORT "SELECT state FROM idgen.worker_leases WHERE worker_id = 4000")|$(as_intruder "SELECT worker_id FROM idgen.worker_acquire('intruder', '1 min', 4000, 4000)" | grep -c 53000)" "held|1"
check "the holder renews with its lease number" eq \
  "$(q $PORT "SELECT idgen.worker_heartbeat(4000, '10.0.0.7:8080#victim', NULL, $held) > now()")" t

# What a lease-mode node tells its roles (idgen.worker_status): its code and the keeper's last
# error, which names the coordinator's host, port and user only to those who may read
# idgen.worker_lease_conninfo.
NODE=$(port 1)
cluster_init lease_node $NODE "idgen.worker_id_source = lease" "idgen.worker_lease_ttl = '3s'" \
  "idgen.worker_lease_conninfo = 'host=127.0.0.1 port=$PORT dbname=postgres user=no_such_role'"
cluster_start lease_node
q $NODE "CREATE EXTENSION pg_idgen; CREATE ROLE plain LOGIN" >/dev/null
for _ in $(seq 1 50); do [ "$(q $NODE "SELECT failures > 0 FROM idgen.worker_status")" = t ] && break; sleep 0.1; done
check "refused login: worker_status shows the state, the code and the keeper's error" eq \
  "$(q $NODE "SELECT state, code IS NOT NULL, last_error LIKE '%no_such_role%' FROM idgen.worker_status")" "acquiring|t|t"
as_plain() { psql -h 127.0.0.1 -p $NODE -U plain -d postgres -X -q -A -t -v VERBOSITY=verbose -c "$1" 2>&1 || true; }
seen=$(as_plain "SELECT last_error FROM idgen.worker_status"; as_plain "SELECT snowflake_next()")
check "refused login: a plain role sees neither the coordinator's host, port nor user" eq \
  "$(grep -c "127.0.0.1\|$PORT\|no_such_role" <<<"$seen")|$(grep -c 'not shown' <<<"$seen")" "0|2"
cluster_stop lease_node
as_pg sed -i "s/user=no_such_role/user=postgres/" "$(cluster_dir lease_node)/postgresql.conf"
cluster_start lease_node
for _ in $(seq 1 50); do q $NODE "SELECT snowflake_next()" >/dev/null 2>&1 && break; sleep 0.1; done
check "holding a lease: worker_status shows its code, as the coordinator has it" eq \
  "$(q $NODE "SELECT state, code FROM idgen.worker_status")" \
  "leased|$(q $PORT "SELECT code FROM idgen.workers WHERE released_at IS NULL AND code LIKE 'pg_idgen:%'")"
# The operator releases the node's lease on the coordinator: at its next renewal (within a third of
# the 3 s ttl) the keeper is told the lease is lost, by the error's condition name
# (idgen_lease_lost), stops the node's IDs at once and leases again, well before the old lease
# would have lapsed. A keeper that took the answer for a failed call would keep using the old lease
# until it lapsed, and say nothing of it.
code=$(q $NODE "SELECT code FROM idgen.worker_status")
lease0=$(q $PORT "SELECT lease FROM idgen.workers WHERE code = '$code' AND released_at IS NULL")
nodelog="$(cluster_dir lease_node)/server.log"
seen0=$(grep -c 'Snowflake IDs stop until a new worker id is leased' "$nodelog" || true)
expires0=$(q $PORT "UPDATE idgen.workers SET released_at = clock_timestamp() WHERE code = '$code' AND released_at IS NULL
                    RETURNING expires_at")
# Up to 30 s for the keeper's line (its renewal comes within a second); when it came is read from
# the line's own time, so a busy machine cannot decide the check.
for _ in $(seq 1 300); do
  [ "$(grep -c 'Snowflake IDs stop until a new worker id is leased' "$nodelog" || true)" -gt "$seen0" ] && break
  sleep 0.1
done
stopped_at=$(grep 'Snowflake IDs stop until a new worker id is leased' "$nodelog" | tail -1 | awk '{print $1, $2, $3}')
check "lease released on the coordinator: the keeper stops the node's IDs (at ${stopped_at:-never}) before the old lease would have lapsed ($expires0)" \
  eq "$(q $PORT "SELECT '${stopped_at:-infinity}'::timestamptz < '$expires0'::timestamptz")" t
check "... and says why, with the coordinator's reason" grep -q "lease lost: the lease of worker id [0-9]* was released; Snowflake IDs stop" "$nodelog"
for _ in $(seq 1 50); do q $NODE "SELECT snowflake_next()" >/dev/null 2>&1 && break; sleep 0.1; done
check "... then leases again under a new lease number and makes IDs" eq \
  "$(q $PORT "SELECT lease > $lease0 FROM idgen.workers WHERE code = '$code' AND released_at IS NULL")|$(q $NODE "SELECT snowflake_next() > 0")" "t|t"
cluster_stop lease_node immediate

# Exhaustion: 40 clients at once on 16 ids.
for c in $(seq 1 40); do
  psqlc -c "SELECT worker_id FROM idgen.worker_acquire('tiny-$c', '1 min', 1000, 1015)" >"$OUT/tiny.$c.out" 2>"$OUT/tiny.$c.err" &
done
wait
check "exhaustion: 16 of 40 clients got an id" eq "$(cat "$OUT"/tiny.*.out | sort -u | wc -l)" 16
# (A loser counts the leases committed when it looked: winners still committing are not visible
# to it yet, so under load it may say fewer than 16.)
check "exhaustion: the other 24 were told none is free and how many are held" eq \
  "$(grep -lE 'no worker id is free between 1000 and 1015: ([0-9]|1[0-6]) held' "$OUT"/tiny.*.err | wc -l)" 24
check "exhaustion: the table holds exactly the 16 winners" eq \
  "$(q $PORT "SELECT count(*) FROM idgen.worker_leases WHERE worker_id BETWEEN 1000 AND 1015 AND state = 'held'")" 16

# Acquirers slow to commit: another session holds the claim locks of ids 3000..3099, as 100
# acquirers in the middle of claiming them would. An acquirer skips them, it does not give up
# (before 0.2.1 it gave up after 64 ids and said none was free); and when every free id is being
# claimed, the error says so.
psqlc -c "BEGIN" -c "SELECT pg_advisory_xact_lock(1768161281, g) FROM generate_series(3000, 3099) g" \
  -c "SELECT pg_sleep(60)" -c "COMMIT" >/dev/null 2>&1 &
stuck=$!
for i in $(seq 1 100); do
  [ "$(q $PORT "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1768161281 AND granted")" = 100 ] && break
  sleep 0.1
done
check "slow claimants: past 100 ids being claimed, the acquirer takes the next one" eq \
  "$(q $PORT "SELECT worker_id FROM idgen.worker_acquire('past-claimants', '1 min', 3000, 3199)" 2>&1)" 3100
check "slow claimants: with every free id being claimed, 53000 says so" eq \
  "$(psqlc -v VERBOSITY=verbose -c "SELECT idgen.worker_acquire('all-claimed', '1 min', 3000, 3099)" 2>&1 |
     grep -cE '^ERROR:  53000: no worker id is free between 3000 and 3099: 0 held|The other 100 ids of the range were being claimed by other acquirers')" 2
q $PORT "SELECT pg_terminate_backend(pid) FROM (SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 1768161281) l" >/dev/null
wait $stuck || true  # its session was terminated

# A holder that dies without a release: its id is not reusable before ttl + grace, and the next
# holder starts after the dead holder's last reported time (1.5 s ahead of the clock here).
# The wait is timed from before the heartbeat (which sets the expiry to its own time + ttl), so
# however slowly psql runs here it is at least ttl + grace.
doomed=$(q $PORT "SELECT lease FROM idgen.worker_acquire('doomed', '2 s', 2000, 2000)")
start=$(date +%s.%N)
q $PORT "SELECT idgen.worker_heartbeat(2000, 'doomed', clock_timestamp() + interval '1.5 s', $doomed)" >/dev/null
dead_last=$(q $PORT "SELECT last_ts FROM idgen.workers WHERE worker_id = 2000")
got=""
for i in $(seq 1 300); do
  [ -n "$got" ] && break
  got=$(q $PORT "SELECT worker_id FROM idgen.worker_acquire('heir', '1 min', 2000, 2000)" 2>/dev/null || true)
  [ -z "$got" ] && sleep 0.1
done
waited=$(echo "$(date +%s.%N) - $start" | bc)
check "dead holder: the id came back only after ttl + grace (waited ${waited}s >= 3)" test "$(echo "$waited >= 3" | bc)" = 1
check "dead holder: the heir starts after the dead holder's last time + ttl + grace, in the future" eq \
  "$(q $PORT "SELECT last_ts >= '$dead_last'::timestamptz + interval '3 s' AND last_ts > acquired_at
              FROM idgen.workers WHERE worker_id = 2000")" t
finish
