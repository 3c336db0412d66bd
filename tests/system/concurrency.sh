#!/usr/bin/env bash
# docs/guarantees.md, guarantee 1: 8 sessions x 500k IDs at once on one node, all unique, each session's IDs
# strictly increasing; a parallel query's workers share the same generator.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
SESSIONS=${SESSIONS:-8}
PER=${PER:-500000}
cluster_init conc $PORT "idgen.worker_id = 3" "max_parallel_workers_per_gather = 2"
cluster_start conc
trap 'cluster_stop conc immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen; CREATE UNLOGGED TABLE ids (s int, g int, id bigint)"
for s in $(seq 1 "$SESSIONS"); do
  q $PORT "INSERT INTO ids SELECT $s, g, snowflake_next() FROM generate_series(1, $PER) g" &
done
wait
check "all $((SESSIONS * PER)) rows arrived" eq "$(q $PORT "SELECT count(*) FROM ids")" "$((SESSIONS * PER))"
check "no ID repeats" eq "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM ids")" 0
check "each session's IDs strictly increase" eq "$(q $PORT "SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY s ORDER BY g) AS prev FROM ids) x WHERE id <= prev")" 0
check "every ID carries worker id 3" eq "$(q $PORT "SELECT count(*) FROM ids, id_decode(id) d WHERE d.worker_id <> 3 LIMIT 1")" 0
# Parallel workers: force a parallel plan whose workers call snowflake_next().
q $PORT "CREATE TABLE big AS SELECT g FROM generate_series(1, 400000) g; ANALYZE big"
par=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -v ON_ERROR_STOP=1 <<'SQL'
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
CREATE TABLE par AS SELECT snowflake_next() AS id FROM big;
SELECT count(*) - count(DISTINCT id) FROM par;
SQL
)
check "IDs made by parallel workers do not repeat" eq "$par" 0
# Message IDs (RongCloud's format) from many sessions at once: one shared sequence per node, so unique
# across sessions, and each session's IDs in increasing text order.
q $PORT "CREATE UNLOGGED TABLE msgs (s int, g int, id text COLLATE \"C\")"
for s in $(seq 1 "$SESSIONS"); do
  q $PORT "INSERT INTO msgs SELECT $s, g, msgid_next(g % 16, 'room-' || (g % 10)) FROM generate_series(1, $((PER / 5))) g" &
done
wait
check "message IDs: all $((SESSIONS * PER / 5)) arrived" eq "$(q $PORT "SELECT count(*) FROM msgs")" "$((SESSIONS * PER / 5))"
check "message IDs: none repeats across sessions" eq "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM msgs")" 0
check "message IDs: each session's are in increasing text order" eq "$(q $PORT "SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY s ORDER BY g) AS prev FROM msgs) x WHERE id <= prev")" 0
check "message IDs: decode gives back each one's session type" eq "$(q $PORT "SELECT count(*) FROM msgs, msgid_decode(id) d WHERE d.session_type <> g % 16")" 0
# Batches are taken lazily, one tick's worth as rows are read (since 0.2.5): batches and single
# calls of 8 sessions at once, held to the layout's capacity (max_drift 0) so that every batch
# waits for the clock between ticks while the others take from the same ticks. And a batch read
# only in part: the rest is never taken.
q $PORT "ALTER SYSTEM SET idgen.max_drift = 0" && q $PORT "SELECT pg_reload_conf()" >/dev/null
q $PORT "CREATE UNLOGGED TABLE batch (s int, g bigint, id bigint)"
for s in $(seq 1 "$SESSIONS"); do
  if [ $((s % 2)) = 0 ]; then
    q $PORT "INSERT INTO batch SELECT $s, row_number() OVER (), id FROM snowflake_next_batch($PER) id" &
  else
    q $PORT "INSERT INTO batch SELECT $s, g, snowflake_next() FROM generate_series(1, $((PER / 5))) g" &
  fi
done
wait
q $PORT "ALTER SYSTEM RESET idgen.max_drift" && q $PORT "SELECT pg_reload_conf()" >/dev/null
check "batches held to capacity: all rows arrived" eq "$(q $PORT "SELECT count(*) FROM batch")" \
  "$((SESSIONS / 2 * PER + (SESSIONS - SESSIONS / 2) * PER / 5))"
check "batches and single calls at once: no ID repeats" eq "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM batch")" 0
check "each batch ascends" eq "$(q $PORT "SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY s ORDER BY g) AS prev FROM batch) x WHERE id <= prev")" 0
# (In the select list the function's rows are read as the query needs them; in FROM, PostgreSQL
# reads all of them first.)
before=$(q $PORT "SELECT ids_issued FROM idgen.status")
half=$(q $PORT "SELECT count(*) FROM (SELECT snowflake_next_batch(10000000) LIMIT 5000) x")
took=$(($(q $PORT "SELECT ids_issued FROM idgen.status") - before))
check "a batch of 10M read to its 5000th row gave 5000 rows and took $took IDs, not 10M" \
  test "$half" = 5000 -a "$took" -lt 100000
# A session that made IDs before a reload follows the new settings from its next statement (its
# generator is made again): held to the layout's capacity (max_drift 0: the clock policy
# continue borrows one tick at most), no ID of a burst above that capacity (about 7 calls a
# microsecond here, against 4 IDs) is timed more than 1 ms after the moment it was made. With
# the old setting (60 s) they would run tens of ms ahead.
ahead=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -v ON_ERROR_STOP=1 \
  -c "SELECT count(snowflake_next()) FROM generate_series(1, 1000)" \
  -c "ALTER SYSTEM SET idgen.max_drift = 0" -c "SELECT pg_reload_conf(), pg_sleep(0.3)" \
  -c "SELECT current_setting('idgen.max_drift'), count(*) FILTER (WHERE id_timestamp(id) > clock_timestamp() + interval '1 ms') FROM (SELECT snowflake_next() FROM generate_series(1, 400000)) s(id)" |
  tail -1)
q $PORT "ALTER SYSTEM RESET idgen.max_drift" && q $PORT "SELECT pg_reload_conf()" >/dev/null
# (The session shows the setting it ran under: a reload that reached it late would be named.)
check "after a reload to max_drift 0, the same session's IDs are at most a tick ahead of the clock" eq "$ahead" "0|0"
check "status counted every ID" test "$(q $PORT "SELECT ids_issued FROM idgen.status")" -ge "$((SESSIONS * PER + 400000))"
finish
