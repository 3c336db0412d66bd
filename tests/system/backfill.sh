#!/usr/bin/env bash
# IDs at a past time (docs/backfill.md): snowflake_at(ts), uuidv7_at(ts) and their batch forms.
# Every way the issue names to make one repeat: many sessions on the same instants at once (scalar
# and batch), a caller's ROLLBACK, kill -9 of a backend, of the allocator and of the server while
# IDs stream out, other databases of the node, two nodes (with a control: two nodes given the same
# backfill worker id do repeat each other, which is why the node refuses what it can see), a
# bucket that runs full (refused, also after a restart), the counters' guard, a layout change, a
# standby; then every refusal with its SQLSTATE, and privileges.
# (Controls run by hand on a build without the counter write of src/backfill/counters.rs: the
# checks of distinct IDs fail.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
A=$(port 0) B=$(port 1) S=$(port 2) C=$(port 3)
trap 'for c in bf_a bf_b bf_s bf_c; do cluster_stop $c immediate 2>/dev/null || true; done' EXIT
out=$(mktemp -d)
chmod 777 "$out"
# state PORT SQL [DB]: what a statement prints, errors with their SQLSTATE, never failing.
state() { psql -h 127.0.0.1 -p "$1" -U postgres -d "${3:-postgres}" -X -q -A -t -c "\set VERBOSITY verbose" -c "$2" 2>&1 || true; }
T="timestamptz '2025-03-01 12:00:00+00'"

phase "refusals until it is set up"
cluster_init bf_a $A "idgen.worker_id = 1" "max_wal_senders = 4"
cluster_start bf_a
q $A "CREATE EXTENSION pg_idgen"
check "no backfill worker id: 55000, the hint says what to set" \
  grep -q "ERROR:  55000: snowflake_at(ts): idgen.backfill_worker_id is not set" <<<"$(state $A "SELECT snowflake_at($T)")"
setting() { q $A "ALTER SYSTEM SET $1" && q $A "SELECT pg_reload_conf()" >/dev/null && sleep 0.3; }
setting "idgen.backfill_worker_id = 1"
check "the node's own worker id: 22023" \
  grep -q "ERROR:  22023: snowflake_at(ts): idgen.backfill_worker_id 1 is this node's own worker id" <<<"$(state $A "SELECT snowflake_at($T)")"
setting "idgen.backfill_worker_id = 1024"
check "a worker id past the layout's bits: 22023" \
  grep -q "ERROR:  22023: idgen.backfill_worker_id 1024 does not fit the layout's worker bits (0 to 1023)" <<<"$(state $A "SELECT snowflake_at($T)")"
setting "idgen.backfill_worker_id = 1023"
check "no backfill database: 55000" \
  grep -q "ERROR:  55000: snowflake_at(ts): idgen.backfill_database is not set" <<<"$(state $A "SELECT snowflake_at($T)")"
setting "idgen.backfill_database = 'nosuch'"
check "a database that does not exist: 3D000" \
  grep -q "ERROR:  3D000: database \"nosuch\" (idgen.backfill_database) does not exist" <<<"$(state $A "SELECT uuidv7_at($T)")"
q $A "CREATE DATABASE bare"
setting "idgen.backfill_database = 'bare'"
check "a database without the extension: 55000, the hint says to create it there" \
  grep -q "ERROR:  55000: database \"bare\" (idgen.backfill_database) has no backfill counters" <<<"$(state $A "SELECT snowflake_at($T)")"
# A database without pg_idgen whose owner planted a table of the counters' name, with a trigger
# that would make its owner a superuser if a superuser (the allocator) wrote into it.
q $A "CREATE ROLE mallory LOGIN CREATEDB"
psql -h 127.0.0.1 -p $A -U mallory -d postgres -X -q -c "CREATE DATABASE trap" >/dev/null
psql -h 127.0.0.1 -p $A -U mallory -d trap -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE SCHEMA idgen_internal;
CREATE TABLE idgen_internal.backfill_counters (stream integer, bucket bigint, next_seq integer,
    updated_at timestamptz DEFAULT now(), PRIMARY KEY (stream, bucket));
CREATE FUNCTION idgen_internal.grab() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN ALTER ROLE mallory SUPERUSER; RETURN NEW; END $$;
CREATE TRIGGER grab BEFORE INSERT OR UPDATE ON idgen_internal.backfill_counters
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.grab();
SQL
setting "idgen.backfill_database = 'trap'"
check "a database whose owner planted the counters' table: 55000, the table is not pg_idgen's" \
  grep -q "ERROR:  55000: database \"trap\" (idgen.backfill_database) has no backfill counters" <<<"$(state $A "SELECT snowflake_at($T)")"
check "... and its trigger never ran as the allocator (its owner is no superuser)" \
  eq "$(q $A "SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'")$(qdb $A trap "SELECT count(*) FROM idgen_internal.backfill_counters")" f0
setting "idgen.backfill_database = 'postgres'"
check "set up: an ID" grep -qE "^[0-9]+$" <<<"$(state $A "SELECT snowflake_at($T)")"
check "a time in the future: 22023" \
  grep -q "ERROR:  22023: snowflake_at(ts): .* is in the future" <<<"$(state $A "SELECT snowflake_at(now() + interval '2 s')")"
check "a time before the layout's epoch: 22003" \
  grep -q "ERROR:  22003: snowflake_at(ts): 2023-12-31 23:59:59.999 UTC is before the layout's epoch" <<<"$(state $A "SELECT snowflake_at('2023-12-31 23:59:59.999+00')")"
check "an infinite time: 22003" grep -q "ERROR:  22003" <<<"$(state $A "SELECT uuidv7_at('infinity')")"
check "a NULL in a batch: 22004" grep -q "ERROR:  22004" <<<"$(state $A "SELECT snowflake_at_batch(ARRAY[$T, NULL])")"
check "NULL in, NULL out" eq "$(state $A "SELECT snowflake_at(NULL) IS NULL AND uuidv7_at(NULL) IS NULL")" t

phase "what a backfilled ID is"
check "its time is the instant's millisecond, its worker the backfill worker id" \
  eq "$(q $A "SELECT ts, worker_id FROM id_decode(snowflake_at('2025-06-01 12:00:00.1239+00'))")" "2025-06-01 12:00:00.123+00|1023"
check "it sorts between the live IDs of the ticks around it" \
  eq "$(q $A "SELECT id_from_timestamp(t) <= b AND b < id_from_timestamp(t + interval '1 ms') FROM (SELECT $T AS t, snowflake_at($T) AS b) x")" t
check "a UUIDv7 at an instant: version 7, its millisecond" \
  eq "$(q $A "SELECT uuid_to_ulid(u) IS NOT NULL, uuidv7_timestamp(u) FROM (SELECT uuidv7_at('2019-05-05 05:05:05.505+00') u) x")" "t|2019-05-05 05:05:05.505+00"
check "a batch: an ID per element in order, one instant's ascending in that order" \
  eq "$(q $A "SELECT bool_and(ts = t) AND bool_and(id > coalesce(prev, 0)) FROM (SELECT t, id, (id_decode(id)).ts, lag(id) OVER (ORDER BY n) prev FROM unnest(ARRAY[$T, $T, $T], snowflake_at_batch(ARRAY[$T, $T, $T])) WITH ORDINALITY x(t, id, n)) y")" t

phase "many sessions on the same instants at once"
q $A "CREATE TABLE got (id bigint, s int); CREATE TABLE got_u (id uuid)"
pids=()
for s in 1 2 3 4 5 6; do
  q $A "INSERT INTO got SELECT snowflake_at($T + (g % 16) * interval '1 ms'), $s FROM generate_series(1, 2000) g" >"$out/s$s" 2>&1 &
  pids+=($!)
done
for s in 7 8; do
  q $A "INSERT INTO got SELECT unnest(snowflake_at_batch(array_agg($T + (g % 16) * interval '1 ms'))), $s FROM generate_series(1, 2000) g" >"$out/s$s" 2>&1 &
  pids+=($!)
done
for s in 9 10 11 12; do
  q $A "INSERT INTO got_u SELECT uuidv7_at($T) FROM generate_series(1, 5000)" >"$out/u$s" 2>&1 &
  pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
show_errors "$out"/s* "$out"/u*
check "every session succeeded" eq "$fails" 0
check "16,000 Snowflake IDs at 16 instants from 8 sessions, all distinct" \
  eq "$(q $A "SELECT count(*), count(DISTINCT id) FROM got")" "16000|16000"
check "... each at its instant, worker 1023" \
  eq "$(q $A "SELECT count(*) FROM got, id_decode(id) d WHERE d.worker_id = 1023 AND d.ts BETWEEN $T AND $T + interval '15 ms'")" 16000
check "20,000 UUIDv7s at one millisecond from 4 sessions, all distinct, all at it" \
  eq "$(q $A "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE uuidv7_timestamp(id) = $T) FROM got_u")" "20000|20000|20000"
check "... and their counters too (the counter, not the random bits, keeps them apart)" \
  eq "$(q $A "SELECT count(DISTINCT substr(id::text, 1, 21)) FROM got_u")" 20000

phase "a caller's ROLLBACK"
T2="timestamptz '2025-04-01 00:00:00+00'"
psql -h 127.0.0.1 -p $A -U postgres -X -q -A -t -v ON_ERROR_STOP=1 \
  -c "BEGIN" -c "CREATE TEMP TABLE r AS SELECT snowflake_at($T2) id FROM generate_series(1, 100)" \
  -c "COPY r TO STDOUT" -c "ROLLBACK" -c "COPY (SELECT snowflake_at($T2) FROM generate_series(1, 100)) TO STDOUT" >"$out/rolled" 2>&1
q $A "COPY (SELECT snowflake_at($T2) FROM generate_series(1, 300)) TO STDOUT" >"$out/after"
check "IDs of a rolled back transaction, the same session's next ones and another session's: all distinct" \
  eq "$(sort "$out/rolled" "$out/after" | uniq -d | wc -l) $(cat "$out/rolled" "$out/after" | wc -l)" "0 500"

phase "kill -9 while IDs stream out"
T3="timestamptz '2025-05-01 00:00:00+00'"
# A session streams IDs of ascending instants to its client; its backend is killed mid-statement (the
# server restarts from the crash: shared memory, the blocks and any open allocation are gone).
# (generate_series in the select list: in FROM it would be made whole before the first row.)
stream_sql="COPY (SELECT snowflake_at($T3 + g * interval '1 ms') FROM (SELECT generate_series(1, 100000000) g) s) TO STDOUT"
psql -h 127.0.0.1 -p $A -U postgres -X -q -c "$stream_sql" >"$out/k1" 2>/dev/null &
sleep 2
victim=$(q $A "SELECT pid FROM pg_stat_activity WHERE query LIKE 'COPY (SELECT snowflake_at%' AND pid <> pg_backend_pid()")
[ -z "$victim" ] || kill -9 "$victim"
wait || true
wait_ready $A
check "a backend was killed mid-stream, after it had sent IDs" test -n "$victim" -a "$(wc -l <"$out/k1")" -gt 1000
# The allocator killed while a batch waits for it.
psql -h 127.0.0.1 -p $A -U postgres -X -q -c "COPY (SELECT unnest(snowflake_at_batch(array_agg($T3 + (g % 5000) * interval '1 s'))) FROM generate_series(1, 400000) g) TO STDOUT" >"$out/k2" 2>/dev/null &
for _ in $(seq 1 50); do
  alloc=$(q $A "SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_idgen segment allocator'" 2>/dev/null || true)
  [ -n "$alloc" ] && break
  sleep 0.1
done
[ -z "$alloc" ] || kill -9 "$alloc"
wait || true
wait_ready $A
check "the allocator was killed mid-batch" test -n "$alloc"
# Then the server itself, stopped as by a power cut.
psql -h 127.0.0.1 -p $A -U postgres -X -q -c "$stream_sql" >"$out/k3" 2>/dev/null &
sleep 2
cluster_stop bf_a immediate
wait || true
cluster_start bf_a
q $A "COPY (SELECT snowflake_at($T3 + g * interval '1 ms') FROM generate_series(1, 20000) g) TO STDOUT" >"$out/k4"
q $A "COPY (SELECT unnest(snowflake_at_batch(array_agg($T3 + (g % 5000) * interval '1 s'))) FROM generate_series(1, 20000) g) TO STDOUT" >"$out/k5"
total=$(cat "$out"/k? | wc -l)
check "IDs streamed before each kill and made after: all distinct ($total)" \
  eq "$(cat "$out"/k? | sort | uniq -d | wc -l)" 0
check "... and many ($total > 40,000)" test "$total" -gt 40000

phase "another database of the node"
q $A "CREATE DATABASE other"
qdb $A other "CREATE EXTENSION pg_idgen"
qdb $A other "COPY (SELECT snowflake_at($T + (g % 16) * interval '1 ms') FROM generate_series(1, 2000) g) TO STDOUT" >"$out/other"
q $A "COPY (SELECT id FROM got) TO STDOUT" >"$out/got"
check "its IDs at the same instants are none of the first database's" eq "$(sort "$out/other" "$out/got" | uniq -d | wc -l)" 0
check "... its counters are the node's, in idgen.backfill_database (none in its own table)" \
  eq "$(qdb $A other "SELECT count(*) FROM idgen_internal.backfill_counters")" 0

phase "two nodes"
cluster_init bf_b $B "idgen.worker_id = 2" "idgen.backfill_worker_id = 1022" "idgen.backfill_database = 'postgres'"
cluster_start bf_b
q $B "CREATE EXTENSION pg_idgen"
q $B "COPY (SELECT snowflake_at($T + (g % 16) * interval '1 ms') FROM generate_series(1, 2000) g) TO STDOUT" >"$out/b"
check "the other node's IDs at the same instants are none of this one's" eq "$(sort "$out/b" "$out/got" | uniq -d | wc -l)" 0
# Control: the other node given the same backfill worker id repeats this one's IDs; nothing on
# either node can see it, which is why docs/backfill.md asks for one id per node, as for live ids.
q $B "ALTER SYSTEM SET idgen.backfill_worker_id = 1023"
q $B "SELECT pg_reload_conf()" >/dev/null
sleep 0.3
q $B "COPY (SELECT snowflake_at($T + (g % 16) * interval '1 ms') FROM generate_series(1, 2000) g) TO STDOUT" >"$out/b_same"
check "control: the same backfill worker id on two nodes repeats IDs" test "$(sort "$out/b_same" "$out/got" | uniq -d | wc -l)" -gt 0
cluster_stop bf_b

phase "a bucket that runs full, and the counters' guard"
cluster_init bf_c $C "idgen.worker_id = 3" "idgen.layout = 'pg_idgen worker=19 sequence=3'" \
  "idgen.backfill_worker_id = 7" "idgen.backfill_database = 'postgres'"
cluster_start bf_c
q $C "CREATE EXTENSION pg_idgen"
q $C "CREATE TABLE full_ids (id bigint)"
for s in 1 2 3; do
  state $C "INSERT INTO full_ids SELECT snowflake_at($T) FROM generate_series(1, 2)" >"$out/f$s" &
done
wait
check "8 sequence numbers per tick: 8 IDs at one instant from several sessions, distinct" \
  eq "$(q $C "INSERT INTO full_ids SELECT unnest(snowflake_at_batch(array_fill($T, ARRAY[8 - (SELECT count(*)::int FROM full_ids)]))); SELECT count(*), count(DISTINCT id) FROM full_ids")" "8|8"
check "the ninth: 54000, saying which instant" \
  grep -q "ERROR:  54000: snowflake_at(ts): all 8 sequence numbers of backfill worker id 7 at 2025-03-01 12:00:00.000 UTC are taken" <<<"$(state $C "SELECT snowflake_at($T)")"
cluster_stop bf_c
cluster_start bf_c
check "... also after a restart (the counters are durable)" grep -q "ERROR:  54000" <<<"$(state $C "SELECT snowflake_at($T)")"
check "a counter cannot move back: 22023" grep -q "ERROR:  22023: a backfill counter can only move forward" \
  <<<"$(state $C "UPDATE idgen_internal.backfill_counters SET next_seq = 0")"
check "... nor a row be deleted or truncated: 55000" \
  eq "$(state $C "DELETE FROM idgen_internal.backfill_counters" | grep -c "ERROR:  55000")$(state $C "TRUNCATE idgen_internal.backfill_counters" | grep -c "ERROR:  55000")" 11
check "pg_dump keeps the counters" grep -q "COPY idgen_internal.backfill_counters" \
  <<<"$(as_pg "$PGBIN/pg_dump" -h 127.0.0.1 -p $C -U postgres postgres)"

phase "a layout change"
cluster_stop bf_c
cluster_conf bf_c "idgen.layout = 'pg_idgen worker=18 sequence=4'"
cluster_start bf_c
sleep 3 # past the time the new layout starts at (the mark's reservation of the last start)
check "after the change, a time before it: 22023, the detail says why" \
  grep -q "ERROR:  22023: snowflake_at(ts): 2025-03-01 12:00:00.000 UTC is before this node's layout took effect" <<<"$(state $C "SELECT snowflake_at($T)")"
check "... a time after it: an ID" grep -qE "^[0-9]+$" <<<"$(state $C "SELECT snowflake_at(now() - interval '1 ms')")"
cluster_stop bf_c

phase "a lease coordinator never leases its backfill worker id"
check "holders leasing in 1021 to 1023 get 1021 and 1022" \
  eq "$(q $A "SELECT string_agg((idgen.worker_acquire('holder' || i, '1 min', 1021, 1023)).worker_id::text, ',' ORDER BY i) FROM generate_series(1, 2) i")" "1021,1022"
check "... the third: 53000, saying that 1023 is the backfill worker id" \
  grep -q "ERROR:  53000.*Id 1023 is this server's backfill worker id" <<<"$(tr '\n' ' ' <<<"$(state $A "SELECT * FROM idgen.worker_acquire('holder3', '1 min', 1021, 1023)")")"
check "a range of only 1023: 53000" \
  grep -q "ERROR:  53000: no worker id is free between 1023 and 1023: 1023 is this server's backfill worker id" <<<"$(state $A "SELECT * FROM idgen.worker_acquire('holder4', '1 min', 1023, 1023)")"

phase "privileges"
q $A "CREATE ROLE alice LOGIN; CREATE ROLE importer LOGIN"
as_alice() { psql -h 127.0.0.1 -p $A -U "$1" -d postgres -X -q -A -t -c "\set VERBOSITY verbose" -c "$2" 2>&1 || true; }
check "a plain role may not backfill: 42501" \
  eq "$(as_alice alice "SELECT snowflake_at($T)" | grep -c "ERROR:  42501")$(as_alice alice "SELECT uuidv7_at_batch(ARRAY[$T])" | grep -c "ERROR:  42501")" 11
check "... nor read the counters: 42501" grep -q "ERROR:  42501" <<<"$(as_alice alice "SELECT * FROM idgen_internal.backfill_counters")"
q $A "GRANT EXECUTE ON FUNCTION snowflake_at(timestamptz) TO importer"
check "a role granted EXECUTE backfills" grep -qE "^[0-9]+$" <<<"$(as_alice importer "SELECT snowflake_at($T)")"
q $A "GRANT idgen_admin TO alice"
check "a member of idgen_admin backfills" grep -qE "^[0-9a-f-]{36}$" <<<"$(as_alice alice "SELECT uuidv7_at($T)")"
q $A "CREATE ROLE loader LOGIN"
check "a member of idgen_admin who is no superuser grants it on, as docs/backfill.md says (before: 01007, nothing granted)" \
  not_grep -q "WARNING" <<<"$(as_alice alice "GRANT EXECUTE ON FUNCTION snowflake_at(timestamptz), snowflake_at_batch(timestamptz[]) TO loader")"
check "... and that role backfills" grep -qE "^[0-9]+$" <<<"$(as_alice loader "SELECT snowflake_at($T)")"

phase "where the counters live: a changed setting, a renamed or new database, a new extension"
# (Control, run by hand on the build before pg_idgen.backfill_homes: each refused call below gave
# the same IDs again, 1,200 of 1,200, as issue 44 found.)
T2="timestamptz '2025-04-01 08:00:00+00'"
bf_ids() { qdb $A "${2:-postgres}" "COPY (SELECT unnest(snowflake_at_batch(array_fill($T2, ARRAY[$1]))) UNION ALL SELECT snowflake_at($T2) FROM generate_series(1, 200)) TO STDOUT"; }
setting "idgen.backfill_worker_id = 1000"
q $A "CREATE DATABASE app"
qdb $A app "CREATE EXTENSION pg_idgen"
setting "idgen.backfill_database = 'app'"
bf_ids 1000 >"$out/home1"
check "1,200 IDs at one instant, counters in database app" eq "$(sort -u "$out/home1" | wc -l)" 1200
setting "idgen.backfill_database = 'other'"
check "the setting moved to another database: 55000, naming where the counters are" \
  grep -q "ERROR:  55000: backfill worker id 1000 has its counters in database \"app\", not in database \"other\"" <<<"$(state $A "SELECT snowflake_at($T2)")"
check "... the batch form too" grep -q "ERROR:  55000: backfill worker id 1000 has its counters in database \"app\"" \
  <<<"$(state $A "SELECT snowflake_at_batch(ARRAY[$T2])")"
setting "idgen.backfill_database = 'app'"
q $A "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'app'" >/dev/null
sleep 0.5
q $A "ALTER DATABASE app RENAME TO app_old"
q $A "CREATE DATABASE app"
qdb $A app "CREATE EXTENSION pg_idgen"
check "the database renamed and a new one under its name: 55000, naming the renamed one" \
  grep -q "ERROR:  55000: backfill worker id 1000 has its counters in database \"app_old\", not in database \"app\"" <<<"$(state $A "SELECT snowflake_at($T2)")"
setting "idgen.backfill_database = 'app_old'"
bf_ids 1000 >"$out/home2"
check "the setting following the rename: its counters go on, none of the 2,400 IDs repeats" \
  eq "$(sort -u "$out/home1" "$out/home2" | wc -l)" 2400
q $A "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'app_old'" >/dev/null
qdb $A app_old "DROP EXTENSION pg_idgen; CREATE EXTENSION pg_idgen"
check "the extension dropped and created again there: 55000, an earlier table of that database" \
  grep -q "ERROR:  55000: backfill worker id 1000 has its counters in an earlier idgen_internal.backfill_counters of database \"app_old\"" <<<"$(state $A "SELECT snowflake_at($T2)")"
q $A "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'app_old'" >/dev/null
q $A "DROP DATABASE app_old"
setting "idgen.backfill_database = 'app'"
check "the database dropped: 55000, saying it no longer exists" \
  grep -q "ERROR:  55000: backfill worker id 1000 has its counters in database oid [0-9]*, which no longer exists" <<<"$(state $A "SELECT snowflake_at($T2)")"
check "... the hint: another backfill worker id, never used" \
  grep -q "HINT:  Set idgen.backfill_database back to the database that holds them, or set idgen.backfill_worker_id to a worker id no node and no app server has ever used" <<<"$(state $A "SELECT snowflake_at($T2)")"
setting "idgen.backfill_worker_id = 999"
bf_ids 10 >"$out/home3"
check "a new backfill worker id starts in the new database" eq "$(sort -u "$out/home3" | wc -l)" 210
check "the node's record names each id's table" eq \
  "$(as_pg cat "$(cluster_dir bf_a)/pg_idgen.backfill_homes" | grep -c '^worker_id=\(1023\|1000\|999\) ')" 3
cluster_stop bf_a
cluster_start bf_a
check "... and is kept across a restart" grep -q "ERROR:  55000: backfill worker id 999 has its counters in database \"app\"" \
  <<<"$(q $A "ALTER SYSTEM SET idgen.backfill_database = 'other'" && q $A "SELECT pg_reload_conf()" >/dev/null && sleep 0.3 && state $A "SELECT snowflake_at($T2)")"

phase "a backfill worker id that a holder has leased"
# (Control, run by hand on the build before the check: backfills with 1021 were made, equal in
# bits to the live IDs of its holder at those instants.)
setting "idgen.backfill_database = 'postgres'"
setting "idgen.backfill_worker_id = 1021"
check "leased here (holder1 holds 1021): 22023, naming the lease" \
  grep -q "ERROR:  22023: snowflake_at(ts): idgen.backfill_worker_id 1021 has been leased to a holder in this database" <<<"$(state $A "SELECT snowflake_at($T2)")"
check "... from another database, the counters' database sees it: 22023" \
  grep -q "ERROR:  22023: idgen.backfill_worker_id 1021 has been leased to a holder in database \"postgres\"" <<<"$(state $A "SELECT snowflake_at($T2)" other)"
q $A "SELECT idgen.worker_release(worker_id, code, lease => lease) FROM idgen.worker_leases WHERE worker_id = 1021" >/dev/null
check "... also once released (its holder made IDs with it)" \
  grep -q "ERROR:  22023: snowflake_at(ts): idgen.backfill_worker_id 1021 has been leased" <<<"$(state $A "SELECT snowflake_at($T2)")"
setting "idgen.backfill_worker_id = 1023"

phase "a standby"
q $A "CHECKPOINT"
standby_init bf_s $A $S
cluster_start bf_s
check "on a standby: 25006" grep -q "ERROR:  25006" <<<"$(state $S "SELECT snowflake_at($T)")"
cluster_stop bf_s
finish
