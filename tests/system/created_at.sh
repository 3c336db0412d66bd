#!/usr/bin/env bash
# A free created_at (docs/snowflake.md, docs/uuidv7.md, docs/partitioning.md): a condition on the
# time inside a key gets the key range it implies added before planning, so the key's index and
# partition pruning serve it, and never changes which rows a query finds.
#   - EXPLAIN of each form: id_timestamp with the node's or a named layout, uuidv7_timestamp,
#     PostgreSQL's uuid_extract_timestamp (18+) where a constraint allows only version 7 (and
#     nothing where it does not: version 1 keeps its time elsewhere), a view's created_at, a
#     virtual generated column (18+), a generic plan's parameter, partitions pruned at plan time
#     and at executor start; nothing under OR, with a volatile time, or with the setting off;
#   - the range in place of the condition where it is exact (no Filter on the time left), beside
#     it where not (a version-7 CHECK without IS NOT NULL); times as a timestamp or a date (what
#     ORMs send) in zones of odd offsets, a generic plan across SET TimeZone; a key the decoder
#     refuses; row estimates within 2x (and a control estimated too low), UUID ranges narrower than
#     a histogram bucket too (their control: the same range by hand), as a plain role, through a
#     security barrier view and on partitions, the marker that carries them out of every plan;
#     min and max of a UUID key's time from its index (pg_idgen's min_key/max_key); UPDATE/DELETE counted,
#     PL/pgSQL and SQL functions, a join on the key, all as with the setting off;
#   - what must never change a result: set operations, grouping sets, NULL versions, foreign
#     tables, revoked and squatted schemas, thousands of conditions (bounded, interruptible);
#   - other roles: a plain role's query reads the range (the bound functions are PUBLIC's), and
#     nothing is added (no error either) where an administrator revoked them; a look-alike
#     id_timestamp of another role is never taken for pg_idgen's;
#   - an extension of an older version (no bound functions) under this library: nothing added,
#     no error;
#   - the differential test (tests/system/created_at_differential.sql): thousands of random
#     conditions over tables of awkward keys, on and off, the same rows every time; its control:
#     a bound one key too tight, by hand, is caught. (Run once against the build with the core's
#     inclusive lower bound one tick too high: 118 of 1,500 conditions disagreed.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
EXTDIR="$("$PG_CONFIG" --sharedir)/extension"
MAJOR=$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
cluster_init created_at $PORT "idgen.worker_id = 1"
cluster_start created_at
trap 'cluster_stop created_at immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen" >/dev/null
# plan "SQL": the plan, one line.
plan() { q $PORT "${PLAN_ZONE:+SET TimeZone = '$PLAN_ZONE'; }SET client_min_messages = error; EXPLAIN (COSTS OFF) $1" | tr '\n' ' '; } # in zone $PLAN_ZONE, if set
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

same_on_and_off() { # same_on_and_off SQL: the same answer (no error) with the derivation on and off
  local on off
  on=$(q $PORT "$1" 2>&1)
  off=$(q $PORT "SET idgen.time_conditions = off; $1" 2>&1)
  [ "$on" = "$off" ] && [[ "$on" =~ ^[0-9]+$ ]] || { echo "    on: $on, off: $off" >&2; return 1; }
}

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
# (One time for both: orders has a row every 10 s, and now() moves between two statements.)
since=$(q $PORT "SELECT now() - interval '1 hour'")
check "the same rows as without: the last hour" eq \
  "$(q $PORT "SELECT count(*), sum(v) FROM orders WHERE id_timestamp(id) >= '$since'")" \
  "$(q $PORT "SET idgen.time_conditions = off; SELECT count(*), sum(v) FROM orders WHERE id_timestamp(id) >= '$since'")"
check "idgen.time_conditions = off: a sequential scan, nothing added" grep -q "Seq Scan on orders" \
  <<<"$(q $PORT "SET idgen.time_conditions = off; EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'" | tr '\n' ' ')"
check "under OR nothing is implied: nothing added" \
  unranged "SELECT * FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour' OR v = 7"
check "a volatile time (clock_timestamp()): nothing added" \
  unranged "SELECT * FROM orders WHERE id_timestamp(id) >= clock_timestamp() - interval '1 hour'"
check "a time from another column of the row: nothing added" \
  unranged "SELECT * FROM orders WHERE id_timestamp(id) >= now() - v * interval '1 second'"

phase "the range in place of the condition (exact for these keys), and the times ORMs send"
# filtered SQL: the plan reads a key range and still checks the time on each row it reads
filtered() { local p; p=$(plan "$1"); grep -qE "Index Cond: \(.*id [<>]= " <<<"$p" && grep -qE "Filter: .*(id_timestamp|uuidv7_timestamp|uuid_extract_timestamp)" <<<"$p"; }
# replaced SQL: a key range, and no time left to check on each row
replaced() {
  local p
  p=$(plan "$1")
  grep -qE "Index Cond: \(.*id [<>]= " <<<"$p" && ! grep -qE "(id_timestamp|uuidv7_timestamp|uuid_extract_timestamp)\(" <<<"$p" ||
    { echo "    $p" >&2; return 1; }
}
check "id_timestamp(id) >= now() - interval '1 hour': the range alone (EXPLAIN shows no Filter on the time)" \
  replaced "SELECT * FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'"
check "a view's created_at BETWEEN: both bounds, nothing else" \
  replaced "SELECT * FROM orders_v WHERE created_at BETWEEN now() - interval '2 hours' AND now() - interval '1 hour'"
check "uuidv7_timestamp(id) > now() - interval '1 hour': the range alone" \
  replaced "SELECT * FROM events WHERE uuidv7_timestamp(id) > now() - interval '1 hour'"
check "a timestamp without time zone (localtimestamp, SQLAlchemy's and Django's naive datetimes): the range alone" \
  replaced "SELECT * FROM orders_v WHERE created_at >= localtimestamp - interval '1 hour'"
check "a date (current_date, an ORM's day): the range alone" \
  replaced "SELECT * FROM orders_v WHERE created_at >= current_date - 1 AND created_at < current_date"
check "a timestamp parameter in a generic plan: its range, computed at execution" grep -q "id_time_lower(\$1, true" \
  <<<"$(q $PORT "SET plan_cache_mode = force_generic_plan; PREPARE naive(timestamp) AS SELECT count(*) FROM orders_v WHERE created_at >= \$1; EXPLAIN (COSTS OFF) EXECUTE naive(localtimestamp)" | tr '\n' ' ')"
# The same rows in zones of odd offsets: timestamps and dates, literals and parameters of a
# generic plan. Times are fixed once (T0), so that the rows at a bound do not move between runs.
T0=$(q $PORT "SELECT now()")
for zone in UTC America/St_Johns Asia/Kathmandu Pacific/Chatham; do
  check "TimeZone $zone: timestamp and date comparisons find the same rows as without the range" same_on_and_off \
    "SET TimeZone = '$zone'; SELECT abs(sum(hashtext(id::text))) FROM orders_v WHERE created_at >= '$T0'::timestamp - interval '3 days 7 hours 13 minutes' AND created_at < ('$T0'::date - 1) AND created_at <> ('$T0'::date - 2)::timestamp"
done
# generic_plan_in_zones on|off: the counts of one generic plan of a timestamp parameter, run in
# two zones with the same wall-clock time (two instants)
generic_plan_in_zones() {
  q $PORT "SET idgen.time_conditions = $1; SET plan_cache_mode = force_generic_plan; PREPARE z(timestamp) AS SELECT count(*) FROM orders_v WHERE created_at >= \$1;
    SET TimeZone = 'UTC'; EXECUTE z('$T0'::timestamp - interval '5 hours'); SET TimeZone = 'Asia/Kathmandu'; EXECUTE z('$T0'::timestamp - interval '5 hours')" | tr '\n' ' '
}
on_counts=$(generic_plan_in_zones on)
check "a generic plan of a timestamp parameter, executed in two zones: each the rows of its zone, as without the range ($on_counts)" eq \
  "$on_counts|$(awk '{print ($1 != $2)}' <<<"$on_counts")" "$(generic_plan_in_zones off)|1"
# A key the decoder refuses (-1: no Snowflake ID of any layout): the one row whose fate differs,
# as with any index, documented: read without the range, its decoding fails; the range skips it.
q $PORT "CREATE TABLE refused (id bigint PRIMARY KEY); INSERT INTO refused SELECT id FROM orders ORDER BY id DESC LIMIT 100; INSERT INTO refused VALUES (-1); ANALYZE refused" >/dev/null
check "a key the decoder refuses (-1): an error without the range (22023), none with it (docs/snowflake.md says so)" eq \
  "$(q $PORT "SET enable_seqscan = off; SELECT count(*) FROM refused WHERE id_timestamp(id) >= now() - interval '1 day'" 2>&1)|$(q $PORT "SET idgen.time_conditions = off; SELECT count(*) FROM refused WHERE id_timestamp(id) >= now() - interval '1 day'" 2>&1 | grep -o "out of range\|invalid\|ERROR" | head -1)" "100|ERROR"
# Estimates: the key's own statistics answer a replaced condition (a condition kept beside it is
# estimated at 1/3 or 1/200: 3x to 200x too few rows).
# estimate_within SQL: EXPLAIN ANALYZE's estimated rows of the scan within 2x of its actual rows
estimate_within() {
  local line est act
  line=$(q $PORT "${ESTIMATE_AS:+SET ROLE $ESTIMATE_AS;} EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) $1" | grep -m1 -E "Scan .*rows=[0-9]+.*rows=[0-9]+")
  est=$(sed -E 's/.*\(cost=[^ ]* rows=([0-9]+).*/\1/' <<<"$line")
  act=$(sed -E 's/.*\(actual rows=([0-9.]+).*/\1/' <<<"$line" | cut -d. -f1)
  [ -n "$est" ] && [ -n "$act" ] && [ "$act" -gt 0 ] && [ $((est * 2)) -ge "$act" ] && [ $((act * 2)) -ge "$est" ] ||
    { echo "    estimated $est, actual $act: $line" >&2; return 1; }
}
check "estimate of the last hour within 2x of the rows read" estimate_within "SELECT * FROM orders WHERE id_timestamp(id) >= now() - interval '1 hour'"
check "estimate of a day a week ago (two dates, a view's created_at) within 2x" \
  estimate_within "SELECT * FROM orders_v WHERE created_at >= current_date - 7 AND created_at < current_date - 6"
check "estimate of uuidv7_timestamp(id) over two timestamps within 2x" \
  estimate_within "SELECT * FROM events WHERE uuidv7_timestamp(id) BETWEEN localtimestamp - interval '2 days' AND localtimestamp - interval '1 day'"
estimate_too_low() { ! estimate_within "$@" 2>/dev/null; }
check "control: the same day with a time condition kept beside the range (one no range replaces) is estimated too low" \
  estimate_too_low "SELECT * FROM orders_v WHERE created_at >= current_date - 7 AND created_at < current_date - 6 AND id_timestamp(id) + interval '0 s' >= current_date - 7"
# UUID ranges narrower than a histogram bucket (events: 200,000 keys 10 s apart, 100 buckets of
# about 5.5 hours): PostgreSQL places no uuid inside a bucket (half a bucket, or one row where both
# ends fall in one), pg_idgen's support function does (src/created_at/estimates.rs).
hour_ago() { echo "uuidv7_timestamp(id) >= '$T0'::timestamptz - interval '$1 hours' AND uuidv7_timestamp(id) < '$T0'::timestamptz - interval '$(($1 - 1)) hours'"; }
for h in 30 200 400; do
  check "estimate of one hour of UUIDv7 keys ${h} hours ago (inside a histogram bucket) within 2x" \
    estimate_within "SELECT * FROM events WHERE $(hour_ago $h)"
done
lit0=$(q $PORT "SELECT '$T0'::timestamptz - interval '250 hours'") lit1=$(q $PORT "SELECT '$T0'::timestamptz - interval '249 hours'")
check "estimate of one hour of UUIDv7 keys between two constants (the bounds folded while planning) within 2x" \
  estimate_within "SELECT * FROM events WHERE uuidv7_timestamp(id) >= '$lit0' AND uuidv7_timestamp(id) < '$lit1'"
check "estimate of the last 20 minutes of UUIDv7 keys (one side, inside the last bucket) within 2x" \
  estimate_within "SELECT * FROM events WHERE uuidv7_timestamp(id) >= '$T0'::timestamptz - interval '20 minutes'"
# Keys written since ANALYZE lie beyond the histogram (a table keyed by time grows at its top):
# 100,000 keys over 10 days up to a day ago, analyzed, then a day more at the same pace (below
# autovacuum's threshold, and its analyze off for this table).
q $PORT "CREATE TABLE grown (id uuid PRIMARY KEY) WITH (autovacuum_enabled = false);
         INSERT INTO grown SELECT uuidv7_from_timestamp('$T0'::timestamptz - interval '1 day' - g * interval '8.64 seconds') FROM generate_series(1, 100000) g;
         ANALYZE grown;
         INSERT INTO grown SELECT uuidv7_from_timestamp('$T0'::timestamptz - g * interval '8.64 seconds') FROM generate_series(0, 9999) g" >/dev/null
for span in "1 hour" "12 hours" "3 days"; do
  check "estimate of the last $span of UUIDv7 keys, most written since ANALYZE (above the histogram), within 2x" \
    estimate_within "SELECT * FROM grown WHERE uuidv7_timestamp(id) >= '$T0'::timestamptz - interval '$span'"
done
check "estimate of a local day of UUIDv7 keys (a range beside its comparison) within 2x" \
  estimate_within "SELECT * FROM events WHERE (uuidv7_timestamp(id) AT TIME ZONE 'Asia/Kathmandu')::date = ('$T0'::timestamptz - interval '3 days')::date"
check "control: the same hour 200 hours ago as the range by hand (no marker) is estimated more than 2x off" \
  estimate_too_low "SELECT * FROM events WHERE id >= idgen_internal.uuidv7_time_lower('$T0'::timestamptz - interval '200 hours', true) AND id <= idgen_internal.uuidv7_time_upper('$T0'::timestamptz - interval '199 hours', false)"
check "control: and so it is with the setting off" \
  estimate_too_low "SET idgen.time_conditions = off; SELECT * FROM events WHERE id >= idgen_internal.uuidv7_time_lower('$T0'::timestamptz - interval '200 hours', true) AND id <= idgen_internal.uuidv7_time_upper('$T0'::timestamptz - interval '199 hours', false)"
# The marker that carries the estimate is always true and taken out of every plan: through a view,
# a subquery the range cannot enter (LIMIT), an outer join's ON, a DELETE, a security barrier.
q $PORT "CREATE VIEW events_v AS SELECT id, v, uuidv7_timestamp(id) AS created_at FROM events;
         CREATE VIEW events_sb WITH (security_barrier) AS SELECT id, v, uuidv7_timestamp(id) AS created_at FROM events WHERE v > 0" >/dev/null
for sql in "SELECT * FROM events_v WHERE created_at >= now() - interval '1 hour'" \
  "SELECT * FROM (SELECT * FROM events_v ORDER BY v LIMIT 1000) s WHERE created_at >= now() - interval '1 hour'" \
  "SELECT * FROM orders o LEFT JOIN events e ON e.v = o.v AND uuidv7_timestamp(e.id) >= now() - interval '1 hour'" \
  "SELECT * FROM events e RIGHT JOIN orders o ON e.v = o.v AND uuidv7_timestamp(e.id) >= now() - interval '1 hour'" \
  "DELETE FROM events WHERE uuidv7_timestamp(id) < now() - interval '100 years'" \
  "SELECT * FROM events_sb WHERE created_at >= now() - interval '1 hour'"; do
  check "no marker left in the plan of: ${sql:0:70}" eq "$(plan "$sql" | grep -c key_range_estimate)" 0
done
q $PORT "CREATE ROLE ca_estimates; GRANT SELECT ON events TO ca_estimates" >/dev/null
ESTIMATE_AS=ca_estimates check "a plain role's hour of UUIDv7 keys 200 hours ago: estimated within 2x (the marker is PUBLIC's)" \
  estimate_within "SELECT * FROM events WHERE $(hour_ago 200)"
check "a security barrier view's hour of UUIDv7 keys: estimated within 2x (the marker goes down with its range)" \
  estimate_within "SELECT * FROM events_sb WHERE created_at >= '$T0'::timestamptz - interval '200 hours' AND created_at < '$T0'::timestamptz - interval '199 hours'"
q $PORT "CREATE TABLE events_p (id uuid, v int) PARTITION BY RANGE (id);
         CREATE TABLE events_p1 PARTITION OF events_p FOR VALUES FROM (MINVALUE) TO (uuidv7_from_timestamp('$T0'::timestamptz - interval '300 hours'));
         CREATE TABLE events_p2 PARTITION OF events_p FOR VALUES FROM (uuidv7_from_timestamp('$T0'::timestamptz - interval '300 hours')) TO (MAXVALUE);
         CREATE INDEX ON events_p (id); INSERT INTO events_p SELECT * FROM events; ANALYZE events_p" >/dev/null
for h in 200 400; do
  check "a partitioned table's hour of UUIDv7 keys ${h} hours ago: estimated within 2x" \
    estimate_within "SELECT * FROM events_p WHERE $(hour_ago $h)"
done
check "the marker is true for every key, NULL too" eq "$(q $PORT "SELECT idgen_internal.key_range_estimate(NULL) AND idgen_internal.key_range_estimate(gen_random_uuid())")" t
# Statements and functions: the same rows changed, counted; PL/pgSQL and SQL functions.
check "UPDATE ... WHERE id_timestamp(id) < ...: the same rows changed" \
  same_on_and_off "BEGIN; WITH u AS (UPDATE orders SET v = v + 1 WHERE id_timestamp(id) < '$T0'::timestamptz - interval '20 days' RETURNING id) SELECT count(*) FROM u; ROLLBACK"
check "DELETE ... WHERE a view's created_at is older than a date: the same rows deleted" \
  same_on_and_off "BEGIN; WITH d AS (DELETE FROM orders WHERE id IN (SELECT id FROM orders_v WHERE created_at < '$T0'::date - 21) RETURNING id) SELECT count(*) FROM d; ROLLBACK"
q $PORT "CREATE FUNCTION recent_plpgsql(t timestamp) RETURNS bigint LANGUAGE plpgsql AS \$\$ BEGIN RETURN (SELECT count(*) FROM orders_v WHERE created_at >= t); END \$\$;
         CREATE FUNCTION recent_sql(t timestamptz) RETURNS bigint LANGUAGE sql STABLE AS \$\$ SELECT count(*) FROM orders WHERE id_timestamp(id) >= t \$\$" >/dev/null
check "a PL/pgSQL function's query (a timestamp argument), called 7 times (its plan cached): the same count" \
  same_on_and_off "SELECT sum(recent_plpgsql('$T0'::timestamp - g * interval '1 hour')) FROM generate_series(1, 7) g"
check "an SQL function's query: the same count" same_on_and_off "SELECT recent_sql('$T0'::timestamptz - interval '2 days')"
check "a join on the key, the time on one side: the same rows" \
  same_on_and_off "SELECT count(*) FROM orders o JOIN orders_v r ON r.id = o.id WHERE r.created_at >= '$T0'::date - 2 AND o.v % 3 = 0"
# A join of two keyed tables by the time of each: the plan the ranges written by hand get (its
# nodes and their order; conditions aside), which needs their estimates. Control: the same with
# a condition PostgreSQL estimates at its default (1/200) kept beside the ranges gets another.
q $PORT "CREATE TABLE lines (id bigint PRIMARY KEY, order_id bigint NOT NULL, qty int);
         INSERT INTO lines SELECT id + 7, id, v % 5 FROM orders WHERE v % 2 = 0;
         CREATE INDEX ON lines (order_id); ANALYZE lines" >/dev/null
shape() { q $PORT "EXPLAIN (COSTS OFF) $1" | grep -vE '^ *(->  )?(Index Cond|Filter|Hash Cond|Recheck Cond|Join Filter|Merge Cond|Sort Key):' | tr -s ' ' | tr '\n' ' '; }
join_by_time="SELECT sum(l.qty) FROM orders o JOIN lines l ON l.order_id = o.id WHERE id_timestamp(o.id) >= '$T0'::timestamptz - interval '2 days' AND id_timestamp(l.id) >= '$T0'::timestamptz - interval '3 days'"
join_by_hand="SELECT sum(l.qty) FROM orders o JOIN lines l ON l.order_id = o.id WHERE o.id >= id_from_timestamp('$T0'::timestamptz - interval '2 days') AND l.id >= id_from_timestamp('$T0'::timestamptz - interval '3 days')"
check "a join of two keyed tables by time: the plan of the ranges written by hand ($(shape "$join_by_hand" | grep -oE '(Hash|Merge) Join|Nested Loop' | head -1))" eq \
  "$(shape "$join_by_time")" "$(shape "$join_by_hand")"
check "control: with a condition estimated at PostgreSQL's default (1/200) kept beside them, another plan" ne \
  "$(shape "$join_by_hand AND (o.v + 0) = (o.v + 0)")" "$(shape "$join_by_hand")"
check "... and the same rows on and off" same_on_and_off "$join_by_time"

phase "a local time of the key's time: ::date, AT TIME ZONE, date_trunc (what ORMs write for a day)"
# Each reads a key range, and keeps the comparison beside it: a local time is not monotone in the
# instant (clocks fall back), so the range comes from the zone's offsets near it, when the
# statement runs, and is wider where they change; the range stands alone only for a time that is
# a constant, in a zone (a constant one, or the session's as the statement is planned) whose clocks
# do not change near it.
check "created_at::date = a day (Django's __date, SQLAlchemy's cast(..., Date)): a key range, the comparison kept" \
  filtered "SELECT * FROM orders_v WHERE created_at::date = current_date - 3"
check "(created_at AT TIME ZONE 'UTC')::date = a day (Django with USE_TZ): a key range, and no comparison left (a constant zone without a clock change near the day: exact)" \
  replaced "SELECT * FROM orders_v WHERE (created_at AT TIME ZONE 'UTC')::date = '$(q $PORT "SELECT current_date - 3")'"
check "... in America/New_York on 2025-07-01 and >= 2027-07-01: exact too; on 2025-11-02, whose clocks fall back, the comparison is kept; so it is for > a day" eq \
  "$(replaced "SELECT * FROM orders_v WHERE (created_at AT TIME ZONE 'America/New_York')::date = '2025-07-01'" && echo r)|$(replaced "SELECT * FROM orders_v WHERE (created_at AT TIME ZONE 'America/New_York')::date >= '2027-07-01'" && echo r)|$(filtered "SELECT * FROM orders_v WHERE (created_at AT TIME ZONE 'America/New_York')::date = '2025-11-02'" && echo f)|$(filtered "SELECT * FROM orders_v WHERE (created_at AT TIME ZONE 'America/New_York')::date > '2027-07-01'" && echo f)" "r|r|f|f"
check "... and in the session's zone (created_at::date, date_trunc('day', created_at)) compared with a constant: exact in the zone it is planned in (UTC) and replaced by constants; in America/New_York on 2025-11-02 (its clocks fall back) and on 2025-11-05 (a change within a week), kept" eq \
  "$(replaced "SELECT * FROM orders_v WHERE created_at::date = '2025-07-01'" && echo r)|$(replaced "SELECT * FROM orders_v WHERE date_trunc('day', created_at) = '2025-07-01 00:00+00'" && echo r)|$(PLAN_ZONE=America/New_York filtered "SELECT * FROM orders_v WHERE created_at::date = '2025-11-02'" && echo f)|$(PLAN_ZONE=America/New_York filtered "SELECT * FROM orders_v WHERE date_trunc('day', created_at) = '2025-11-05 00:00-05'" && echo f)" "r|r|f|f"
# A plan made of a zone's constants is right in that zone only: a cached one is made again when
# the zone changes (pg::zone_plans). The zones' days differ by 14 hours here.
zone_day() { # zone_day on|off: a prepared statement's and a PL/pgSQL function's plans, made in UTC, run in Kiritimati
  q $PORT "SET idgen.time_conditions = $1; SET plan_cache_mode = force_generic_plan;
    PREPARE zd AS SELECT count(*) || ':' || sum(hashtext(id::text)) FROM orders_v WHERE created_at::date = '$(q $PORT "SELECT '$T0'::date - 5")';
    CREATE FUNCTION pg_temp.zd() RETURNS text LANGUAGE plpgsql AS \$\$ BEGIN
      RETURN (SELECT count(*) || ':' || sum(hashtext(id::text)) FROM orders_v WHERE date_trunc('day', created_at) = '$T0'::date - 6); END \$\$;
    SET TimeZone = 'UTC'; EXECUTE zd; SELECT pg_temp.zd();
    SET TimeZone = 'Pacific/Kiritimati'; EXECUTE zd; SELECT pg_temp.zd();
    BEGIN; SET LOCAL TimeZone = 'UTC'; EXECUTE zd; SELECT pg_temp.zd(); COMMIT; EXECUTE zd; SELECT pg_temp.zd()" | tr '\n' ' '
}
check "a prepared statement's and a PL/pgSQL function's plans of a day in the session's zone, run after SET TimeZone, SET LOCAL and its end: made again, the rows of each zone as without the range" eq \
  "$(zone_day on)" "$(zone_day off)"
day5=$(q $PORT "SELECT '$T0'::date - 5")
check "a cursor of a day in the session's zone, declared in UTC and fetched after SET TimeZone: the day of UTC, the zone it was planned in (docs/snowflake.md says so)" eq \
  "$(q $PORT "SET TimeZone = 'UTC'; BEGIN; DECLARE c CURSOR FOR SELECT count(*) || ':' || sum(hashtext(id::text)) FROM orders_v WHERE created_at::date = '$day5';
     SET TimeZone = 'Pacific/Kiritimati'; FETCH c; COMMIT")" \
  "$(q $PORT "SET TimeZone = 'UTC'; SET idgen.time_conditions = off; SELECT count(*) || ':' || sum(hashtext(id::text)) FROM orders_v WHERE created_at::date = '$day5'")"
check "date_trunc('day', created_at) = a timestamptz of now(): a key range, the comparison kept (no constant)" \
  filtered "SELECT * FROM orders_v WHERE date_trunc('day', created_at) = date_trunc('day', now() - interval '3 days')"
check "date_trunc('day', created_at AT TIME ZONE 'Asia/Kathmandu') >= a timestamp (Django's TruncDay): a key range" \
  filtered "SELECT * FROM orders_v WHERE date_trunc('day', created_at AT TIME ZONE 'Asia/Kathmandu') >= localtimestamp - interval '1 day'"
check "date_trunc('hour', uuidv7_timestamp(id), 'Europe/Paris') >= a timestamptz: a key range" \
  filtered "SELECT * FROM events WHERE date_trunc('hour', uuidv7_timestamp(id), 'Europe/Paris') >= now() - interval '2 hours'"
check "a unit date_trunc takes but the bounds do not serve ('days'), an unknown zone, a dynamic abbreviation (MSK): nothing added" \
  eq "$(for c in "date_trunc('days', created_at) = now()" "created_at AT TIME ZONE 'Europe/Nowhere' > localtimestamp" "created_at AT TIME ZONE 'MSK' > localtimestamp"; do plan "SELECT * FROM orders_v WHERE $c" | grep -c idgen_internal; done | tr '\n' ' ')" "0 0 0 "
check "an unknown unit: the same error on and off (the rows are read), not none" eq \
  "$(q $PORT "SELECT count(*) FROM orders_v WHERE date_trunc('fortnight', created_at) > 'infinity'" 2>&1 | grep -o 'not recognized' | head -1)|$(q $PORT "SET idgen.time_conditions = off; SELECT count(*) FROM orders_v WHERE date_trunc('fortnight', created_at) > 'infinity'" 2>&1 | grep -o 'not recognized' | head -1)" "not recognized|not recognized"
check "a generic plan of ::date = \$1 across SET TimeZone: the rows of each zone, as without the range" eq \
  "$(for on in on off; do q $PORT "SET idgen.time_conditions = $on; SET plan_cache_mode = force_generic_plan; PREPARE d(date) AS SELECT count(*) FROM orders_v WHERE created_at::date = \$1;
    SET TimeZone = 'UTC'; EXECUTE d('$T0'::date - 5); SET TimeZone = 'Pacific/Kiritimati'; EXECUTE d('$T0'::date - 5)" | tr '\n' ' '; echo; done | sort -u | wc -l)" 1
if [ "$MAJOR" -ge 17 ]; then
  check "AT LOCAL (PostgreSQL 17): a key range" filtered "SELECT * FROM orders_v WHERE created_at AT LOCAL >= localtimestamp - interval '1 day'"
else
  echo "  skipped: AT LOCAL (PostgreSQL 17 and later; this is $MAJOR)"
fi

phase "outer joins: the added range stands where the condition stands, nulled by the same joins"
q $PORT "CREATE TABLE few AS SELECT generate_series(1, 100) AS v; ANALYZE few" >/dev/null
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

if [ "$MAJOR" = 17 ]; then
  # 17's uuid_extract_timestamp reads version 1 only (NULL for a version 7 UUID): no range there
  # finds anything, so none is added.
  q $PORT "CREATE TABLE ev7 (id uuid PRIMARY KEY CHECK (uuid_extract_version(id) = 7 AND uuid_extract_version(id) IS NOT NULL), v int);
           INSERT INTO ev7 SELECT * FROM events; ANALYZE ev7" >/dev/null
  check "PostgreSQL 17: uuid_extract_timestamp reads no version 7 time, nothing added even under the version-7 CHECK" \
    unranged "SELECT * FROM ev7 WHERE uuid_extract_timestamp(id) >= now() - interval '1 hour'"
fi
if [ "$MAJOR" -ge 18 ]; then
  q $PORT "CREATE TABLE ev7 (id uuid PRIMARY KEY CHECK (uuid_extract_version(id) = 7 AND uuid_extract_version(id) IS NOT NULL), v int);
           CREATE TABLE ev7null (id uuid PRIMARY KEY CHECK (uuid_extract_version(id) = 7), v int);
           CREATE TABLE evany (id uuid PRIMARY KEY, v int);
           INSERT INTO ev7 SELECT * FROM events; INSERT INTO evany SELECT * FROM events; INSERT INTO ev7null SELECT * FROM events;
           ANALYZE ev7, evany, ev7null" >/dev/null
  check "uuid_extract_timestamp where CHECK (uuid_extract_version(id) = 7): a range" \
    ranged "SELECT * FROM ev7 WHERE uuid_extract_timestamp(id) >= now() - interval '1 hour'"
  check "uuid_extract_timestamp(id) > \$1 (a generic plan) where the constraint allows only version 7: a range" grep -q "uuidv7_time_lower(\$1, false)" \
    <<<"$(q $PORT "SET plan_cache_mode = force_generic_plan; PREPARE ev(timestamptz) AS SELECT * FROM ev7 WHERE uuid_extract_timestamp(id) > \$1; EXPLAIN (COSTS OFF) EXECUTE ev(now())" | tr '\n' ' ')"
  check "... that range alone, where the CHECK also says the version is not NULL (every key has a time)" \
    replaced "SELECT * FROM ev7 WHERE uuid_extract_timestamp(id) >= now() - interval '1 hour'"
  check "... beside the condition, where the CHECK says only = 7 (the Nil UUID's time is NULL: the range is not exact)" \
    filtered "SELECT * FROM ev7null WHERE uuid_extract_timestamp(id) >= now() - interval '1 hour'"
  check "uuid_extract_timestamp where the CHECK says only = 7 (a UUID with no version passes it): a range, and a sort by the time" eq \
    "$(ranged "SELECT * FROM ev7null WHERE uuid_extract_timestamp(id) >= now() - interval '1 hour'" && echo range)|$(
      sorted_by_time "" "SELECT * FROM ev7null ORDER BY uuid_extract_timestamp(id) DESC LIMIT 5" 2>/dev/null && echo time)" "range|time"
  check "uuid_extract_timestamp without that constraint (a version 1 UUID's time is elsewhere): nothing" \
    unranged "SELECT * FROM evany WHERE uuid_extract_timestamp(id) >= now() - interval '1 hour'"
  check "ORDER BY uuid_extract_timestamp(id) DESC LIMIT 5 under that constraint: by the key; without it: by the time" eq \
    "$(sorted_by_key "SELECT * FROM ev7 ORDER BY uuid_extract_timestamp(id) DESC LIMIT 5" && echo key)|$(
      sorted_by_time "" "SELECT * FROM evany ORDER BY uuid_extract_timestamp(id) DESC LIMIT 5" 2>/dev/null && echo time)" "key|time"
else
  echo "  skipped: uuid_extract_timestamp of a version 7 UUID (PostgreSQL 18 and later; this is $MAJOR)"
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
# (10 keys a tick in all three layouts, and 10 UUIDv7s a millisecond: made at given times, not by
# the clock, so that the ties do not depend on how fast a loaded machine makes IDs.)
q $PORT "CREATE TABLE tied AS SELECT (k::bigint << 24) + j * 100 AS id FROM generate_series(1, 20) k, generate_series(0, 9) j;
         CREATE INDEX ON tied (id); ANALYZE tied;
         CREATE TABLE tied_u AS SELECT uuidv7_from_timestamp(now() - k * interval '1 millisecond') AS id
           FROM generate_series(1, 20) k, generate_series(0, 9) j;
         INSERT INTO tied_u SELECT NULL FROM generate_series(1, 5);
         CREATE INDEX ON tied_u (id); ANALYZE tied_u" >/dev/null
for t in "tied:id_timestamp(id, 'pg_idgen')" "tied:id_timestamp(id, 'westid32')" "tied_u:uuidv7_timestamp(id)"; do
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

phase "min and max of the time: of the key, from its index"
check "SELECT max(created_at) FROM a view (Django's Max()): one row of the key's index, backwards" grep -q "Index Only Scan Backward using orders_pkey" \
  <<<"$(plan "SELECT max(created_at) FROM orders_v")"
check "min(id_timestamp(id)) and max(id_timestamp(id, 'pg_idgen')): both from the index" eq \
  "$(plan "SELECT min(id_timestamp(id)), max(id_timestamp(id, 'pg_idgen')) FROM orders" | grep -o "Index Only Scan[a-zA-Z ]* using orders_pkey" | wc -l)" 2
check "max(uuidv7_timestamp(id)) and min(...) of a UUID key: both from the index (pg_idgen's max_key/min_key, PostgreSQL has no max(uuid))" eq \
  "$(plan "SELECT max(uuidv7_timestamp(id)), min(uuidv7_timestamp(id)) FROM events" | grep -o "Index Only Scan[a-zA-Z ]* using events_pkey" | wc -l)" 2
check "control: with the setting off the same is an aggregate over every row" eq \
  "$(q $PORT "SET idgen.time_conditions = off; EXPLAIN (COSTS OFF) SELECT max(uuidv7_timestamp(id)), min(uuidv7_timestamp(id)) FROM events" | grep -c "Index Only Scan")" 0
q $PORT "GRANT SELECT ON events, events_v TO ca_reader; REVOKE EXECUTE ON FUNCTION idgen_internal.max_key(uuid) FROM PUBLIC" >/dev/null
check "max_key revoked from PUBLIC: a plain role's max of a UUID key's time is read row by row (min_key alone from the index); the same answers, no error" eq \
  "$(psql -h 127.0.0.1 -p $PORT -U ca_reader -d postgres -X -q -A -t -c "EXPLAIN (COSTS OFF) SELECT max(created_at) FROM events_v" -c "EXPLAIN (COSTS OFF) SELECT min(created_at) FROM events_v" | grep -c "Index Only Scan")|$(psql -h 127.0.0.1 -p $PORT -U ca_reader -d postgres -X -q -A -t -c "SELECT max(created_at), min(created_at) FROM events_v" 2>&1)" \
  "1|$(q $PORT "SET idgen.time_conditions = off; SELECT max(created_at), min(created_at) FROM events_v")"
q $PORT "GRANT EXECUTE ON FUNCTION idgen_internal.max_key(uuid) TO PUBLIC; REVOKE SELECT ON events, events_v FROM ca_reader" >/dev/null
for sql in "SELECT max(created_at), min(created_at) FROM orders_v" \
           "SELECT max(created_at), min(created_at), max(created_at) FILTER (WHERE v % 2 = 0), v % 3 FROM events_v GROUP BY v % 3 ORDER BY 4" \
           "SELECT now() - max(uuidv7_timestamp(id)), min(uuidv7_timestamp(id)) FROM events WHERE false" \
           "SELECT v % 7, max(created_at), min(id_timestamp(id)) FROM orders_v GROUP BY 1 ORDER BY 1" \
           "SELECT max(created_at) FILTER (WHERE v % 2 = 0), max(DISTINCT created_at), min(created_at ORDER BY v) FROM orders_v WHERE created_at < '$T0'::timestamptz - interval '2 days'" \
           "SELECT max(created_at) FROM orders_v WHERE false" \
           "SELECT max(id_timestamp(id, 'sonyflake')), min(id_timestamp(id, 'westid32')), max(id_timestamp(id, 'pg_idgen')) FROM ord" \
           "SELECT max(uuidv7_timestamp(id)), min(uuidv7_timestamp(id)) FROM ord_u" \
           "SELECT max(created_at) + interval '1 day', date_trunc('day', min(created_at)), coalesce(max(created_at), now()) > now() - interval '1 hour' FROM orders_v" \
           "SELECT v % 5, CASE WHEN max(created_at) IS NULL THEN 'none' ELSE (max(created_at) - min(created_at))::text END FROM orders_v GROUP BY 1 HAVING max(created_at) > '$T0'::timestamptz - interval '1 day' ORDER BY max(created_at), 1" \
           "SELECT extract(epoch FROM greatest(max(created_at), min(created_at)))::bigint, max(created_at)::date FROM orders_v WHERE false"; do
  check "the same answer as without: $sql" eq "$(q $PORT "$sql" 2>&1)" "$(q $PORT "SET idgen.time_conditions = off; $sql" 2>&1)"
done
check "max(created_at) inside an expression (Django's Now() - Max(), an age): still one row of the index" grep -q "Index Only Scan Backward using orders_pkey" \
  <<<"$(plan "SELECT now() - max(created_at) FROM orders_v")"
check "max(created_at) in HAVING and ORDER BY of a grouped query: the same answer as without (above), read by the key" not_grep -q "max(id_timestamp" \
  <<<"$(q $PORT "EXPLAIN (VERBOSE, COSTS OFF) SELECT v % 5 FROM orders_v GROUP BY 1 HAVING max(created_at) > now() ORDER BY max(created_at)")"
check "max(id_timestamp(id)) over a key the decoder refuses (-1): the largest key's time; read row by row (the setting off) that row raises (22023)" eq \
  "$(q $PORT "SELECT max(id_timestamp(id)) FROM refused" 2>&1)|$(q $PORT "SET idgen.time_conditions = off; SELECT max(id_timestamp(id)) FROM refused" 2>&1 | grep -o ERROR | head -1)" \
  "$(q $PORT "SELECT id_timestamp(max(id)) FROM refused")|ERROR"

phase "what must never change a result: set operations, grouping sets, NULL versions, foreign tables, schemas, many conditions"
# answer ON|OFF SQL...: every statement's output and any error's SQLSTATE (psql's VERBOSITY
# sqlstate), run with the derivation on or off; the data are left as they were (ROLLBACK).
answer() {
  local setting=$1
  shift
  { echo "SET idgen.time_conditions = $setting;"; echo "BEGIN;"; printf '%s\n' "$@"; echo "ROLLBACK;"; } |
    psql -h 127.0.0.1 -p $PORT -U "${AS_ROLE:-postgres}" -d "${DB:-postgres}" -X -q -A -t -v VERBOSITY=sqlstate -f - 2>&1 |
    sed 's/^psql:<stdin>:[0-9]*: //'
}
# same SQL...: the same answer, on and off, and it is one (not empty, no error unless WANT_ERROR)
same() {
  local on off
  on=$(answer on "$@")
  off=$(answer off "$@")
  [ "$on" = "$off" ] && [ -n "$on" ] && { [ -n "${WANT_ERROR:-}" ] || ! grep -q ERROR <<<"$on"; } ||
    { echo "    on:  $(head -c 300 <<<"$on" | tr '\n' ' ')" >&2; echo "    off: $(head -c 300 <<<"$off" | tr '\n' ' ')" >&2; return 1; }
}
q $PORT "CREATE TABLE ua (id bigint PRIMARY KEY);
  INSERT INTO ua SELECT id_from_timestamp(now() - g * interval '1 hour') + g FROM generate_series(1, 200) g;
  CREATE TABLE ub (id bigint PRIMARY KEY, created_at timestamptz NOT NULL);
  INSERT INTO ub SELECT g, now() - g * interval '1 hour' + interval '30 minutes' FROM generate_series(1, 200) g;
  CREATE VIEW all_rows AS SELECT id, id_timestamp(id) AS created_at FROM ua UNION ALL SELECT id, created_at FROM ub;
  CREATE VIEW all_rows_distinct AS SELECT id, id_timestamp(id) AS created_at FROM ua UNION SELECT id, created_at FROM ub;
  CREATE VIEW all_rows_except AS SELECT id, id_timestamp(id) AS created_at FROM ua EXCEPT SELECT id, created_at FROM ub;
  ANALYZE ua, ub" >/dev/null
check "UNION ALL view, a day: the same count" same "SELECT count(*) FROM all_rows WHERE created_at >= now() - interval '1 day';"
check "UNION view, BETWEEN, in the time's order" same "SELECT id FROM all_rows_distinct WHERE created_at BETWEEN now() - interval '3 days' AND now() - interval '1 day' ORDER BY created_at, id;"
check "EXCEPT view: the same rows" same "SELECT count(*) FROM all_rows_except WHERE created_at < now() - interval '2 days';"
check "UNION ALL in a subquery in FROM" same "SELECT count(*) FROM (SELECT id, id_timestamp(id) AS t FROM ua UNION ALL SELECT id, created_at FROM ub) s WHERE t > now() - interval '50 hours';"
check "ORDER BY a UNION view's created_at DESC LIMIT 30: the same rows in the same order" \
  same "SELECT id FROM all_rows ORDER BY created_at DESC LIMIT 30;"
check "a purge through an anti-join over the UNION ALL view: the same rows deleted" \
  same "WITH d AS (DELETE FROM ub WHERE NOT EXISTS (SELECT 1 FROM all_rows r WHERE r.id = ub.id AND r.created_at >= now() - interval '1 day') RETURNING id) SELECT count(*), sum(id) FROM d;" \
       "SELECT count(*) FROM ub;"
check "a purge through a LEFT JOIN anti-join over the UNION ALL view: the same rows deleted" \
  same "DELETE FROM ub WHERE id IN (SELECT b.id FROM ub b LEFT JOIN all_rows r ON r.id = b.id AND r.created_at >= now() - interval '1 day' WHERE r.id IS NULL);" \
       "SELECT count(*), sum(id) FROM ub;"
check "a purge through the view itself, DELETE ... WHERE id IN (the view by time)" \
  same "DELETE FROM ub WHERE id IN (SELECT id FROM all_rows WHERE created_at >= now() - interval '100 hours');" "SELECT count(*), sum(id) FROM ub;"
q $PORT "CREATE TABLE ro (id bigint PRIMARY KEY, amount int);
  INSERT INTO ro SELECT id_from_timestamp(date_trunc('hour', now()) - (g / 5) * interval '1 hour') + g, 50 FROM generate_series(1, 100) g;
  CREATE VIEW hourly AS SELECT id_timestamp(id) AS ts, id, sum(amount) AS amount FROM ro GROUP BY ROLLUP (id_timestamp(id), id);
  CREATE VIEW hourly_cube AS SELECT id_timestamp(id) AS ts, id, sum(amount) AS amount FROM ro GROUP BY CUBE (id_timestamp(id), id);
  CREATE VIEW hourly_sets AS SELECT id_timestamp(id) AS ts, id, count(*) AS n FROM ro GROUP BY GROUPING SETS ((id_timestamp(id)), (id_timestamp(id), id));
  ANALYZE ro" >/dev/null
check "a ROLLUP view: subtotal rows (a time, a NULL key) stay" same "SELECT count(*), sum(amount) FROM hourly WHERE ts >= now() - interval '5 hours';"
check "a CUBE view, BETWEEN" same "SELECT count(*), sum(amount) FROM hourly_cube WHERE ts BETWEEN now() - interval '10 hours' AND now() - interval '2 hours';"
check "a GROUPING SETS subquery, and ORDER BY its time DESC LIMIT 12" \
  same "SELECT count(*), sum(n) FROM hourly_sets WHERE ts < now() - interval '3 hours';" "SELECT ts FROM hourly_sets ORDER BY ts DESC LIMIT 12;"
check "ORDER BY a ROLLUP view's time, the subtotals where they were" same "SELECT ts FROM hourly ORDER BY ts DESC NULLS LAST LIMIT 15;" "SELECT ts FROM hourly ORDER BY ts LIMIT 15;"
if [ "$MAJOR" -ge 18 ]; then
  # A CHECK is only "not false": the Nil UUID and a UUID of another variant have no version
  # (NULL) and pass CHECK (uuid_extract_version(id) = 7); their time is NULL too. (PostgreSQL
  # 17's uuid_extract_timestamp reads version 1 only: every time here would be NULL.)
  q $PORT "CREATE TABLE nil7 (id uuid PRIMARY KEY CHECK (uuid_extract_version(id) = 7), v int);
    INSERT INTO nil7 SELECT uuidv7_from_timestamp(now() - g * interval '1 minute'), g FROM generate_series(1, 50) g;
    INSERT INTO nil7 VALUES ('00000000-0000-0000-0000-000000000000', 0), ('ffffffff-ffff-7fff-7fff-ffffffffffff', -1);
    ANALYZE nil7" >/dev/null
  for dir in "" " DESC" " NULLS FIRST" " DESC NULLS LAST"; do
    check "the Nil UUID under CHECK (uuid_extract_version(id) = 7): ORDER BY uuid_extract_timestamp(id)$dir LIMIT 4" \
      same "SELECT uuid_extract_timestamp(id) FROM nil7 ORDER BY uuid_extract_timestamp(id)$dir LIMIT 4;"
  done
  check "... and WHERE uuid_extract_timestamp(id) > now() - interval '10 minutes': the same rows" \
    same "SELECT count(*) FROM nil7 WHERE uuid_extract_timestamp(id) > now() - interval '10 minutes';"
  q $PORT "ALTER TABLE nil7 ADD created_at timestamptz GENERATED ALWAYS AS (uuid_extract_timestamp(id)) VIRTUAL" >/dev/null
  check "the Nil UUID and docs/uuidv7.md's virtual created_at: ORDER BY created_at DESC LIMIT 3" \
    same "SELECT created_at FROM nil7 ORDER BY created_at DESC LIMIT 3;"
  # Foreign tables: PostgreSQL never checks their CHECK constraints (file_fdw: a file of UUIDs of
  # every version, behind a constraint that says 7).
  if [ "$(q $PORT "SELECT count(*) FROM pg_available_extensions WHERE name = 'file_fdw'")" = 1 ]; then
  uuids="$WORK/created_at_uuids.csv"
  q $PORT "COPY (SELECT id FROM events ORDER BY id LIMIT 300) TO '$uuids'" >/dev/null
  printf '%s\n' c232ab00-9414-11ec-b3c8-9e6bdeced846 00000000-0000-1000-8000-000000000000 ffffffff-ffff-1fff-bfff-ffffffffffff |
    as_pg tee -a "$uuids" >/dev/null
  uuids2="$WORK/created_at_uuids2.csv"
  sed 's/$/\t2/' "$uuids" | as_pg tee "$uuids2" >/dev/null
  q $PORT "CREATE EXTENSION file_fdw; CREATE SERVER files FOREIGN DATA WRAPPER file_fdw;
    CREATE FOREIGN TABLE fuuid (id uuid CHECK (uuid_extract_version(id) = 7)) SERVER files OPTIONS (filename '$uuids');
    CREATE TABLE puuid (id uuid CHECK (uuid_extract_version(id) = 7), part int) PARTITION BY LIST (part);
    CREATE TABLE puuid_local PARTITION OF puuid FOR VALUES IN (1);
    CREATE FOREIGN TABLE puuid_far PARTITION OF puuid FOR VALUES IN (2) SERVER files OPTIONS (filename '$uuids2');
    INSERT INTO puuid_local SELECT id, 1 FROM events ORDER BY id DESC LIMIT 300" >/dev/null
  for cond in "uuid_extract_timestamp(id) < now()" "uuid_extract_timestamp(id) >= '2022-01-01'" "uuid_extract_timestamp(id) BETWEEN '1582-10-15' AND '2100-01-01'"; do
    check "a foreign table whose CHECK says version 7 (never enforced): $cond" same "SELECT count(*) FROM fuuid WHERE $cond;"
  done
  check "a partitioned table with a foreign partition: the same count" same "SELECT count(*) FROM puuid WHERE uuid_extract_timestamp(id) >= '2022-01-01';"
  check "ORDER BY uuid_extract_timestamp(id) of a foreign table: the same order" same "SELECT id FROM fuuid ORDER BY uuid_extract_timestamp(id) LIMIT 5;"
  else
    echo "  skipped: foreign tables (this PostgreSQL $MAJOR has no file_fdw: the build from source installs no contrib module)"
  fi
else
  echo "  skipped: the Nil UUID and foreign tables under a version-7 CHECK (uuid_extract_timestamp of a version 7 UUID: PostgreSQL 18 and later; this is $MAJOR)"
fi
# Schema rights: an administrator revokes PUBLIC's USAGE on idgen_internal; a plain role's time
# query answers as it does with the setting off (nothing added, no error).
q $PORT "REVOKE USAGE ON SCHEMA idgen_internal FROM PUBLIC" >/dev/null
# (The fixed time read above: orders has a row every 10 s, so now() - 1 hour, read once with the
# setting on and once off, lost a row between the two on a loaded machine.)
AS_ROLE=ca_reader check "USAGE on idgen_internal revoked from PUBLIC: a plain role's query answers, the same" \
  same "SELECT count(*) FROM orders WHERE id_timestamp(id) >= '$since';" "SELECT id FROM orders ORDER BY id_timestamp(id) DESC LIMIT 3;"
q $PORT "GRANT USAGE ON SCHEMA idgen_internal TO PUBLIC" >/dev/null
# A squatted schema: a database without pg_idgen where a role with CREATE made an idgen_internal
# of its own (no USAGE for others).
q $PORT "CREATE DATABASE squat" >/dev/null
q $PORT "GRANT CREATE ON DATABASE squat TO ca_mallory" >/dev/null
qdb $PORT squat "CREATE TABLE t7 (id uuid PRIMARY KEY $([ "$MAJOR" -ge 17 ] && echo 'CHECK (uuid_extract_version(id) = 7)'), v int);
  INSERT INTO t7 SELECT (lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint - g), 12, '0') || '70008000' || lpad(to_hex(g), 12, '0'))::uuid, g FROM generate_series(1, 10) g; GRANT SELECT ON t7 TO ca_reader" >/dev/null
psql -h 127.0.0.1 -p $PORT -U ca_mallory -d squat -X -q -c "CREATE SCHEMA idgen_internal; REVOKE ALL ON SCHEMA idgen_internal FROM PUBLIC" >/dev/null
if [ "$MAJOR" -ge 17 ]; then
  AS_ROLE=ca_reader DB=squat check "a squatted idgen_internal in a database without pg_idgen: another role's uuid_extract_timestamp query answers, the same" \
    same "SELECT count(*) FROM t7 WHERE uuid_extract_timestamp(id) < now() + interval '1 day';" "SELECT v FROM t7 ORDER BY uuid_extract_timestamp(id) DESC LIMIT 3;"
fi
AS_ROLE=ca_reader DB=squat check "a squatted idgen_internal: a query with no decoder, the same" same "SELECT count(*) FROM t7 WHERE v > 3;"
# A layout the decoder refuses: its own error (42704), or no error where no row is read.
q $PORT "CREATE TABLE nothing_here (id bigint PRIMARY KEY)" >/dev/null
check "id_timestamp(id, 'no_such_layout') on an empty table: no rows, no error, as with the setting off" \
  same "SELECT count(*) FROM nothing_here WHERE id_timestamp(id, 'no_such_layout') > now();"
WANT_ERROR=1 check "... on a table with rows: the decoder's own error (42704), on and off" \
  same "SELECT count(*) FROM ua WHERE id_timestamp(id, 'no_such_layout') > now();"
# Thousands of conditions: the same rows, a bounded number of ranges added, and the walk answers a
# cancel (statement_timeout) rather than running on to its end.
many=$(for i in $(seq 1 16000); do printf "id_timestamp(id) >= now() - interval '%s seconds' AND " "$((100000 + i))"; done)
check "16,000 ANDed time conditions: the same rows" same "SELECT count(*) FROM ua WHERE ${many}true;"
ranges=$(answer on "EXPLAIN (COSTS OFF) SELECT count(*) FROM ua WHERE ${many}true;" | grep -o 'id_time_lower' | wc -l)
check "... and ranges added, at most 64 ($ranges)" test "$ranges" -ge 1 -a "$ranges" -le 64
many=$(for i in $(seq 1 60000); do printf "id_timestamp(id) >= now() - interval '%s seconds' AND " "$((3000000 + i))"; done)
cancelled=$(printf "SET statement_timeout = '2s';\nSELECT count(*) FROM orders WHERE %strue;\n" "$many" |
  timeout 300 psql -h 127.0.0.1 -p $PORT -U postgres -X -q -f - 2>&1 | grep -c "canceling statement due to statement timeout"; echo "exit ${PIPESTATUS[1]}")
check "60,000 conditions under statement_timeout = 2s: cancelled (waited at most 300 s for psql)" eq "$(tr '\n' ' ' <<<"$cancelled")" "1 exit 0 "

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
psql -h 127.0.0.1 -p $PORT -U postgres -d diff -X -q -v ON_ERROR_STOP=1 -f "$REPO/tests/system/created_at_differential.sql" >/dev/null
seed=$((RANDOM % 1000))
qdb $PORT diff "SET client_min_messages = error; SELECT setseed($seed / 1000.0); SELECT ca_tables()" >/dev/null
disagree=$(qdb $PORT diff "SET client_min_messages = error; SELECT setseed($seed / 1000.0 - 0.5); SELECT * FROM ca_differential(400)" 2>&1 | tail -n +2)
stats=$(qdb $PORT diff "SELECT conditions || ' conditions over ' || tables || ' tables, ' || ranged || ' of ' || expected || ' read as a key range, ' || more || ' also as a DELETE and as a generic plan run in another zone' FROM ca_stats")
check "the same rows, derivation on and off, through the index and as a filter, deleted, by a generic plan run in another zone (seed $seed; $stats)" eq "$disagree" ""
check "... the DELETEs and generic plans ran (one condition in eight)" eq "$(qdb $PORT diff "SELECT more * 8 = conditions FROM ca_stats")" t
shapes=$(qdb $PORT diff "SET client_min_messages = error; SELECT setseed($seed / 1000.0 - 0.25); SELECT tbl, shape, query, param, off_answer, on_answer FROM ca_shapes(12)" 2>&1 | tail -n +2)
check "the same answers through subqueries, views, set operations, grouping sets, joins, sorts by the time and 2,000 conditions at once (12 conditions a shape a table)" \
  eq "$(head -c 3000 <<<"$shapes")" ""
check "every condition that implies a range was read as one" eq \
  "$(qdb $PORT diff "SELECT ranged = expected AND conditions > 5000 FROM ca_stats")" t
check "control: a bound one key too tight, by hand, finds other rows (the data reach the edges)" ne \
  "$(qdb $PORT diff "SET client_min_messages = error; SELECT ca_control(100)")" 0
qdb $PORT diff "SET client_min_messages = error; SELECT ca_local_tables()" >/dev/null
local_disagree=$(qdb $PORT diff "SET client_min_messages = error; SELECT setseed($seed / 1000.0 - 0.75); SELECT * FROM ca_local(400)" 2>&1 | tail -n +2)
local_stats=$(qdb $PORT diff "SELECT conditions || ' conditions, ' || ranged || ' read as a key range, ' || replaced || ' replaced by it; ' || generic || ' generic plans run in another zone' FROM ca_local_stats")
check "local times (::date, ::timestamp, AT TIME ZONE, date_trunc) in zones whose clocks change near the keys: the same rows on and off ($local_stats)" \
  eq "$(head -c 3000 <<<"$local_disagree")" ""
check "most of those conditions read a key range; some in the session's zone or a named one were replaced by it; a third ran as generic plans in another zone" eq \
  "$(qdb $PORT diff "SELECT ranged * 2 > conditions AND conditions >= 800 AND replaced >= 20 AND generic * 4 > conditions FROM ca_local_stats")" t
check "control: a day as its two midnights read as instants (the naive range) finds other rows than ::date on a day whose clocks fall back across midnight (the data reach it)" ne \
  "$(qdb $PORT diff "SELECT ca_local_control()")" 0
finish
