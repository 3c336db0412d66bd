#!/usr/bin/env bash
# docs/guarantees.md, guarantee 6 (segments) on real clusters, trying to make a range or an ID go out twice:
#   - 16 sessions at once on one type, and 32 clients taking whole ranges at once;
#   - callers that ROLLBACK (the ranges they caused stay taken);
#   - kill -9 of a backend while refills run, kill -9 of the allocator worker, immediate stop;
#     every ID a client ever received (streamed with COPY, so even those of killed sessions)
#     is checked against everything handed out after the restart;
#   - pg_dump / pg_restore into a new database: IDs go on above what was handed out;
#   - 1,000 business types through a cache of 16 slots (evictions leave gaps, never repeats);
#   - a type dropped and created again while sessions take its IDs: none repeats;
#   - a type created while a drop of its name is still open: it goes on above what the drop
#     retired (or fails with 40001 under REPEATABLE READ);
#   - DROP DATABASE right after segments were used does not wait for the allocator;
#   - 12 databases at once with room for 2 allocators: callers wait for a worker slot;
#   - a single-user server, which runs no allocator, refuses at once;
#   - two clusters with delta 2 and remainders 0 and 1 never overlap.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
A=$(port 1)
B=$(port 2)
SLOTS=$(port 3)
OUT="$WORK/segments.out"
cluster_init seg $PORT "max_connections = 120" "idgen.segment_step_target = 0"
cluster_start seg
SECONDS=0
trap 'cluster_stop seg immediate; cluster_stop sega immediate; cluster_stop segb immediate; cluster_stop segslots immediate' EXIT
rm -rf "$OUT" && mkdir -p "$OUT" && chmod 777 "$OUT"
q $PORT "CREATE EXTENSION pg_idgen; CREATE TABLE got (phase text, biz text, id bigint)"
q $PORT "SELECT idgen.segment_create('t', step => 1000), idgen.segment_create('small', step => 7),
                idgen.segment_create('client', step => 100, delta => 3, remainder => 1)" >/dev/null

# 16 sessions at once on two types; with a step of 7 the allocator is busy the whole time.
for s in $(seq 1 16); do
  q $PORT "INSERT INTO got SELECT 'conc', b, segment_next(b)
           FROM generate_series(1, 100000) g, LATERAL (SELECT CASE WHEN g % 50 = 0 THEN 'small' ELSE 't' END AS b) x" &
done
wait
check "16 sessions: 1.6M IDs arrived" eq "$(q $PORT "SELECT count(*) FROM got")" 1600000
check "16 sessions: no ID repeats within a type" eq "$(q $PORT "SELECT count(*) FROM (SELECT biz, id FROM got GROUP BY 1, 2 HAVING count(*) > 1) d")" 0
check "16 sessions: every ID is at most its type's committed max_id" eq "$(q $PORT "SELECT bool_and(g.id <= s.max_id) FROM got g JOIN idgen.segments s ON s.biz_type = g.biz")" t

phase "Whole ranges"
# Whole ranges: 32 clients x 25 allocations at once, all disjoint.
for i in $(seq 1 25); do echo "SELECT start_id, end_id FROM idgen.segment_alloc('client');"; done >"$OUT/allocs.sql"
for c in $(seq 1 32); do
  psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -v ON_ERROR_STOP=1 -f "$OUT/allocs.sql" >"$OUT/alloc.$c" &
done
wait
cat "$OUT"/alloc.* | sort -t'|' -k1,1n >"$OUT/ranges"
check "32 clients: 800 ranges" eq "$(wc -l <"$OUT/ranges")" 800
check "32 clients: ranges are disjoint and contiguous" eq "$(awk -F'|' 'NR > 1 && $1 != prev { bad++ } { prev = $2 } END { print bad + 0 }' "$OUT/ranges")" 0
check "32 clients: the table's max_id is the last range's end" eq "$(q $PORT "SELECT max_id FROM idgen.segments WHERE biz_type = 'client'")" "$(tail -1 "$OUT/ranges" | cut -d'|' -f2)"

phase "ROLLBACK"
# ROLLBACK: the IDs are shown to the client, then the transaction is undone; nothing later
# may repeat them, and the committed max_id covers them.
psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -v ON_ERROR_STOP=1 >"$OUT/rolled_back" <<'SQL'
BEGIN;
SELECT segment_next('small') FROM generate_series(1, 5000);
ROLLBACK;
BEGIN;
SELECT id FROM segment_next_batch('small', 3000) id;
SELECT start_id FROM idgen.segment_alloc('client') WHERE false;
ROLLBACK;
SQL
check "rollback: 8000 IDs were shown" eq "$(wc -l <"$OUT/rolled_back")" 8000
q $PORT "CREATE TABLE shown (id bigint)"
psql -h 127.0.0.1 -p $PORT -U postgres -X -q -c "\copy shown FROM '$OUT/rolled_back'"
q $PORT "INSERT INTO got SELECT 'after_rollback', 'small', segment_next('small') FROM generate_series(1, 5000)"
check "rollback: later IDs are all above the rolled-back ones" eq "$(q $PORT "SELECT (SELECT min(id) FROM got WHERE phase = 'after_rollback') > (SELECT max(id) FROM shown)")" t
check "rollback: max_id stayed above the rolled-back IDs" eq "$(q $PORT "SELECT max_id >= (SELECT max(id) FROM shown) FROM idgen.segments WHERE biz_type = 'small'")" t

phase "Crashes"
# Crashes. Sessions stream IDs to files with COPY, so a client keeps every ID it received even
# when its backend dies. The last line of a killed stream may be cut short: it is dropped.
stream() { # stream TAG: 2M IDs of 'small' to $OUT/stream.TAG
  psql -h 127.0.0.1 -p $PORT -U postgres -X -q \
    -c "COPY (SELECT segment_next('small') FROM generate_series(1, 2000000)) TO STDOUT" >"$OUT/stream.$1" 2>/dev/null || true
}
crash_round() { # crash_round NAME KILL-COMMAND
  local name=$1
  shift
  for s in 1 2 3 4; do stream "$name.$s" & done
  # The kill once the clients have received IDs (a loaded machine takes longer to start them: a
  # fixed sleep was too short once), at most 60 s.
  local i
  for i in $(seq 1 300); do
    [ "$(cat "$OUT"/stream."$name".* 2>/dev/null | wc -l)" -gt 4000 ] && break
    sleep 0.2
  done
  [ "$i" -lt 300 ] || echo "    waited 60 s for the clients of $name to receive 4,000 IDs" >&2
  "$@"
  wait
  wait_ready $PORT
  for s in 1 2 3 4; do sed '$d' "$OUT/stream.$name.$s"; done >"$OUT/kept.$name"
  check "$name: sessions had received IDs before the crash" test "$(wc -l <"$OUT/kept.$name")" -gt 1000
}
kill_backend() {
  kill -9 "$(q $PORT "SELECT pid FROM pg_stat_activity WHERE query LIKE 'COPY (SELECT segment_next%' LIMIT 1")"
}
kill_allocator() {
  local pid
  pid=$(q $PORT "SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_idgen segment allocator'")
  check "the allocator is running" test -n "$pid"
  # Its process title names the allocator; backend_type keeps the name monitoring matches on.
  check "its process title names the allocator" grep -q "pg_idgen allocator [0-9]" <(ps -o args= -p "$pid")
  kill -9 "$pid"
}
stop_immediate() { cluster_stop seg immediate; cluster_start seg; }
crash_round kill_backend kill_backend
crash_round kill_allocator kill_allocator
crash_round immediate_stop stop_immediate
check "the crashes restarted the server" test "$(grep -c "terminated by signal 9" "$(cluster_dir seg)/server.log")" -ge 2
q $PORT "INSERT INTO got SELECT 'after_crashes', 'small', segment_next('small') FROM generate_series(1, 20000)"
q $PORT "CREATE TABLE streamed (id bigint)"
for f in "$OUT"/kept.*; do psql -h 127.0.0.1 -p $PORT -U postgres -X -q -c "\copy streamed FROM '$f'"; done
check "crashes: no ID any client received repeats" eq "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM (SELECT id FROM streamed UNION ALL SELECT id FROM shown UNION ALL SELECT id FROM got WHERE biz = 'small') x")" 0
check "crashes: IDs after the restarts are above all streamed ones" eq "$(q $PORT "SELECT (SELECT min(id) FROM got WHERE phase = 'after_crashes') > (SELECT max(id) FROM streamed)")" t

# pg_dump keeps idgen.segments (pg_extension_config_dump): restored into a new database,
# every type goes on above what was handed out before.
phase "dump and restore"
"$PGBIN/pg_dump" -h 127.0.0.1 -p $PORT -U postgres -Fc --exclude-table-data=got --exclude-table-data=streamed -f "$OUT/dump" postgres
q $PORT "CREATE DATABASE restored"
"$PGBIN/pg_restore" -h 127.0.0.1 -p $PORT -U postgres -d restored "$OUT/dump"
check "restore: the segment rows came back" eq "$(qdb $PORT restored "SELECT string_agg(biz_type, ',' ORDER BY biz_type) FROM idgen.segments")" "client,small,t"
check "restore: 't' goes on above every ID handed out before" test "$(qdb $PORT restored "SELECT segment_next('t')")" -gt "$(q $PORT "SELECT max(id) FROM got WHERE biz = 't'")"
check "restore: 'small' goes on above every ID any client received" test "$(qdb $PORT restored "SELECT segment_next('small')")" -gt "$(q $PORT "SELECT max(id) FROM streamed")"

phase "1,000 types"
# 1,000 business types through a cache of 16 slots, from 4 sessions at once.
cluster_stop seg
cluster_conf seg "idgen.segment_cache_size = 16"
cluster_start seg
q $PORT "SELECT count(idgen.segment_create('biz' || g, step => 10 + g % 7)) FROM generate_series(1, 1000) g" >/dev/null
q $PORT "CREATE TABLE many (biz text, id bigint)"
for s in 1 2 3 4; do
  q $PORT "INSERT INTO many SELECT 'biz' || (g % 1000 + 1), segment_next('biz' || (g % 1000 + 1)) FROM generate_series(1, 3000) g" &
done
wait
check "1,000 types: 12,000 IDs" eq "$(q $PORT "SELECT count(*) FROM many")" 12000
check "1,000 types: no ID repeats within a type" eq "$(q $PORT "SELECT count(*) FROM (SELECT biz, id FROM many GROUP BY 1, 2 HAVING count(*) > 1) d")" 0
check "1,000 types: every type was used" eq "$(q $PORT "SELECT count(DISTINCT biz) FROM many")" 1000
check "1,000 types: the 16-slot cache evicted" test "$(q $PORT "SELECT segment_evictions FROM idgen.status")" -gt 0
check "1,000 types: the cache holds at most 16 types" test "$(q $PORT "SELECT segment_cache_used FROM idgen.status")" -le 16

phase "drop and create again"
# A type dropped and created again while 4 sessions take its IDs, 6 times over, by segment_drop /
# segment_create and by plain DELETE / INSERT: every ID any session received is unique, because
# the type goes on above the highest ID it had reached (idgen.segments_retired).
q $PORT "CREATE TABLE phx (id bigint); SELECT idgen.segment_create('phx', step => 50)" >/dev/null
for s in 1 2 3 4; do
  q $PORT "DO \$\$ BEGIN FOR i IN 1..20000 LOOP
             BEGIN INSERT INTO phx VALUES (segment_next('phx'));
             EXCEPTION WHEN undefined_object THEN PERFORM pg_sleep(0.001); END;
           END LOOP; END \$\$" &
done
for r in 1 2 3; do
  sleep 0.3
  q $PORT "SELECT idgen.segment_drop('phx')" >/dev/null
  sleep 0.05
  q $PORT "SELECT idgen.segment_create('phx', step => 50)" >/dev/null 2>&1
  sleep 0.3
  q $PORT "DELETE FROM idgen.segments WHERE biz_type = 'phx'" >/dev/null
  sleep 0.05
  q $PORT "INSERT INTO idgen.segments (biz_type, max_id, step) VALUES ('phx', 0, 50)" >/dev/null 2>&1
done
wait
check "drop and create again: the sessions got IDs throughout ($(q $PORT "SELECT count(*) FROM phx") in all)" \
  test "$(q $PORT "SELECT count(*) FROM phx")" -gt 10000
check "drop and create again: no ID repeats" eq "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM phx")" 0
check "drop and create again: the type went on above its retired maximum" eq \
  "$(q $PORT "SELECT r.max_id > 0 AND s.max_id >= r.max_id FROM idgen.segments_retired r JOIN idgen.segments s USING (biz_type) WHERE biz_type = 'phx'")" t
# The control: an administrator who deletes the retired row knowingly lets the old IDs out again.
q $PORT "CREATE TABLE ctl (round int, id bigint); SELECT idgen.segment_create('ctl', step => 10)" >/dev/null
q $PORT "INSERT INTO ctl SELECT 1, segment_next('ctl') FROM generate_series(1, 100)"
q $PORT "SELECT idgen.segment_drop('ctl'); DELETE FROM idgen.segments_retired WHERE biz_type = 'ctl'" >/dev/null
q $PORT "SELECT idgen.segment_create('ctl', step => 10)" >/dev/null
q $PORT "INSERT INTO ctl SELECT 2, segment_next('ctl') FROM generate_series(1, 100)"
check "control: with the retired row deleted, the same IDs do come out again" test \
  "$(q $PORT "SELECT count(*) FROM (SELECT id FROM ctl GROUP BY id HAVING count(*) > 1) d")" -gt 0

phase "a create while a drop of the name is still open"
# An administrator drops the type in a transaction still open when another creates it again: the
# create waits for the drop and goes on above what it retired (READ COMMITTED); where its snapshot
# cannot see the drop (REPEATABLE READ) it fails with 40001 rather than start again at 0.
race() { # race ISOLATION: prints segment_create's outcome (ok or the SQLSTATE) and the new first ID
  local name=race_$1
  q $PORT "SELECT idgen.segment_create('$name', step => 10)" >/dev/null
  q $PORT "INSERT INTO raced SELECT '$name', segment_next('$name') FROM generate_series(1, 25)"
  psql -h 127.0.0.1 -p $PORT -U postgres -X -q -c "BEGIN; SELECT idgen.segment_drop('$name'); SELECT pg_sleep(1.5); COMMIT" >/dev/null &
  local drop=$!
  sleep 0.5
  local out
  out=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -v ON_ERROR_STOP=1 \
    -c "\set VERBOSITY sqlstate" -c "BEGIN ISOLATION LEVEL $2; SELECT 1;" \
    -c "SELECT idgen.segment_create('$name', step => 10)" -c "COMMIT" 2>&1 >/dev/null |
    sed -n 's/^ERROR: *\([0-9A-Z]\{5\}\).*/\1/p')
  wait $drop
  if [ -z "$out" ]; then
    q $PORT "INSERT INTO raced SELECT '$name', segment_next('$name') FROM generate_series(1, 25)"
    echo "ok $(q $PORT "SELECT count(*) - count(DISTINCT id) FROM raced WHERE biz = '$name'")"
  else
    echo "$out"
  fi
}
q $PORT "CREATE TABLE raced (biz text, id bigint)"
check "a create waiting for an open drop (READ COMMITTED) goes on above it: created, no ID repeats" \
  eq "$(race rc 'READ COMMITTED')" "ok 0"
check "a create whose snapshot predates the drop (REPEATABLE READ) fails with 40001" \
  eq "$(race rr 'REPEATABLE READ')" "40001"

phase "DROP DATABASE after segments were used"
# The allocator is connected to the database it serves; PostgreSQL waits up to 5 s for every
# other process of a database being dropped (it tells only autovacuum to leave). The allocator
# is told to leave before the drop counts the processes (it took about 4 s before): the dropping
# session sees it at client_min_messages = debug1. (Its time is shown, not checked: a busy machine
# decides it.)
q $PORT "CREATE DATABASE dropme"
qdb $PORT dropme "CREATE EXTENSION pg_idgen" && qdb $PORT dropme "SELECT idgen.segment_create('t')" >/dev/null
qdb $PORT dropme "SELECT segment_next('t')" >/dev/null
started=$(date +%s%N)
out=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -c "SET client_min_messages = debug1" -c "DROP DATABASE dropme" 2>&1)
ms=$(( ($(date +%s%N) - started) / 1000000 ))
check "DROP DATABASE right after segment_next(): the allocator is told to leave before the drop counts it ($ms ms)" \
  grep -q "DEBUG:  pg_idgen: the allocator of database [0-9]* leaves before DROP DATABASE" <<<"$out"
check "  and the drop succeeds" eq "$(q $PORT "SELECT count(*) FROM pg_database WHERE datname = 'dropme'")" 0
q $PORT "CREATE DATABASE dropme"
qdb $PORT dropme "CREATE EXTENSION pg_idgen" && qdb $PORT dropme "SELECT idgen.segment_create('t')" >/dev/null
check "a database of that name created again gets its allocator and IDs" eq "$(qdb $PORT dropme "SELECT segment_next('t')")" 1
# A drop that fails (a session still connected) has sent the allocator away: the next refill
# starts another.
psql -h 127.0.0.1 -p $PORT -U postgres -d dropme -X -q -c "SELECT pg_sleep(7)" >/dev/null 2>&1 &
sleeper=$!
sleep 0.5
check "DROP DATABASE with a session connected fails" eq "$(q $PORT "DROP DATABASE dropme" 2>&1 | grep -c 'is being accessed by other users')" 1
check "after the failed drop, the type's next ranges come from a new allocator" eq \
  "$(qdb $PORT dropme "SELECT count(DISTINCT x) FROM segment_next_batch('t', 5000) x")" 5000
kill $sleeper 2>/dev/null || true
wait $sleeper 2>/dev/null || true
q $PORT "DROP DATABASE dropme WITH (FORCE)"

phase "more databases than worker slots"
# 12 databases using segments at once on a cluster with room for 2 allocators: callers wait for a
# worker slot as they wait for a range (idle allocators of other databases give theirs up), and
# none gets 53000.
cluster_init segslots $SLOTS "max_worker_processes = 4"
cluster_start segslots
for i in $(seq 1 12); do
  q $SLOTS "CREATE DATABASE d$i"
  qdb $SLOTS d$i "CREATE EXTENSION pg_idgen" && qdb $SLOTS d$i "SELECT idgen.segment_create('t', step => 100)" >/dev/null
done
for i in $(seq 1 12); do
  (qdb $SLOTS d$i "SELECT count(DISTINCT x) FROM (SELECT segment_next('t') x FROM generate_series(1, 3000)) s" >"$OUT/slots.$i" 2>&1 || true) &
done
wait
check "12 databases, 2 allocator slots: every caller got its 3,000 IDs, none 53000" eq \
  "$(cat "$OUT"/slots.* | sort | uniq -c | awk '{print $1 "x" $2}')" "12x3000"
cluster_stop segslots

phase "single-user mode"
# A single-user server (postgres --single, the operator's repair tool) runs no background worker:
# segment_next() and idgen.segment_alloc() say so at once (55000), rather than waiting idgen.segment_wait_timeout and
# blaming max_worker_processes (with a wait timeout of an hour, a wait would be stopped by the
# statement timeout, 57014, not end in 55000).
single=$(printf '%s\n' "SELECT segment_next('t')" "SELECT * FROM idgen.segment_alloc('t')" |
  as_pg "$PGBIN/postgres" --single -D "$(cluster_dir segslots)" -c log_error_verbosity=verbose \
    -c idgen.segment_wait_timeout=1h -c statement_timeout=60s d1 2>&1 || true)
check "single-user mode: segment_next() and idgen.segment_alloc() refuse at once (55000), naming the missing worker" eq \
  "$(grep -c "ERROR:  55000: .*single-user" <<<"$single")|$(grep -c "HINT:  .*pg_ctl start" <<<"$single")|$(grep -c max_worker_processes <<<"$single")|$(grep -c 57014 <<<"$single")" \
  "2|2|0|0"

phase "Two clusters"
# Two clusters, delta 2, remainders 0 and 1 (Tinyid's odd/even databases).
cluster_init sega $A
cluster_init segb $B
cluster_start sega
cluster_start segb
q $A "CREATE EXTENSION pg_idgen; SELECT idgen.segment_create('order', step => 100, delta => 2, remainder => 0)" >/dev/null
q $B "CREATE EXTENSION pg_idgen; SELECT idgen.segment_create('order', step => 100, delta => 2, remainder => 1)" >/dev/null
for port in $A $B; do
  for s in 1 2 3 4; do
    psql -h 127.0.0.1 -p $port -U postgres -X -q \
      -c "COPY (SELECT segment_next('order') FROM generate_series(1, 100000)) TO STDOUT" >"$OUT/split.$port.$s" &
  done
done
wait
cat "$OUT"/split.$A.* >"$OUT/split.A"
cat "$OUT"/split.$B.* >"$OUT/split.B"
check "split: 400,000 IDs from each cluster" eq "$(wc -l <"$OUT/split.A") $(wc -l <"$OUT/split.B")" "400000 400000"
check "split: cluster A hands out only even IDs" eq "$(awk '$1 % 2 != 0' "$OUT/split.A" | wc -l)" 0
check "split: cluster B hands out only odd IDs" eq "$(awk '$1 % 2 != 1' "$OUT/split.B" | wc -l)" 0
check "split: no ID appears twice across both clusters" eq "$(cat "$OUT/split.A" "$OUT/split.B" | sort | uniq -d | wc -l)" 0

phase "A row the allocator cannot read"
# idgen.segments changed by hand (a column's type): the allocator and segment_alter report the
# real cause, not "unknown type" (42704) or a caller left waiting for a refill (it reported
# the type as locked before, and each caller waited idgen.segment_wait_timeout).
qdb $A postgres "CREATE DATABASE unreadable" >/dev/null
qdb $A unreadable "CREATE EXTENSION pg_idgen; SELECT idgen.segment_create('wide');
  ALTER EXTENSION pg_idgen DROP VIEW idgen.segment_status; DROP VIEW idgen.segment_status;
  ALTER TABLE idgen.segments ALTER COLUMN step TYPE bigint, ALTER COLUMN delta TYPE bigint" >/dev/null
# (A caller left waiting would wait an hour: the statement timeout stops it first, with 57014.)
out=$(psql -h 127.0.0.1 -p $A -U postgres -d unreadable -X -q -v VERBOSITY=verbose -c "SET idgen.segment_wait_timeout = '1h'" \
  -c "SET statement_timeout = '60s'" -c "SELECT segment_next('wide')" 2>&1 || true)
check "segment_next: 22000, the row could not be read (not 42704)" \
  grep -q "ERROR:  22000: the allocator could not read or write the row of \"wide\"" <<<"$out"
check "  at once, not after a wait (no statement timeout, 57014)" not_grep -q 57014 <<<"$out"
check "  and the server log has the cause" grep -q 'pg_idgen allocator: the row of "wide" in idgen.segments: .*' "$(cluster_dir sega)/server.log"
out=$(psql -h 127.0.0.1 -p $A -U postgres -d unreadable -X -q -v VERBOSITY=verbose -c "SELECT idgen.segment_alter('wide', 5)" 2>&1 || true)
check "segment_alter: 22000 with the cause, not 42704 unknown type" \
  grep -q "ERROR:  22000: idgen.segment_alter: could not read or write the row of \"wide\" in idgen.segments: ." <<<"$out"
echo "$out" | head -3
finish
