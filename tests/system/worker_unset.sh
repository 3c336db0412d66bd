#!/usr/bin/env bash
# A node without idgen.worker_id makes Snowflake IDs as worker 0, as does every other node set up
# with only the preload line: two such nodes repeat each other's IDs. The start says so (a
# WARNING in the server log), idgen.status.problem says so, and where the node is evidently one
# of several, Snowflake IDs are refused (55000) until the worker id is set (0 too, explicitly):
# a database that publishes (logical replication), one that leases worker ids to other nodes
# (a lease coordinator's own generator). Message IDs and UUIDv7s have no worker bits and go on.
# (Citus preloaded is the third sign; tests/system/citus.sh runs with idgen.worker_id_source =
# citus, so it is not tried here.)
# (Control, run by hand on the build before: no WARNING, problem NULL, and both refusals are
# IDs of worker 0: 6 checks fail.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
trap 'cluster_stop unset immediate' EXIT
cluster_init unset $P "wal_level = logical"
cluster_start unset
log_file="$(cluster_dir unset)/server.log"
check "the start logs a WARNING that idgen.worker_id is not set" \
  grep -q "WARNING:  pg_idgen: idgen.worker_id is not set" "$log_file"
q $P "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int)"
check "idgen.status.problem says it" grep -q "idgen.worker_id is not set" <<<"$(q $P "SELECT problem FROM idgen.status")"
check "a lone node makes IDs (worker 0)" eq "$(q $P "INSERT INTO t (v) VALUES (1) RETURNING id_worker_id(id)")" 0
state() { psql -h 127.0.0.1 -p $P -U postgres -X -q -A -t -c "\set VERBOSITY verbose" -c "$1" 2>&1 || true; }

q $P "CREATE PUBLICATION pub FOR TABLE t"
err=$(state "INSERT INTO t (v) VALUES (2)")
check "a database that publishes: Snowflake IDs are refused, 55000" grep -q "ERROR:  55000" <<<"$err"
check "... saying why, with the setting to set in the hint" grep -q "publishes or subscribes.*HINT:.*idgen.worker_id = N" <<<"$(tr '\n' ' ' <<<"$err")"
check "... message IDs and UUIDv7s go on" eq "$(state "SELECT length(msgid_next(1, 'x')) > 0 AND uuidv7_next() IS NOT NULL")" t
q $P "DROP PUBLICATION pub"
check "without the publication, IDs again" eq "$(state "INSERT INTO t (v) VALUES (3) RETURNING v")" 3

# A lease coordinator: another node took a worker id from this database.
q $P "SELECT worker_id FROM idgen.worker_acquire('other-node')" >/dev/null
err=$(state "INSERT INTO t (v) VALUES (4)")
check "a lease coordinator's own generator: refused, 55000" grep -q "ERROR:  55000" <<<"$err"
check "... saying it leases worker ids" grep -q "leases worker ids to other nodes" <<<"$err"

phase "idgen.worker_id = 0, set explicitly"
cluster_stop unset
cluster_conf unset "idgen.worker_id = 0"
: | as_pg tee "$log_file" >/dev/null
cluster_start unset
check "no WARNING at the start" not_grep -q "idgen.worker_id is not set" "$log_file"
check "idgen.status.problem is NULL" eq "$(q $P "SELECT problem IS NULL FROM idgen.status")" t
q $P "CREATE PUBLICATION pub FOR TABLE t"
check "the coordinator with a publication makes IDs" eq "$(state "INSERT INTO t (v) VALUES (5) RETURNING v")" 5

# The coordinator makes its own IDs as worker 0 now: it must never lease 0 to another holder, or
# both make the same IDs. (Control: with the 0.2.4 worker_acquire, the holder of 0 released it
# and got it back, a range of just 0 leased it, and of 40 holders on 0..39 one got 0: 4 checks failed.)
phase "a coordinator with its own worker id never leases it"
lease=$(q $P "SELECT lease FROM idgen.workers WHERE code = 'other-node'")
q $P "SELECT idgen.worker_release(0, 'other-node', clock_timestamp(), $lease)" >/dev/null
check "the holder of id 0 from before, acquiring again, gets another id" \
  ne "$(q $P "SELECT worker_id FROM idgen.worker_acquire('other-node')")" 0
err=$(state "SELECT worker_id FROM idgen.worker_acquire('a-range-of-0', min_id => 0, max_id => 0)")
check "a range holding only the coordinator's own id: 53000, saying why" \
  grep -q "ERROR:  53000.*this server's own worker id" <<<"$(tr '\n' ' ' <<<"$err")"
# Every id of 0..39 free or never leased, 40 holders: 39 of them get one, never 0.
lease=$(q $P "SELECT lease FROM idgen.workers WHERE code = 'other-node' AND released_at IS NULL")
id=$(q $P "SELECT worker_id FROM idgen.workers WHERE code = 'other-node' AND released_at IS NULL")
q $P "SELECT idgen.worker_release($id, 'other-node', clock_timestamp(), $lease)" >/dev/null
got=$(for g in $(seq 1 40); do
  q $P "SELECT worker_id FROM idgen.worker_acquire('holder-$g', max_id => 39)" 2>/dev/null || echo refused
done)
check "40 holders on ids 0..39: none gets 0" eq "$(grep -cx 0 <<<"$got")" 0
check "... 39 get distinct ids, the last is refused" eq "$(grep -vx refused <<<"$got" | sort -u | wc -l) $(grep -cx refused <<<"$got")" "39 1"
finish
