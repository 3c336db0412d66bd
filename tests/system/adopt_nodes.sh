#!/usr/bin/env bash
# Adopted sequences on two nodes that replicate one table to each other (PostgreSQL 16+'s
# bidirectional logical replication, origin = none): both have the same schema, a bigserial key
# adopted on each, worker ids 1 and 2. Both write at once; every row reaches the other node, no
# key repeats (a repeat stops the apply worker on a duplicate key: its error count stays 0) and
# each key decodes to the node that made it.
# Control, in the test: the same load on a plain bigserial table replicated the same way collides
# at once (both nodes hand out 1, 2, 3 ...): the apply workers report errors.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
A=$(port 0)
B=$(port 1)
BIN=$(install_for 18) || { echo "  FAIL: pg_idgen for PostgreSQL 18"; exit 1; }
export PGBIN=$BIN
trap 'cluster_stop an_a immediate; cluster_stop an_b immediate' EXIT
cluster_init an_a $A "wal_level = logical" "idgen.worker_id = 1"
cluster_init an_b $B "wal_level = logical" "idgen.worker_id = 2"
cluster_start an_a
cluster_start an_b
schema="CREATE EXTENSION pg_idgen;
  CREATE TABLE orders (id bigserial PRIMARY KEY, node text);
  CREATE TABLE plain_orders (id bigserial PRIMARY KEY, node text);
  SELECT count(*) FROM idgen.adopt_sequence('orders_id_seq');
  CREATE PUBLICATION adopted FOR TABLE orders;
  CREATE PUBLICATION plain FOR TABLE plain_orders"
q $A "$schema" >/dev/null
q $B "$schema" >/dev/null
for pair in "$A $B" "$B $A"; do
  set -- $pair
  PGOPTIONS="-c client_min_messages=warning" q $1 "CREATE SUBSCRIPTION adopted_from_$2 CONNECTION 'host=127.0.0.1 port=$2 user=postgres dbname=postgres'
          PUBLICATION adopted WITH (origin = none, copy_data = false)" >/dev/null
  PGOPTIONS="-c client_min_messages=warning" q $1 "CREATE SUBSCRIPTION plain_from_$2 CONNECTION 'host=127.0.0.1 port=$2 user=postgres dbname=postgres'
          PUBLICATION plain WITH (origin = none, copy_data = false)" >/dev/null
done

# caught_up PORT FROM_PORT: until PORT's subscriptions have applied everything FROM_PORT wrote
# (at most 30 s).
caught_up() {
  local port=$1 from=$2 lsn i
  lsn=$(q "$from" "SELECT pg_current_wal_lsn()")
  for i in $(seq 1 300); do
    [ "$(q "$port" "SELECT coalesce(bool_and(latest_end_lsn >= '$lsn'), false) FROM pg_stat_subscription
                     WHERE subname = 'adopted_from_$from' AND relid IS NULL")" = t ] && return 0
    sleep 0.1
  done
  echo "    the subscription of $port from $from did not reach $lsn in 30 s" >&2
  return 1
}
errors() { q "$1" "SELECT coalesce(sum(apply_error_count), 0) FROM pg_stat_subscription_stats WHERE subname LIKE '$2%'"; }

phase "both nodes write the adopted table at once"
echo "INSERT INTO orders (node) VALUES (current_setting('port'));" >"$WORK/adopt_nodes.sql"
"$PGBIN/pgbench" -h 127.0.0.1 -p $A -U postgres -n -c 4 -j 2 -t 500 -f "$WORK/adopt_nodes.sql" postgres >"$WORK/adopt_nodes_a.log" 2>&1 &
"$PGBIN/pgbench" -h 127.0.0.1 -p $B -U postgres -n -c 4 -j 2 -t 500 -f "$WORK/adopt_nodes.sql" postgres >"$WORK/adopt_nodes_b.log" 2>&1
wait
check "both loads ran without error" eq "$(cat "$WORK/adopt_nodes_a.log" "$WORK/adopt_nodes_b.log" | grep -c 'number of failed transactions: 0')" 2
check "A applied everything B wrote, and B everything A wrote" caught_up $A $B
check "... (B from A)" caught_up $B $A
check "4000 rows on each node, the same ones" eq "$(q $A "SELECT count(*) || ' ' || sum(hashtext(id::text))::text FROM orders")" \
  "$(q $B "SELECT count(*) || ' ' || sum(hashtext(id::text))::text FROM orders")"
check "4000 rows" eq "$(q $A "SELECT count(*) FROM orders")" 4000
check "no apply error on either node (a repeated key would stop one)" eq "$(errors $A adopted)$(errors $B adopted)" 00
check "each key decodes to the node that made it" eq \
  "$(q $A "SELECT count(*) FILTER (WHERE id_worker_id(id) = CASE node WHEN '$A' THEN 1 WHEN '$B' THEN 2 END) FROM orders")" 4000

phase "control: the same on a plain bigserial table collides"
# B's own INSERT fails if A's rows 1-10 arrived first; otherwise the apply workers fail on them.
q $A "INSERT INTO plain_orders (node) SELECT 'A' FROM generate_series(1, 10)"
collided=
own=$(q $B "INSERT INTO plain_orders (node) SELECT 'B' FROM generate_series(1, 10)" 2>&1 || true)
grep -q 'duplicate key' <<<"$own" && collided=yes
for i in $(seq 1 300); do
  [ -z "$collided" ] || break
  [ "$(errors $A plain)" != 0 ] || [ "$(errors $B plain)" != 0 ] && { collided=yes; break; }
  sleep 0.1
done
check "plain sequences on two nodes repeat keys (an INSERT or an apply worker fails on them)" eq "$collided" yes
finish
