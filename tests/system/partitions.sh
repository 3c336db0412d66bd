#!/usr/bin/env bash
# Partitioning by the time inside the key (docs/partitioning.md):
#   - the page's examples run as written, pg_partman's too (tools/doctest.py --with pg_partman,
#     with Debian's postgresql-15-partman installed here when missing);
#   - rows whose IDs were made at times over 8 days, the first and last tick of each UTC day
#     among them, land in the partition of their day: native partitions made with id_range(), and
#     pg_partman's daily partitions with id_span() as the interval; none in a default partition;
#     live IDs of snowflake_next() in today's;
#   - UUIDv7 keys likewise, with uuidv7_range();
#   - pruning: `id >= id_from_timestamp(ts, layout)` is pruned when planned, with the node's layout
#     when run (Subplans Removed);
#   - control: partitions made with bounds one tick off put the first or last tick of a day into
#     the wrong partition, and the check of the days says so.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
[ "$PG" = 15 ] || skip_test "pg_partman is packaged here for Debian's PostgreSQL 15 only (postgresql-15-partman)"
apt_install_missing postgresql-15-partman >"$WORK/apt_partman.log" 2>&1 ||
  skip_test "apt-get could not install postgresql-15-partman ($(tail -1 "$WORK/apt_partman.log"))"
echo "  pg_partman $(dpkg-query -W -f='${Version}' postgresql-15-partman)"
trap 'cluster_stop partitions immediate' EXIT
cd "$REPO"
cluster_init partitions $P "idgen.worker_id = 5"
cluster_start partitions

check "docs/partitioning.md runs as written, pg_partman's recipe too" \
  python3 tools/doctest.py --port $P --with pg_partman docs/partitioning.md

D=partitions
qdb $P postgres "CREATE DATABASE $D" >/dev/null
qdb $P $D "CREATE EXTENSION pg_idgen; CREATE SCHEMA partman; CREATE EXTENSION pg_partman SCHEMA partman" >/dev/null
# Eight UTC days: four before today, today, three after.
first=$(qdb $P $D "SELECT (date_trunc('day', now(), 'UTC') - interval '4 days')::text")
# rows_at TABLE [FIRST LAST]: for each of the days FIRST..LAST (0..7 by default) after $first, its
# first tick, its last tick (largest ID below the next day's first) and 500 IDs at random times in
# it, each with a worker id and sequence.
rows_at() {
  qdb $P $D "INSERT INTO $1 (id)
    SELECT x FROM generate_series(${2:-0}, ${3:-7}) AS d,
      LATERAL (SELECT lower, upper FROM id_range('$first'::timestamptz + d * interval '1 day',
                                                 '$first'::timestamptz + (d + 1) * interval '1 day', 'pg_idgen')) r,
      LATERAL (SELECT r.lower AS x UNION ALL SELECT r.upper - 1
               UNION ALL SELECT id_from_timestamp('$first'::timestamptz + d * interval '1 day'
                                                  + random() * interval '1 day', 'pg_idgen')
                                + (5 << 12) + (g % 4096)
                 FROM generate_series(1, 500) g) ids" >/dev/null
}
# misplaced TABLE EXPR: rows whose partition (named by EXPR of the partition's name) is not their day.
misplaced() {
  qdb $P $D "SELECT count(*) FROM $1 WHERE tableoid::regclass::text IS DISTINCT FROM $2"
}

# scanned TABLE PLAN: how many partitions of TABLE the plan reads.
scanned() { grep -o "on $1_[0-9a-z]*" <<<"$2" | sort -u | wc -l; }

phase "native partitions from id_range()"
qdb $P $D "CREATE TABLE ev (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int) PARTITION BY RANGE (id)" >/dev/null
qdb $P $D "SELECT format('CREATE TABLE %I PARTITION OF ev FOR VALUES FROM (%s) TO (%s);',
                         'ev_' || to_char(d AT TIME ZONE 'UTC', 'YYYYMMDD'), r.lower, r.upper)
             FROM generate_series('$first'::timestamptz, '$first'::timestamptz + interval '7 days', interval '1 day') d,
                  id_range(d, d + interval '1 day', 'pg_idgen') r" | psql -h 127.0.0.1 -p $P -U postgres -d $D -X -q -v ON_ERROR_STOP=1 >/dev/null
qdb $P $D "CREATE TABLE ev_default PARTITION OF ev DEFAULT" >/dev/null
rows_at ev
qdb $P $D "INSERT INTO ev (v) SELECT g FROM generate_series(1, 1000) g" >/dev/null
day="'ev_' || to_char(id_timestamp(id, 'pg_idgen') AT TIME ZONE 'UTC', 'YYYYMMDD')"
check "8 days x 502 rows and 1,000 live ones" eq "$(qdb $P $D "SELECT count(*) FROM ev")" 5016
check "every row is in the partition of its UTC day (first and last ticks too)" eq "$(misplaced ev "$day")" 0
check "none in the default partition" eq "$(qdb $P $D "SELECT count(*) FROM ev_default")" 0
check "the live IDs are in today's partition" \
  eq "$(qdb $P $D "SELECT count(DISTINCT tableoid) FROM ev WHERE v IS NOT NULL")" 1

plan=$(qdb $P $D "EXPLAIN (COSTS OFF) SELECT count(*) FROM ev
                  WHERE id >= id_from_timestamp('$first'::timestamptz + interval '5 days', 'pg_idgen')")
check "a named layout is pruned when planned: 3 days and the default scanned, of 9 partitions" \
  eq "$(scanned ev "$plan")" 4
plan=$(qdb $P $D "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM ev
                  WHERE id >= id_from_timestamp('$first'::timestamptz + interval '5 days')")
check "the node's layout is pruned when run: Subplans Removed: 5" grep -q "Subplans Removed: 5" <<<"$plan"

phase "control: bounds one tick off"
qdb $P $D "CREATE TABLE off (id bigint PRIMARY KEY, v int) PARTITION BY RANGE (id)" >/dev/null
qdb $P $D "SELECT format('CREATE TABLE %I PARTITION OF off FOR VALUES FROM (%s) TO (%s);',
                         'off_' || to_char(d AT TIME ZONE 'UTC', 'YYYYMMDD'), r.lower + (1 << 22), r.upper + (1 << 22))
             FROM generate_series('$first'::timestamptz, '$first'::timestamptz + interval '7 days', interval '1 day') d,
                  id_range(d, d + interval '1 day', 'pg_idgen') r" | psql -h 127.0.0.1 -p $P -U postgres -d $D -X -q -v ON_ERROR_STOP=1 >/dev/null
qdb $P $D "CREATE TABLE off_default PARTITION OF off DEFAULT" >/dev/null
rows_at off
check "control: with bounds a tick late, the last tick of each day is in the next day's partition" \
  ne "$(misplaced off "'off_' || to_char(id_timestamp(id, 'pg_idgen') AT TIME ZONE 'UTC', 'YYYYMMDD')")" 0

phase "pg_partman: daily partitions of id_span('1 day')"
qdb $P $D "CREATE TABLE pm (id bigint NOT NULL DEFAULT snowflake_next(), v int) PARTITION BY RANGE (id)" >/dev/null
# Created with the first day; pg_partman makes partitions ahead of the largest ID in the table
# (for live IDs: now), so the past days and today come first, then maintenance, then the days
# ahead (as live IDs would arrive).
qdb $P $D "SELECT partman.create_parent('public.pm', 'id', 'native', p_interval := id_span('1 day', 'pg_idgen')::text,
             p_start_partition := id_from_timestamp('$first', 'pg_idgen')::text, p_premake := 4)" >/dev/null
rows_at pm 0 4
qdb $P $D "INSERT INTO pm (v) SELECT g FROM generate_series(1, 1000) g" >/dev/null
qdb $P $D "SELECT partman.run_maintenance('public.pm')" >/dev/null
check "pg_partman made a partition for each day up to 4 ahead of the largest ID (today), and its default" \
  eq "$(qdb $P $D "SELECT count(*) FROM pg_inherits WHERE inhparent = 'pm'::regclass")" 10
rows_at pm 5 7
pday="'pm_p' || (SELECT lower FROM id_range(date_trunc('day', id_timestamp(id, 'pg_idgen'), 'UTC'),
                                             date_trunc('day', id_timestamp(id, 'pg_idgen'), 'UTC') + interval '1 day', 'pg_idgen'))"
check "every row is in pg_partman's partition of its UTC day" eq "$(misplaced pm "$pday")" 0
check "none in pg_partman's default partition" eq "$(qdb $P $D "SELECT count(*) FROM pm_default")" 0
plan=$(qdb $P $D "EXPLAIN (COSTS OFF) SELECT count(*) FROM pm
                  WHERE id >= id_from_timestamp('$first'::timestamptz + interval '5 days', 'pg_idgen')")
check "pruned when planned: the 4 days from the fifth and the default scanned, of 10" eq "$(scanned pm "$plan")" 5

phase "UUIDv7 keys from uuidv7_range()"
qdb $P $D "CREATE TABLE uv (id uuid PRIMARY KEY DEFAULT uuidv7_next(), v int) PARTITION BY RANGE (id)" >/dev/null
qdb $P $D "SELECT format('CREATE TABLE %I PARTITION OF uv FOR VALUES FROM (%L) TO (%L);',
                         'uv_' || to_char(d AT TIME ZONE 'UTC', 'YYYYMMDD'), r.lower, r.upper)
             FROM generate_series('$first'::timestamptz, '$first'::timestamptz + interval '7 days', interval '1 day') d,
                  uuidv7_range(d, d + interval '1 day') r" | psql -h 127.0.0.1 -p $P -U postgres -d $D -X -q -v ON_ERROR_STOP=1 >/dev/null
qdb $P $D "CREATE TABLE uv_default PARTITION OF uv DEFAULT" >/dev/null
# The first and last UUID of each day's millisecond range, and live ones.
qdb $P $D "INSERT INTO uv (id) SELECT u FROM generate_series(0, 7) d,
             uuidv7_range('$first'::timestamptz + d * interval '1 day', '$first'::timestamptz + (d + 1) * interval '1 day') r,
             LATERAL (VALUES (r.lower), (uuidv7_from_timestamp('$first'::timestamptz + (d + 1) * interval '1 day'
                                                               - interval '1 millisecond'))) x(u)" >/dev/null
qdb $P $D "INSERT INTO uv (v) SELECT g FROM generate_series(1, 1000) g" >/dev/null
check "every UUIDv7 is in the partition of its UTC day" \
  eq "$(misplaced uv "'uv_' || to_char(uuidv7_timestamp(id) AT TIME ZONE 'UTC', 'YYYYMMDD')")" 0
check "none in the default partition" eq "$(qdb $P $D "SELECT count(*) FROM uv_default")" 0
finish
