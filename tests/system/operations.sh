#!/usr/bin/env bash
# What an operator does, on real clusters:
#   - pg_dump / pg_restore of a database that uses pg_idgen into a new cluster: the idgen tables'
#     rows come along (segments and worker leases), segment IDs go on above what was handed out,
#     a lease held at dump time is not handed out again, and after
#     idgen.snowflake_start_after(the newest restored ID's time) Snowflake IDs are above every
#     restored one;
#   - a node in lease mode with a physical standby (pg_basebackup): the standby takes no lease and
#     refuses to generate, decodes; promoted after the primary dies, it leases its own worker id
#     (the old primary's is still held) and its IDs are above every ID of the old primary.
#   - a restore by the database owner (not a superuser): idgen.node_origins comes along, so the
#     application's Snowflake IDs are refused until snowflake_start_after (before 0.2.5 nothing was
#     refused, and INSERTs took keys the old server had made); idgen's other rows need an
#     administrator; the paths our messages point to (restore them, or create the type again)
#     repeat no ID.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
A=$(port 0)
B=$(port 1)
P=$(port 2)
S=$(port 3)
OUT="$WORK/operations.out"
SECONDS=0
trap 'for n in ops_a ops_b ops_p ops_s; do cluster_stop $n immediate; done' EXIT
rm -rf "$OUT" && mkdir -p "$OUT" && chmod 777 "$OUT"

phase "pg_dump / pg_restore into a new cluster"
# B replaces A: the same worker id (A is also a lease coordinator, so its own worker id is set).
cluster_init ops_a $A "idgen.worker_lease_grace = '1s'" "idgen.worker_id = 1"
cluster_init ops_b $B "idgen.worker_id = 1"
cluster_start ops_a
cluster_start ops_b
q $A "CREATE EXTENSION pg_idgen"
q $A "SELECT idgen.segment_create('order', step => 100, delta => 2, remainder => 1)" >/dev/null
q $A "CREATE TABLE seg AS SELECT segment_next('order') AS id FROM generate_series(1, 250)"
q $A "CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int)"
q $A "INSERT INTO t (v) SELECT g FROM generate_series(1, 5000) g"
q $A "SELECT idgen.segment_create('gone', step => 10)" >/dev/null
gone_max=$(q $A "SELECT max(segment_next('gone')) FROM generate_series(1, 35)")
q $A "SELECT idgen.segment_drop('gone')" >/dev/null
q $A "SELECT idgen.segment_create('invoice', step => 50)" >/dev/null
q $A "CREATE TABLE invoice (id bigint PRIMARY KEY DEFAULT segment_next('invoice'), v int);
      INSERT INTO invoice (v) SELECT g FROM generate_series(1, 300) g"
held=$(q $A "SELECT worker_id FROM idgen.worker_acquire('app-held', '10 min')")
rel=$(q $A "SELECT worker_id || ', lease => ' || lease FROM idgen.worker_acquire('app-gone', '10 min')")
q $A "SELECT idgen.worker_release(${rel%%,*}, 'app-gone', ${rel#*, })" >/dev/null
rel=${rel%%,*}
as_pg "$PGBIN/pg_dump" -h 127.0.0.1 -p $A -U postgres -Fc -f "$OUT/a.dump" postgres
q $B "CREATE DATABASE restored"
as_pg "$PGBIN/pg_restore" -h 127.0.0.1 -p $B -U postgres -d restored "$OUT/a.dump"
rows() { qdb "$1" "$2" "SELECT string_agg(format('%s', s), ';' ORDER BY 1) FROM (SELECT biz_type, max_id, step, delta, remainder, version FROM idgen.segments) s"; }
check "restore: idgen.segments rows came along" eq "$(rows $B restored)" "$(rows $A postgres)"
wrows() { qdb "$1" "$2" "SELECT string_agg(format('%s|%s|%s|%s', worker_id, code, lease, released_at IS NOT NULL), ';' ORDER BY worker_id) FROM idgen.workers"; }
check "restore: idgen.workers rows came along" eq "$(wrows $B restored)" "$(wrows $A postgres)"
qdb $B restored "SELECT idgen.segment_create('gone', step => 10)" >/dev/null 2>&1
check "restore: a type dropped before the dump, created again, goes on above its old IDs" test \
  "$(qdb $B restored "SELECT segment_next('gone')")" -gt "$gone_max"
check "restore: segment IDs go on above every ID handed out before" eq \
  "$(qdb $B restored "SELECT min(x) > (SELECT max(id) FROM seg) AND bool_and(x % 2 = 1) FROM (SELECT segment_next('order') AS x FROM generate_series(1, 500)) s")" t
check "restore: the lease held at dump time is not handed out again" eq \
  "$(qdb $B restored "SELECT worker_id FROM idgen.worker_acquire('newcomer', '1 min', $held, $held)" 2>&1 | grep -c 'no worker id is free')" 1
check "restore: the released one is" eq "$(qdb $B restored "SELECT worker_id FROM idgen.worker_acquire('newcomer', '1 min', $rel, $rel)")" "$rel"
check "restore: Snowflake IDs are refused until snowflake_start_after (the mark did not come along)" \
  grep -q "made on another database system" <<<"$(qdb $B restored "SELECT snowflake_next()" 2>&1 || true)"
qdb $B restored "SELECT idgen.snowflake_start_after(max(id_timestamp(id))) FROM t" >/dev/null
check "restore: after snowflake_start_after, new Snowflake IDs are above every restored one" eq \
  "$(qdb $B restored "INSERT INTO t (v) SELECT 0 FROM generate_series(1, 1000) RETURNING id" | sort -n | head -1 |
      xargs -I{} psql -h 127.0.0.1 -p $B -U postgres -d restored -X -q -A -t -c "SELECT {} > max(id) FROM t WHERE v > 0")" t

phase "a restore by the database's owner, not a superuser (the managed-database recipe)"
# An administrator creates the extension, the database owner restores with --no-owner: the owner
# may not write idgen's tables, so their rows do not come along, and pg_restore says so. Then
# neither path our messages point to repeats an ID: the administrator restores idgen's rows, or
# creates the type again, which starts above the columns whose default is segment_next() of it.
q $B "CREATE ROLE app_owner LOGIN"
for db in owned owned2; do
  q $B "CREATE DATABASE $db OWNER app_owner"
  qdb $B $db "CREATE EXTENSION pg_idgen"
  as_pg "$PGBIN/pg_restore" -h 127.0.0.1 -p $B -U app_owner --no-owner -d $db "$OUT/a.dump" >"$OUT/$db.log" 2>&1 || true
done
check "owner restore: pg_restore reports the idgen table it could not write" grep -q 'permission denied for table segments' "$OUT/owned.log"
check "owner restore: the application's rows are there, idgen.segments is empty" eq \
  "$(qdb $B owned "SELECT (SELECT count(*) FROM invoice) || '|' || (SELECT count(*) FROM idgen.segments)")" "300|0"
err=$(psql -h 127.0.0.1 -p $B -U app_owner -d owned -X -q -A -t -c "SELECT segment_next('order')" 2>&1 || true)
check "owner restore: segment_next says the type does not exist and points to restoring idgen.segments first" \
  grep -q 'restore idgen.segments' <<<"$err"
err=$(psql -h 127.0.0.1 -p $B -U app_owner -d owned -X -q -A -t -c "INSERT INTO t (v) VALUES (0)" 2>&1 || true)
check "owner restore: idgen.node_origins came along, so the application's Snowflake IDs are refused (made on another system)" \
  grep -q "made on another database system" <<<"$err"
q $B "CREATE ROLE intruder LOGIN"
err=$(psql -h 127.0.0.1 -p $B -U intruder -d owned -X -q -A -t -c "\set VERBOSITY verbose" -c "INSERT INTO idgen.node_origins (system_identifier) VALUES (1)" 2>&1 || true)
check "owner restore: another role may not add rows to idgen.node_origins (42501)" grep -q "42501.*permission denied to add rows" <<<"$err"
as_pg "$PGBIN/pg_restore" -h 127.0.0.1 -p $B -U postgres --data-only --schema=idgen -d owned "$OUT/a.dump"
check "owner restore, then the administrator's --data-only --schema=idgen restore: IDs go on above the old ones" eq \
  "$(qdb $B owned "SELECT (SELECT min(x) FROM (SELECT segment_next('order') x FROM generate_series(1, 300)) s) > (SELECT max(id) FROM seg)
                    AND (SELECT segment_next('invoice')) > (SELECT max(id) FROM invoice)")" t
qdb $B owned2 "SELECT idgen.segment_create('invoice', step => 50)" >"$OUT/owned2.create" 2>&1
check "owner restore, then segment_create: the type starts above the column that defaults to it (with a NOTICE)" eq \
  "$(grep -c 'already holds IDs up to' "$OUT/owned2.create")|$(psql -h 127.0.0.1 -p $B -U app_owner -d owned2 -X -q -A -t -c "INSERT INTO invoice (v) SELECT 0 FROM generate_series(1, 100) RETURNING id" 2>&1 | sort -n | head -1)" \
  "1|$(( $(qdb $B owned2 "SELECT max(id) FROM invoice WHERE v > 0") + 1 ))"
cluster_stop ops_b immediate

phase "a lease-mode primary and its standby"
cluster_init ops_p $P "idgen.worker_id_source = lease" "idgen.worker_lease_ttl = '3s'" \
  "idgen.worker_lease_conninfo = 'host=127.0.0.1 port=$A dbname=postgres user=postgres'"
cluster_start ops_p
q $P "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int)"
q $P "SELECT idgen.segment_create('order', step => 100)" >/dev/null
for i in $(seq 1 300); do q $P "SELECT snowflake_next()" >/dev/null 2>&1 && break; sleep 0.01; done
seg_p=$(q $P "SELECT max(segment_next('order')) FROM generate_series(1, 150)")
wp=$(q $P "SELECT worker_id FROM idgen.worker_status")
standby_init ops_s $P $S
cluster_start ops_s
q $P "INSERT INTO t (v) SELECT g FROM generate_series(1, 20000) g"
for i in $(seq 1 300); do [ "$(q $S "SELECT count(*) FROM t")" = 20000 ] && break; sleep 0.05; done
check "standby: refuses to generate (25006)" eq "$(q $S "SELECT snowflake_next()" 2>&1 | grep -c 'cannot generate IDs on a standby server')" 1
for f in "segment_next('order')" "idgen.segment_alloc('order')"; do
  check "standby: $f refuses (25006), saying where to call it" eq \
    "$(psql -h 127.0.0.1 -p $S -U postgres -X -q -A -t -v VERBOSITY=verbose -c "SELECT $f" 2>&1 |
       grep -cE '^ERROR:  25006: cannot allocate segment IDs on a standby server|^HINT:  Call segment_next\(\) on the primary')" 2
done
check "standby: decodes the primary's IDs (worker id $wp)" eq "$(q $S "SELECT DISTINCT d.worker_id FROM t, id_decode(t.id) d")" "$wp"
check "standby: took no lease (only the primary's is held)" eq \
  "$(q $A "SELECT count(*) FROM idgen.worker_leases WHERE state = 'held' AND code LIKE 'pg_idgen:%'")|$(q $S "SELECT coalesce(worker_id::text, 'none') FROM idgen.worker_status")" "1|none"
last_p=$(q $P "SELECT max(id) FROM t")
cluster_stop ops_p immediate
as_pg "$PGBIN/pg_ctl" -D "$(cluster_dir ops_s)" -w promote >/dev/null
for i in $(seq 1 500); do q $S "SELECT snowflake_next()" >/dev/null 2>&1 && break; sleep 0.01; done
ws=$(q $S "SELECT worker_id FROM idgen.worker_status")
check "promoted: leased its own worker id ($ws), not the old primary's ($wp), which is still held" test -n "$ws" -a "$ws" != "$wp"
check "promoted: its IDs are above every ID of the old primary" eq \
  "$(q $S "INSERT INTO t (v) VALUES (-1) RETURNING id > $last_p")" t
check "promoted: segment IDs go on above those the old primary handed out ($seg_p)" eq \
  "$(q $S "SELECT segment_next('order') > $seg_p")" t
check "no server logged a crash" eq "$(cat "$WORK"/ops_*/server.log | grep -c 'PANIC\|terminated by signal')" 0
finish
