#!/usr/bin/env bash
# A free created_at (docs/snowflake.md, docs/uuidv7.md, docs/partitioning.md): a condition on the
# time inside a key gets the key range it implies added before planning, so the key's index and
# partition pruning serve it, and never changes which rows a query finds.
#   - EXPLAIN of each form: id_timestamp with the node's or a named layout, uuidv7_timestamp,
#     PostgreSQL's uuid_extract_timestamp (17+) where a constraint allows only version 7 (and
#     nothing where it does not: version 1 keeps its time elsewhere), a view's created_at, a
#     virtual generated column (18+), a generic plan's parameter, partitions pruned at plan time
#     and at executor start; nothing under OR, with a volatile time, or with the setting off;
#   - other roles: a plain role's query reads the range (the bound functions are PUBLIC's), and
#     nothing is added (no error either) where an administrator revoked them; a look-alike
#     id_timestamp of another role is never taken for pg_idgen's;
#   - an extension of an older version (no bound functions) under this library: nothing added,
#     no error;
#   - the differential test (tests/helpers/created_at_differential.sql): thousands of random
#     conditions over tables of awkward keys, on and off, the same rows every time; its control:
#     a bound one key too tight, by hand, is caught. (Run once against the build with the core's
#     inclusive lower bound one tick too high: 118 of 1,500 conditions disagreed.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=26429
EXTDIR="$("$PG_CONFIG" --sharedir)/extension"
MAJOR=$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
cluster_init created_at $PORT "idgen.worker_id = 1"
cluster_start created_at
trap 'cluster_stop created_at immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen" >/dev/null
# plan "SQL": the plan, one line.
plan() { q $PORT "SET client_min_messages = error; EXPLAIN (COSTS OFF) $1" | tr '\n' ' '; }
ranged() { grep -qE "Index Cond: \(.*id [<>]= " <<<"$(plan "$1")"; }
unranged() { ! grep -qE "idgen_internal|Index Cond" <<<"$(plan "$1")"; }
# sorted_by_key SQL: no sort by the time; a sort by the key, or none at all (an index's order)
sorted_by_key() {
  local p
  p=$(q $PORT "SET client_min_messages = error; EXPLAIN (COSTS OFF) $1")
  ! grep -qE "Sort Key: .*(id_timestamp|uuidv7_timestamp|uuid_extract_timestamp|created_at)" <<<"$p" &&
    { ! grep -q "Sort Key:" <<<"$p" || grep -qE "Sort Key: (.*, )?([a-z_]+\.)?id( DESC)?( NULLS (FIRST|LAST))?$" <<<"$p"; } ||
    { echo "$p" | sed 's/^/    /' >&2; return 1; }
}
sorted_by_time() { grep -qE "Sort Key: .*(id_timestamp|uuidv7_timestamp|uuid_extract_timestamp)" <<<"$(q $PORT "$1; EXPLAIN (COSTS OFF) $2")"; }

phase "tables: 200,000 Snowflake IDs and UUIDv7s over 23 days"
q $PORT "CREATE TABLE orders (id bigint PRIMARY KEY, v int);
         INSERT INTO orders SELECT id_from_timestamp(now() - g * interval '10 seconds') + g % 1000, g FROM generate_series(1, 200000) g;
         CREATE TABLE events (id uuid PRIMARY KEY, v int);
         INSERT INTO events SELECT uuidv7_from_timestamp(now() - g * interval '10 seconds'), g FROM generate_series(1, 200000) g;
         CREATE VIEW orders_v AS SELECT *, id_timestamp(id) AS created_at FROM orders;
         ANALYZE" >/dev/null

check "id_timestamp(id) >= now() - interval '1 hour': an index range on id" \
  ranged "SELECT * FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'"
check "id_timestamp(id, 'pg_idgen') BETWEEN two dates: both bounds, folded to constants" \
  grep -qE "Index Cond: \(\(id >= '[0-9]+'::bigint\) AND \(id <= '[0-9]+'::bigint\)\)" \
  <<<"$(plan "SELECT * FROM orders WHERE id_timestamp(id, 'pg_idgen') BETWEEN '2026-11-01' AND '2026-11-02'")"
check "a time on the left: now() - interval '1 day' < id_timestamp(id)" \
  ranged "SELECT * FROM orders WHERE now() - interval '1 day' < id_timestamp(id)"
check "uuidv7_timestamp(id) > now() - interval '1 hour': an index range on the uuid" \
  ranged "SELECT * FROM events WHERE uuidv7_timestamp(id) > now() - interval '1 hour'"
check "uuidv7_timestamp(id) BETWEEN two dates: both bounds on the uuid" \
  grep -qE "Index Cond: \(\(id >= '[0-9a-f-]+'::uuid\) AND \(id <= '[0-9a-f-]+'::uuid\)\)" \
  <<<"$(plan "SELECT * FROM events WHERE uuidv7_timestamp(id) BETWEEN '2026-11-01' AND '2026-11-02'")"
check "a view's created_at (id_timestamp(id) AS created_at): a range on the table's id" \
  ranged "SELECT * FROM orders_v WHERE created_at >= now() - interval '1 hour'"
check "a range the query already carries (as a Citus coordinator sends it) is not added again" eq \
  "$(plan "SELECT * FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'
             AND id >= idgen_internal.id_time_lower(now() - interval '1 hour', true, 'pg_idgen')" | grep -o id_time_lower | wc -l)" 1
q $PORT "PREPARE recent(timestamptz) AS SELECT count(*) FROM orders WHERE id_timestamp(id) >= \$1" >/dev/null
check "a generic plan: the parameter's range, computed at execution" grep -q "id_time_lower(\$1, true" \
  <<<"$(q $PORT "SET plan_cache_mode = force_generic_plan; PREPARE recent(timestamptz) AS SELECT count(*) FROM orders WHERE id_timestamp(id) >= \$1; EXPLAIN (COSTS OFF) EXECUTE recent(now())" | tr '\n' ' ')"
check "the same rows as without: the last hour" eq \
  "$(q $PORT "SELECT count(*), sum(v) FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'")" \
  "$(q $PORT "SET idgen.time_conditions = off; SELECT count(*), sum(v) FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'")"
check "idgen.time_conditions = off: a sequential scan, nothing added" grep -q "Seq Scan on orders" \
  <<<"$(q $PORT "SET idgen.time_conditions = off; EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'" | tr '\n' ' ')"
check "under OR nothing is implied: nothing added" \
  unranged "SELECT * FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour' OR v = 7"
check "a volatile time (clock_timestamp()): nothing added" \
  unranged "SELECT * FROM orders WHERE id_timestamp(id) >= clock_timestamp() - interval '1 hour'"
check "a time from another column of the row: nothing added" \
  unranged "SELECT * FROM orders WHERE id_timestamp(id) >= now() - v * interval '1 second'"

phase "outer joins: the added range stands where the condition stands, nulled by the same joins"
q $PORT "CREATE TABLE few AS SELECT generate_series(1, 100) AS v; ANALYZE few" >/dev/null
same_on_and_off() { # same_on_and_off SQL: the same answer (no error) with the derivation on and off
  local on off
  on=$(q $PORT "$1" 2>&1)
  off=$(q $PORT "SET idgen.time_conditions = off; $1" 2>&1)
  [ "$on" = "$off" ] && [[ "$on" =~ ^[0-9]+$ ]] || { echo "    on: $on, off: $off" >&2; return 1; }
}
check "a view's created_at in a LEFT JOIN's ON" \
  same_on_and_off "SELECT count(*) FROM few LEFT JOIN orders_v o ON o.v = few.v AND o.created_at >= now() - interval '1 hour'"
check "a view's created_at over a LEFT JOIN, in WHERE" \
  same_on_and_off "SELECT count(*) FROM few LEFT JOIN orders_v o ON o.v = few.v WHERE o.created_at >= now() - interval '1 day' OR o.created_at IS NULL"
check "a view's created_at in a FULL JOIN's ON" \
  same_on_and_off "SELECT count(*) FROM few FULL JOIN orders_v o ON o.v = few.v AND o.created_at > now() - interval '2 hours'"

phase "other roles"
q $PORT "CREATE ROLE ca_reader LOGIN; GRANT SELECT ON orders TO ca_reader;
         CREATE ROLE ca_mallory LOGIN; CREATE SCHEMA mallory AUTHORIZATION ca_mallory" >/dev/null
as_role() { psql -h 127.0.0.1 -p $PORT -U "$1" -d postgres -X -q -A -t -v ON_ERROR_STOP=1 -c "$2" 2>&1; } # as_role ROLE SQL
as_reader() { as_role ca_reader "$1"; }
check "a plain role: its query reads a range (the bound functions are PUBLIC's)" eq \
  "$(as_reader "SELECT count(*) > 0 FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'")|$(as_reader "EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'" | grep -c "id_time_lower")" "t|1"
q $PORT "REVOKE EXECUTE ON FUNCTION idgen_internal.id_time_lower(timestamptz, boolean, text) FROM PUBLIC" >/dev/null
check "a bound function revoked from PUBLIC: the plain role's query works, nothing added" eq \
  "$(as_reader "SELECT count(*) > 0 FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'")|$(as_reader "EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'" | grep -c "idgen_internal")" "t|0"
q $PORT "GRANT EXECUTE ON FUNCTION idgen_internal.id_time_lower(timestamptz, boolean, text) TO PUBLIC" >/dev/null
psql -h 127.0.0.1 -p $PORT -U ca_mallory -d postgres -X -q -c "
  CREATE FUNCTION mallory.id_timestamp(bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS 'SELECT now()'" >/dev/null
check "a look-alike id_timestamp of another role is not taken for pg_idgen's: nothing added" \
  unranged "SELECT * FROM orders WHERE mallory.id_timestamp(id) >= now() - interval '1 hour'"

phase "partitions by key range (docs/partitioning.md)"
q $PORT "CREATE TABLE p (id bigint PRIMARY KEY, v int) PARTITION BY RANGE (id);
  DO \$\$ DECLARE d date; BEGIN FOR i IN 0..9 LOOP d := current_date - 8 + i;
    EXECUTE format('CREATE TABLE p_%s PARTITION OF p FOR VALUES FROM (%s) TO (%s)', i,
      (SELECT lower FROM id_range(d, d + 1, 'pg_idgen')), (SELECT upper FROM id_range(d, d + 1, 'pg_idgen')));
  END LOOP; END \$\$;
  INSERT INTO p SELECT id, v FROM orders WHERE id_timestamp(id) >= current_date - 8 AND id_timestamp(id) < current_date + 2" >/dev/null
yesterday_noon=$(q $PORT "SELECT (current_date - 1)::timestamptz + interval '12 hours'")
check "a constant time: partitions pruned at plan time (yesterday, today, tomorrow: 3 of 10 scanned)" eq \
  "$(plan "SELECT * FROM p WHERE id_timestamp(id, 'pg_idgen') >= '$yesterday_noon'" | grep -o "on p_[0-9]*" | sort -u | wc -l)" 3
check "now(): partitions pruned at executor start" grep -q "Subplans Removed: [6-9]" \
  <<<"$(q $PORT "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM p WHERE id_timestamp(id) >= now() - interval '1 day'" | tr '\n' ' ')"

if [ "$MAJOR" -ge 17 ]; then
  q $PORT "CREATE TABLE ev7 (id uuid PRIMARY KEY CHECK (uuid_extract_version(id) = 7), v int);
           CREATE TABLE evany (id uuid PRIMARY KEY, v int);
           INSERT INTO ev7 SELECT * FROM events; INSERT INTO evany SELECT * FROM events; ANALYZE ev7, evany" >/dev/null
  check "uuid_extract_timestamp where CHECK (uuid_extract_version(id) = 7): a range" \
    ranged "SELECT * FROM ev7 WHERE uuid_extract_timestamp(id) >= now() - interval '1 hour'"
  check "uuid_extract_timestamp(id) > \$1 (a generic plan) where the constraint allows only version 7: a range" grep -q "uuidv7_time_lower(\$1, false)" \
    <<<"$(q $PORT "SET plan_cache_mode = force_generic_plan; PREPARE ev(timestamptz) AS SELECT * FROM ev7 WHERE uuid_extract_timestamp(id) > \$1; EXPLAIN (COSTS OFF) EXECUTE ev(now())" | tr '\n' ' ')"
  check "uuid_extract_timestamp without that constraint (a version 1 UUID's time is elsewhere): nothing" \
    unranged "SELECT * FROM evany WHERE uuid_extract_timestamp(id) >= now() - interval '1 hour'"
  check "ORDER BY uuid_extract_timestamp(id) DESC LIMIT 5 under that constraint: by the key; without it: by the time" eq \
    "$(sorted_by_key "SELECT * FROM ev7 ORDER BY uuid_extract_timestamp(id) DESC LIMIT 5" && echo key)|$(
      sorted_by_time "" "SELECT * FROM evany ORDER BY uuid_extract_timestamp(id) DESC LIMIT 5" 2>/dev/null && echo time)" "key|time"
else
  echo "  skipped: uuid_extract_timestamp (PostgreSQL 17 and later; this is $MAJOR)"
fi
if [ "$MAJOR" -ge 18 ]; then
  q $PORT "ALTER TABLE ev7 ADD created_at timestamptz GENERATED ALWAYS AS (uuid_extract_timestamp(id)) VIRTUAL" >/dev/null
  check "a virtual created_at over uuid_extract_timestamp: a range on the key" \
    ranged "SELECT * FROM ev7 WHERE created_at >= now() - interval '1 hour'"
  check "ORDER BY a virtual created_at DESC LIMIT 5: by the key" sorted_by_key "SELECT * FROM ev7 ORDER BY created_at DESC LIMIT 5"
  check "a virtual created_at in a LEFT JOIN's ON, and over one in WHERE" eq \
    "$(same_on_and_off "SELECT count(*) FROM few LEFT JOIN ev7 e ON e.v = few.v AND e.created_at >= now() - interval '1 hour'" && echo ok)|$(same_on_and_off "SELECT count(*) FROM few LEFT JOIN ev7 e ON e.v = few.v WHERE e.created_at >= now() - interval '1 hour'" && echo ok)" "ok|ok"
  # PostgreSQL refuses an extension's function in a virtual column (so far): the docs say to use a
  # view or uuid_extract_timestamp; this check says when that changes.
  check "a virtual column over id_timestamp: PostgreSQL $MAJOR refuses it (the docs' recipe is a view)" grep -q "user-defined function" \
    <<<"$(q $PORT "ALTER TABLE orders ADD created_at timestamptz GENERATED ALWAYS AS (id_timestamp(id, 'pg_idgen')) VIRTUAL" 2>&1)"
  check "docs/uuidv7.md runs as written, its virtual created_at too" \
    python3 "$REPO/tools/doctest.py" --port $PORT --with pg18 "$REPO/docs/uuidv7.md"
else
  echo "  skipped: virtual generated columns (PostgreSQL 18 and later; this is $MAJOR)"
fi

phase "ORDER BY the time inside a key: the key's order"
check "ORDER BY id_timestamp(id) DESC LIMIT 5: the key's index read backwards, no sort" grep -q "Index Scan Backward using orders_pkey" \
  <<<"$(plan "SELECT * FROM orders ORDER BY id_timestamp(id) DESC LIMIT 5")"
check "a view's created_at, ORDER BY created_at DESC LIMIT 5, only created_at selected: the same" grep -q "Backward using orders_pkey" \
  <<<"$(plan "SELECT created_at FROM orders_v ORDER BY created_at DESC LIMIT 5")"
check "ORDER BY uuidv7_timestamp(id) LIMIT 5: the uuid's index, no sort" \
  sorted_by_key "SELECT * FROM events ORDER BY uuidv7_timestamp(id) LIMIT 5"
check "ORDER BY v, id_timestamp(id): the last key only, by the key" sorted_by_key "SELECT * FROM orders ORDER BY v, id_timestamp(id)"
check "ORDER BY id_timestamp(id), v: not the last key, left alone (its ties are v's to order)" \
  sorted_by_time "" "SELECT * FROM orders ORDER BY id_timestamp(id), v"
check "DISTINCT, GROUP BY, a window: left alone" eq "$(sorted_by_time "" "SELECT DISTINCT id_timestamp(id) FROM orders ORDER BY 1" && echo a)$(
  sorted_by_time "" "SELECT id_timestamp(id), count(*) FROM orders GROUP BY 1 ORDER BY 1" && echo b)$(
  sorted_by_time "" "SELECT id_timestamp(id), row_number() OVER () FROM orders ORDER BY 1" && echo c)" abc
check "idgen.time_conditions = off: a sort by the time" \
  sorted_by_time "SET idgen.time_conditions = off" "SELECT * FROM orders ORDER BY id_timestamp(id) DESC LIMIT 5"
# A view may show created_at to a role it hides id from: the order of the keys within one tick is
# id's to tell, so that role's query keeps its sort by the time.
q $PORT "CREATE ROLE ca_times LOGIN; GRANT SELECT (created_at, v) ON orders_v TO ca_times;
         CREATE ROLE ca_all LOGIN; GRANT SELECT ON orders_v TO ca_all" >/dev/null
check "a role that may read the view's created_at but not its id: sorted by the time, as before" grep -q "Sort Key: (id_timestamp" \
  <<<"$(as_role ca_times "EXPLAIN (COSTS OFF) SELECT created_at FROM orders_v ORDER BY created_at DESC LIMIT 5")"
check "a role that may read the whole view: the key's order" grep -q "Backward using orders_pkey" \
  <<<"$(as_role ca_all "EXPLAIN (COSTS OFF) SELECT created_at FROM orders_v ORDER BY created_at DESC LIMIT 5")"
# The differential part: every direction, NULLs first and last, limits, a key before it, three
# layouts, over keys on and beside tick edges of each (many rows a tick), random ones and NULLs:
# the times come out in the same sequence with it on and off (rows of one time may come in another
# order: the times show only the order the query asked for).
q $PORT "CREATE TABLE ord (id bigint, v int);
  INSERT INTO ord SELECT (random() * 2147483647)::bigint, g FROM generate_series(1, 3000) g;
  INSERT INTO ord SELECT e, e % 7 FROM (SELECT (k::bigint << s) + d AS e FROM unnest(array[10, 22, 24]) s,
    generate_series(1, 60) k, unnest(array[-1, 0, 1]) d) x WHERE e BETWEEN 0 AND 2147483647;
  INSERT INTO ord SELECT NULL, g FROM generate_series(1, 25) g;
  CREATE INDEX ON ord (id);
  CREATE TABLE ord_u (id uuid, v int);
  INSERT INTO ord_u SELECT uuidv7_from_timestamp(now() - (g % 97) * interval '1 millisecond'), g FROM generate_series(1, 2000) g;
  INSERT INTO ord_u SELECT uuidv7_next(), g FROM generate_series(1, 500) g;
  INSERT INTO ord_u SELECT NULL, g FROM generate_series(1, 25) g;
  CREATE INDEX ON ord_u (id);
  ANALYZE ord, ord_u" >/dev/null
queries="$WORK/created_at_order.sql"
for t in "ord:id_timestamp(id, 'pg_idgen')" "ord:id_timestamp(id, 'sonyflake')" "ord:id_timestamp(id, 'westid32')" "ord_u:uuidv7_timestamp(id)"; do
  for dir in "" " DESC"; do for nulls in "" " NULLS FIRST" " NULLS LAST"; do for lim in "" " LIMIT 1" " LIMIT 40"; do
    for before in "" "v % 3, "; do
      echo "SELECT ${before%, }${before:+, }${t#*:} FROM ${t%%:*} ORDER BY $before${t#*:}$dir$nulls$lim;"
    done
  done; done; done
done >"$queries"
# WITH TIES takes the rows of the last one's time: left alone, and the same rows
ties="$WORK/created_at_ties.sql"
q $PORT "CREATE TABLE tied AS SELECT (k::bigint << 24) + j * 100 AS id FROM generate_series(1, 20) k, generate_series(0, 9) j;
         CREATE INDEX ON tied (id); ANALYZE tied" >/dev/null  # 10 keys a tick in all three layouts
for t in "tied:id_timestamp(id, 'pg_idgen')" "tied:id_timestamp(id, 'westid32')" "ord_u:uuidv7_timestamp(id)"; do
  for dir in "" " DESC"; do
    echo "SELECT count(*), min(t), max(t) FROM (SELECT ${t#*:} t FROM ${t%%:*} WHERE id IS NOT NULL
            ORDER BY ${t#*:}$dir FETCH FIRST 5 ROWS WITH TIES) x;" | tr -d '\n'
    echo
  done
done >"$ties"
n_queries=$(wc -l <"$queries")
# run_sql FILE on|off: the file's output, then psql's exit status (3 at the first error)
run_sql() { psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -v ON_ERROR_STOP=1 -c "SET idgen.time_conditions = $2" -f "$1" 2>&1; echo "exit $?"; }
orders_off=$(run_sql "$queries" off)
check "$n_queries sorts by the time: the same sequence of times on and off, all run" eq \
  "$(run_sql "$queries" on | md5sum)|$(tail -1 <<<"$orders_off")" "$(md5sum <<<"$orders_off")|exit 0"
by_key=0
while read -r sql; do sorted_by_key "$sql" 2>/dev/null && by_key=$((by_key + 1)); done <"$queries"
check "... and every one of them was sorted by the key" eq "$by_key" "$n_queries"
ties_on=$(run_sql "$ties" on)
check "FETCH FIRST 5 ROWS WITH TIES (ties by the time, more than 5 rows): the same rows on and off" eq "$ties_on" "$(run_sql "$ties" off)"
check "... a tick's worth of ties in each, all run" eq "$(awk -F'|' '$1 + 0 > 5' <<<"$ties_on" | wc -l)|$(tail -1 <<<"$ties_on")" "6|exit 0"

phase "an older extension under this library"
PREV=$(sed -n 's|.*sql/released/pg_idgen--\(.*\)\.sql$|\1|p' "$REPO/sql/released.sha256" | sort -V | tail -1)
$SUDO install -m 644 "$REPO/sql/released/pg_idgen--$PREV.sql" "$EXTDIR/"
q $PORT "CREATE DATABASE old" >/dev/null
qdb $PORT old "CREATE EXTENSION pg_idgen VERSION '$PREV'; CREATE TABLE t AS SELECT id_from_timestamp(now() - g * interval '1 minute') AS id FROM generate_series(1, 100) g" >/dev/null
check "$PREV (no bound functions): the query works, nothing added" eq \
  "$(qdb $PORT old "SELECT count(*) FROM t WHERE id_timestamp(id) >= now() - interval '30 minutes' - interval '1 second'")|$(qdb $PORT old "EXPLAIN (COSTS OFF) SELECT * FROM t WHERE id_timestamp(id) >= now() - interval '1 hour'" | grep -c idgen_internal)" "30|0"

phase "the differential test: random conditions, on and off"
q $PORT "CREATE DATABASE diff" >/dev/null
qdb $PORT diff "CREATE EXTENSION pg_idgen" >/dev/null
psql -h 127.0.0.1 -p $PORT -U postgres -d diff -X -q -v ON_ERROR_STOP=1 -f "$REPO/tests/helpers/created_at_differential.sql" >/dev/null
seed=$((RANDOM % 1000))
qdb $PORT diff "SET client_min_messages = error; SELECT setseed($seed / 1000.0); SELECT ca_tables()" >/dev/null
disagree=$(qdb $PORT diff "SET client_min_messages = error; SELECT setseed($seed / 1000.0 - 0.5); SELECT * FROM ca_differential(400)" 2>&1 | tail -n +2)
stats=$(qdb $PORT diff "SELECT conditions || ' conditions over ' || tables || ' tables, ' || ranged || ' of ' || expected || ' read as a key range' FROM ca_stats")
check "the same rows, derivation on and off, through the index and as a filter (seed $seed; $stats)" eq "$disagree" ""
check "every condition that implies a range was read as one" eq \
  "$(qdb $PORT diff "SELECT ranged = expected AND conditions > 5000 FROM ca_stats")" t
check "control: a bound one key too tight, by hand, finds other rows (the data reach the edges)" ne \
  "$(qdb $PORT diff "SET client_min_messages = error; SELECT ca_control(100)")" 0
finish
