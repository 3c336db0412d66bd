#!/usr/bin/env bash
# A new session's first ID does not open idgen.node_origins when another backend found the database
# clear and the table's one page has not changed since (src/node/origin_check.rs, by the page's
# stamp: src/pg/page_stamp.rs). Every way a row naming another system arrives after that is seen
# by the next session, which refuses (55000) as it would without the stamp:
#   an INSERT; COPY; the row on a second page (the first one full, so its LSN does not move);
#   TRUNCATE and INSERT in one transaction (a new file); a prepared transaction, committed later
#   (no stamp while it is prepared); a session that deleted the row, took an ID, and rolled back
#   (its own change is never stamped); pg_restore --data-only --disable-triggers; another database
#   beside a clear one. Logical replication's copy is tests/system/logical_replication.sh's.
# Whether the stamp served a session is counted: pg_stat_user_tables.seq_scan of idgen.node_origins
# (the fast path reads no row of it); a transaction so served keeps no lock on the table.
# On the PostgreSQL under test and on 19 (whose buffer lock is another call).
# (Controls, run by hand: with page_stamp::unchanged answering true without looking, 8 checks
# fail; without the page count, "on a second page" fails; without the check of the caller's own
# xid, "the rollback" fails; with the fast path taken out, "ten new sessions" fails.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
B19=$(install_for 19) || { echo "  FAIL: pg_idgen for PostgreSQL 19"; exit 1; }
trap 'cluster_stop os_a immediate; PGBIN=$B19 cluster_stop os_b immediate' EXIT

run_on() {
  local bin=$1 P=$2 name=$3 major
  PGBIN=$bin cluster_init "$name" $P "max_prepared_transactions = 5" "idgen.worker_id = 3"
  PGBIN=$bin cluster_start "$name"
  major=$(q $P "SHOW server_version_num" | cut -c1-2)
  phase "PostgreSQL $major"
  q $P "CREATE EXTENSION pg_idgen"
  q $P "CREATE DATABASE second"
  q $P "CREATE DATABASE source"
  qdb $P second "CREATE EXTENSION pg_idgen"
  qdb $P source "CREATE EXTENSION pg_idgen; INSERT INTO idgen.node_origins (system_identifier) VALUES (7001)"
  # first_id PORT [DB]: whether a new session's first Snowflake ID came, or the SQLSTATE it failed with.
  first_id() {
    psql -h 127.0.0.1 -p "$1" -U postgres -d "${2:-postgres}" -X -q -A -t -v VERBOSITY=sqlstate \
      -c "SELECT snowflake_next() > 0" 2>&1 || true
  }
  # scans PORT: how often sessions that ended have scanned idgen.node_origins.
  scans() { q "$1" "SELECT seq_scan FROM pg_stat_user_tables WHERE relid = 'idgen.node_origins'::regclass"; }
  adopt() { q $P "SELECT idgen.snowflake_start_after(clock_timestamp())" >/dev/null; }
  # warm WHAT: a session finds the database clear and stamps it; the next one is served by the stamp.
  warm() {
    local before
    first_id $P >/dev/null
    before=$(scans $P)
    check "$major: $1: (before it, a new session is served by the stamp)" eq "$(first_id $P)|$(($(scans $P) - before))" "t|0"
  }

  check "$major: the first session is clear" eq "$(first_id $P)" t
  check "$major: ... and the second" eq "$(first_id $P)" t
  before=$(scans $P)
  for i in $(seq 1 10); do first_id $P; done >/dev/null
  check "$major: ten new sessions' first IDs read the stamp: no scan of idgen.node_origins" eq "$(($(scans $P) - before))" 0

  # The stamp is read under the table's lock and lets it go, as opening the table would: a long
  # transaction that took its first ID does not hold it (a TRUNCATE of the table would wait).
  check "$major: a transaction served by the stamp holds no lock on idgen.node_origins after its first ID" eq \
    "$(psql -h 127.0.0.1 -p $P -U postgres -X -q -A -t -c "BEGIN" -c "SELECT snowflake_next() > 0" \
      -c "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND relation = 'idgen.node_origins'::regclass" -c "COMMIT" | tr '\n' ' ')" "t 0 "
  warm INSERT
  q $P "INSERT INTO idgen.node_origins (system_identifier) VALUES (7002)"
  check "$major: an INSERT of another system's row: the next session refuses" eq "$(first_id $P)" "ERROR:  55000"
  adopt
  check "$major: ... and makes IDs after snowflake_start_after" eq "$(first_id $P)" t

  warm COPY
  printf '7003\n' | psql -h 127.0.0.1 -p $P -U postgres -X -q -c "COPY idgen.node_origins (system_identifier) FROM STDIN"
  check "$major: COPY: refused" eq "$(first_id $P)" "ERROR:  55000"
  adopt

  # One page full of this system's rows (their copies), a warm stamp, then a row that must go to a
  # second page: the first page's LSN does not move.
  q $P "VACUUM idgen.node_origins"
  q $P "INSERT INTO idgen.node_origins (system_identifier) SELECT idgen.node_system_identifier() FROM generate_series(1, 300)"
  q $P "DELETE FROM idgen.node_origins WHERE (ctid::text::point)[0] >= 1"
  q $P "VACUUM idgen.node_origins"
  check "$major: (the table is one full page)" eq \
    "$(q $P "SELECT pg_relation_size('idgen.node_origins') = current_setting('block_size')::int")" t
  warm "a second page"
  q $P "INSERT INTO idgen.node_origins (system_identifier) VALUES (7004)"
  check "$major: (the row is on the second page)" eq \
    "$(q $P "SELECT (ctid::text::point)[0] FROM idgen.node_origins WHERE system_identifier = 7004")" 1
  check "$major: the row on a second page: refused" eq "$(first_id $P)" "ERROR:  55000"
  # Back to one row on one page.
  q $P "DELETE FROM idgen.node_origins"
  q $P "VACUUM idgen.node_origins"
  adopt

  warm TRUNCATE
  q $P "BEGIN; CREATE TEMP TABLE keep AS SELECT * FROM idgen.node_origins; TRUNCATE idgen.node_origins;
        INSERT INTO idgen.node_origins SELECT * FROM keep; INSERT INTO idgen.node_origins (system_identifier) VALUES (7005); COMMIT"
  check "$major: TRUNCATE and INSERT in one transaction (a new file): refused" eq "$(first_id $P)" "ERROR:  55000"
  adopt

  warm "a prepared transaction"
  q $P "BEGIN; INSERT INTO idgen.node_origins (system_identifier) VALUES (7006); PREPARE TRANSACTION 'o'"
  check "$major: a prepared INSERT: sessions go on (the row is not committed)" eq "$(first_id $P)" t
  check "$major: ... also the next one" eq "$(first_id $P)" t
  q $P "COMMIT PREPARED 'o'"
  check "$major: committed later: refused" eq "$(first_id $P)" "ERROR:  55000"
  # A session that changed the table itself is never stamped (its change may still roll back).
  check "$major: the rollback: one session deletes the row, takes an ID, rolls back" eq \
    "$(psql -h 127.0.0.1 -p $P -U postgres -X -q -A -t -c "BEGIN" -c "DELETE FROM idgen.node_origins WHERE system_identifier = 7006" \
      -c "SELECT snowflake_next() > 0" -c "ROLLBACK")" t
  check "$major: ... the next session refuses" eq "$(first_id $P)" "ERROR:  55000"
  adopt

  warm pg_restore
  dump=$(cluster_dir "$name")/source.dump
  as_pg "$bin/pg_dump" -h 127.0.0.1 -p $P -U postgres -Fc --data-only -t idgen.node_origins -f "$dump" source
  check "$major: (the dump has the row of system 7001)" grep -q 7001 <<<"$(as_pg "$bin/pg_restore" -f - "$dump")"
  as_pg "$bin/pg_restore" -h 127.0.0.1 -p $P -U postgres --data-only --disable-triggers -d postgres "$dump"
  check "$major: pg_restore --data-only --disable-triggers: refused" eq "$(first_id $P)" "ERROR:  55000"
  adopt

  warm "another database"
  first_id $P second >/dev/null
  qdb $P second "INSERT INTO idgen.node_origins (system_identifier) VALUES (7007)"
  check "$major: another database's row: refused there" eq "$(first_id $P second)" "ERROR:  55000"
  check "$major: ... this one goes on" eq "$(first_id $P)" t
  check "$major: the database that came with the row refuses" eq "$(first_id $P source)" "ERROR:  55000"
}

run_on "$PGBIN" "$(port 0)" os_a
run_on "$B19" "$(port 1)" os_b
finish
