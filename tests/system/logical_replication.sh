#!/usr/bin/env bash
# Logical replication between a PostgreSQL 18 node and a PostgreSQL 19 node, both ways, as a
# major upgrade by logical replication runs it (docs/operations.md, "Logical replication, and a major upgrade by it"):
#   1. 18 -> 19: node A (18, worker id 1) publishes FOR ALL TABLES, pg_idgen's own tables among
#      them (segment ranges, public keys); node B (19, worker id 2) subscribes and writes rows of
#      its own into the same table meanwhile. idgen.node_origins comes along, so B refuses its own
#      IDs until snowflake_start_after() (as after a restore: with A's worker id, B's IDs could
#      repeat A's). Then every row arrives, no key repeats (a repeat stops the apply worker on a
#      conflict), each ID decodes to its node.
#   2. The switchover: A stops writing, B has caught up and takes over: its segment IDs go on
#      above A's (the ranges came with the tables), its Snowflake IDs and UUIDv7s repeat none of
#      A's, and a public ID A made decodes on B to the same key.
#   3. 19 -> 18: B publishes, A subscribes again (the way back): rows arrive, no repeat.
#   4. PostgreSQL 19's sequence synchronization (CREATE PUBLICATION ... FOR ALL SEQUENCES):
#      pg_idgen keeps no state in a sequence, so it carries none of it and misses none; the
#      sequences of the application's own tables synchronize beside pg_idgen's tables.
# (Control, run by hand: B given A's worker id and A's row deleted from idgen.node_origins instead
# of snowflake_start_after: B's IDs repeat A's, the apply worker stops on "conflict detected ...
# insert_exists", and "B applied everything A wrote" fails.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
A=$(port 0)
B=$(port 1)
C=$(port 2)
A_BIN=$(install_for 18) || { echo "  FAIL: pg_idgen for PostgreSQL 18"; exit 1; }
B_BIN=$(install_for 19) || { echo "  FAIL: pg_idgen for PostgreSQL 19"; exit 1; }
trap 'PGBIN=$A_BIN cluster_stop lr_a immediate; PGBIN=$B_BIN cluster_stop lr_b immediate' EXIT
PGBIN=$A_BIN cluster_init lr_a $A "wal_level = logical" "idgen.worker_id = 1"
PGBIN=$B_BIN cluster_init lr_b $B "wal_level = logical" "idgen.worker_id = 2"
PGBIN=$A_BIN cluster_start lr_a
PGBIN=$B_BIN cluster_start lr_b
check "A runs PostgreSQL 18, B 19" eq "$(q $A "SHOW server_version_num" | cut -c1-2)$(q $B "SHOW server_version_num" | cut -c1-2)" 1819
schema="CREATE EXTENSION pg_idgen;
  CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), u uuid UNIQUE DEFAULT uuidv7_next(),
                       seg bigint UNIQUE, node text);
  CREATE TABLE invoices (n bigserial PRIMARY KEY, note text);"
q $A "$schema" >/dev/null
q $B "$schema" >/dev/null
q $A "SELECT idgen.segment_create('order', step => 1000)" >/dev/null
key=$(openssl rand -hex 32)
# The key goes in as a bind parameter (never a SQL literal, which statistics views would keep):
# \bind is psql 16's.
"$A_BIN/psql" -h 127.0.0.1 -p $A -U postgres -X -q -v ON_ERROR_STOP=1 -v key="\\x$key" >/dev/null <<'SQL'
SELECT idgen.public_key_create('order', 'ord', $1::bytea) \bind :key \g
SQL

# sync_wait PORT SUBSCRIPTION: until the subscriber has applied everything its publisher wrote.
sync_wait() {
  local port=$1 sub=$2 pub_port=$3 lsn i
  lsn=$(q "$pub_port" "SELECT pg_current_wal_lsn()")
  for i in $(seq 1 300); do
    [ "$(q "$port" "SELECT coalesce(bool_and(latest_end_lsn >= '$lsn'), false) FROM pg_stat_subscription WHERE subname = '$sub' AND relid IS NULL")" = t ] && return 0
    sleep 0.1
  done
  echo "    $sub did not catch up with $lsn" >&2
  return 1
}

phase "1. A (18) publishes everything, B (19) subscribes and writes too"
q $A "INSERT INTO orders (seg, node) SELECT segment_next('order'), 'A' FROM generate_series(1, 100)"
q $A "CREATE PUBLICATION everything FOR ALL TABLES"
# B has made IDs before (two sessions: the second is served by the stamp of idgen.node_origins,
# src/pg/page_stamp.rs); the rows the subscription's copy writes are seen all the same.
q $B "SELECT snowflake_next()" >/dev/null
q $B "SELECT snowflake_next()" >/dev/null
PGOPTIONS="-c client_min_messages=warning" q $B "CREATE SUBSCRIPTION from_a CONNECTION 'host=127.0.0.1 port=$A dbname=postgres user=postgres' PUBLICATION everything"
for i in $(seq 1 300); do
  [ "$(q $B "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'")" = 0 ] && break
  sleep 0.1
done
check "the initial copy is done" eq "$(q $B "SELECT count(*) FROM orders")" 100
# idgen.node_origins came too: B now holds IDs of another system, and until it is told where to
# start it refuses, as after a restore (with A's worker id, B's IDs could repeat A's).
err=$(psql -h 127.0.0.1 -p $B -U postgres -X -q -A -t -c "\set VERBOSITY verbose" -c "SELECT snowflake_next()" 2>&1 || true)
check "B refuses its own Snowflake IDs: the database holds IDs of another system (55000)" \
  grep -q "ERROR:  55000: Snowflake IDs are refused in this database: its IDs were made on another database system" <<<"$err"
q $B "SELECT idgen.snowflake_start_after(clock_timestamp() + current_setting('idgen.max_drift')::interval)" >/dev/null
check "after snowflake_start_after, as the hint says, only B's system is recorded" eq \
  "$(q $B "SELECT count(*), bool_and(system_identifier = idgen.node_system_identifier()) FROM idgen.node_origins")" "1|t"
for i in 1 2 3 4; do
  q $A "INSERT INTO orders (seg, node) SELECT segment_next('order'), 'A' FROM generate_series(1, 5000);
        INSERT INTO invoices (note) SELECT 'A' FROM generate_series(1, 100)" &
  q $B "INSERT INTO orders (node) SELECT 'B' FROM generate_series(1, 5000)" &
done
wait
check "A made its rows" eq "$(q $A "SELECT count(*) FROM orders")" 20100
check "B applied everything A wrote" sync_wait $B from_a $A
check "every row of A arrived at B beside B's own" eq "$(q $B "SELECT count(*) FILTER (WHERE node = 'A'), count(*) FILTER (WHERE node = 'B') FROM orders")" "20100|20000"
check "no key repeats at B (Snowflake IDs, UUIDv7s)" eq "$(q $B "SELECT count(DISTINCT id) = count(*) AND count(DISTINCT u) = count(*) FROM orders")" t
check "the apply worker never stopped on a conflict" not_grep -qE "duplicate key|conflict detected" "$(cluster_dir lr_b)/server.log"
check "each ID decodes to its node's worker id" eq \
  "$(q $B "SELECT string_agg(DISTINCT node || '=' || id_worker_id(id), ',' ORDER BY node || '=' || id_worker_id(id)) FROM orders")" "A=1,B=2"
check "pg_idgen's own tables came with FOR ALL TABLES (the segment range)" eq \
  "$(q $B "SELECT max_id >= (SELECT max(seg) FROM orders) FROM idgen.segments WHERE biz_type = 'order'" 2>&1)" t
pub=$(q $A "SELECT idgen.id_to_public(max(id), 'order') FROM orders WHERE node = 'A'")
a_max=$(q $A "SELECT max(id) FROM orders WHERE node = 'A'")
a_seg=$(q $A "SELECT max(seg) FROM orders")

phase "2. the switchover: A stops writing, B takes over"
sync_wait $B from_a $A
q $B "ALTER SUBSCRIPTION from_a DISABLE"
PGBIN=$A_BIN cluster_stop lr_a fast
q $B "SELECT setval('invoices_n_seq', (SELECT max(n) FROM invoices))" >/dev/null
q $B "INSERT INTO orders (seg, node) SELECT segment_next('order'), 'B after' FROM generate_series(1, 5000);
      INSERT INTO invoices (note) SELECT 'B after' FROM generate_series(1, 100)"
check "B's segment IDs go on above A's ($a_seg)" eq "$(q $B "SELECT min(seg) > $a_seg FROM orders WHERE node = 'B after'")" t
check "no Snowflake ID or UUIDv7 repeats after the switchover" eq \
  "$(q $B "SELECT count(DISTINCT id) = count(*) AND count(DISTINCT u) = count(*) AND count(DISTINCT seg) = count(seg) FROM orders")" t
check "a public ID A made decodes on B to the same key" eq "$(q $B "SELECT idgen.public_to_id('$pub', 'order')")" "$a_max"

phase "3. the way back: B (19) publishes, A (18) subscribes"
PGBIN=$A_BIN cluster_start lr_a
q $A "TRUNCATE orders, invoices"
q $B "CREATE PUBLICATION back FOR TABLE orders, invoices"
PGOPTIONS="-c client_min_messages=warning" q $A "CREATE SUBSCRIPTION from_b CONNECTION 'host=127.0.0.1 port=$B dbname=postgres user=postgres' PUBLICATION back"
q $B "INSERT INTO orders (node) SELECT 'B back' FROM generate_series(1, 5000)"
sync_wait $A from_b $B
for i in $(seq 1 100); do
  [ "$(q $A "SELECT count(*) FROM orders")" = "$(q $B "SELECT count(*) FROM orders")" ] && break
  sleep 0.2
done
check "every row of B arrived at A" eq "$(q $A "SELECT count(*) FROM orders")" "$(q $B "SELECT count(*) FROM orders")"
check "no repeat at A either" eq "$(q $A "SELECT count(DISTINCT id) = count(*) AND count(DISTINCT u) = count(*) FROM orders")" t

phase "4. PostgreSQL 19's sequence synchronization"
q $B "CREATE PUBLICATION seqs FOR ALL SEQUENCES"
check "FOR ALL SEQUENCES publishes no sequence of pg_idgen's (it keeps none)" eq "$(q $B "
  SELECT count(*) FROM pg_publication_sequences p
    JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = format('%I.%I', p.schemaname, p.sequencename)::regclass
                    AND d.deptype = 'e'
   WHERE p.pubname = 'seqs'")" 0
check "... but the application's own" eq "$(q $B "SELECT string_agg(sequencename, ',') FROM pg_publication_sequences WHERE pubname = 'seqs'")" invoices_n_seq
PGBIN=$B_BIN cluster_init lr_c $C "wal_level = logical" "idgen.worker_id = 3"
PGBIN=$B_BIN cluster_start lr_c
trap 'PGBIN=$A_BIN cluster_stop lr_a immediate; PGBIN=$B_BIN cluster_stop lr_b immediate; PGBIN=$B_BIN cluster_stop lr_c immediate' EXIT
q $C "$schema" >/dev/null
PGOPTIONS="-c client_min_messages=warning" q $C "CREATE SUBSCRIPTION c_from_b CONNECTION 'host=127.0.0.1 port=$B dbname=postgres user=postgres' PUBLICATION back, seqs"
sync_wait $C c_from_b $B
q $B "SELECT nextval('invoices_n_seq') FROM generate_series(1, 50)" >/dev/null
check "ALTER SUBSCRIPTION ... REFRESH SEQUENCES" q $C "ALTER SUBSCRIPTION c_from_b REFRESH SEQUENCES"
for i in $(seq 1 100); do
  [ "$(q $C "SELECT last_value FROM invoices_n_seq")" = "$(q $B "SELECT last_value FROM invoices_n_seq")" ] && break
  sleep 0.2
done
check "the application's sequence synchronized ($(q $B "SELECT last_value FROM invoices_n_seq"))" eq \
  "$(q $C "SELECT last_value FROM invoices_n_seq")" "$(q $B "SELECT last_value FROM invoices_n_seq")"
q $C "ALTER SUBSCRIPTION c_from_b DISABLE"
q $C "INSERT INTO orders (node) SELECT 'C' FROM generate_series(1, 5000)"
check "the synchronized node's own IDs repeat none of what it received" eq \
  "$(q $C "SELECT count(DISTINCT id) = count(*) AND count(DISTINCT u) = count(*) FROM orders")" t
finish
