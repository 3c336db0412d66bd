#!/usr/bin/env bash
# Only the holder of a lease renews or ends it (docs/guarantees.md, guarantee 7), whoever else tries. Node A
# leases the one worker id of the range (0) from a coordinator under its default code, which any
# role can read on A and anyone can guess. On the coordinator, mallory, a member of idgen_client
# that is not A's role, tries to free that worker id:
#   - idgen.worker_release and idgen.worker_heartbeat without a lease number, and with a guessed
#     one and with the number of a lease of her own;
#   - reading the lease number: idgen.workers and idgen.worker_leases on the coordinator; on A,
#     idgen.worker_status as a plain role and as a member of pg_monitor (which reads every
#     setting), and as a superuser, who sees it;
# while A makes IDs. Node B, set up like A, has started before and asks for a worker id all the
# while: it must get none while A holds it, and no ID of B may repeat one of A. (Before 0.2.5 the release without a lease number
# went through; B then leased worker id 0 while A went on until its next heartbeat, and millions
# of IDs repeated.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
COORD=$(port 0)
A=$(port 1)
B=$(port 2)
trap 'for n in lp_a lp_b lp_coord; do cluster_stop $n immediate; done' EXIT

cluster_init lp_coord $COORD "idgen.worker_lease_grace = '1s'"
cluster_start lp_coord
q $COORD "CREATE EXTENSION pg_idgen;
          CREATE ROLE lp_node LOGIN IN ROLE idgen_client;
          CREATE ROLE mallory LOGIN IN ROLE idgen_client" >/dev/null
lease_conf=(
  "idgen.worker_id_source = lease"
  "idgen.worker_lease_conninfo = 'host=127.0.0.1 port=$COORD dbname=postgres user=lp_node'"
  "idgen.worker_lease_min = 0"
  "idgen.worker_lease_max = 0"
)
# A renews every 2 s; B, waiting for a worker id, asks every 100 ms: a worker id freed by a
# forged release would go to B before A noticed.
cluster_init lp_a $A "${lease_conf[@]}" "idgen.worker_lease_ttl = '6s'"
cluster_start lp_a
q $A "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint PRIMARY KEY);
      CREATE ROLE peek LOGIN; CREATE ROLE mon LOGIN IN ROLE pg_monitor" >/dev/null
for _ in $(seq 1 300); do q $A "SELECT snowflake_next()" >/dev/null 2>&1 && break; sleep 0.02; done
check "node A leased worker id 0" eq "$(q $A "SELECT worker_id FROM idgen.worker_status")" 0
code=$(q $COORD "SELECT code FROM idgen.workers WHERE worker_id = 0")
check "A's code is readable by any role on A (a name, not a proof)" eq \
  "$(psql -h 127.0.0.1 -p $A -U peek -d postgres -X -q -A -t -c "SELECT code FROM idgen.worker_status")" "$code"

phase "node B starts and asks for a worker id of the same range while A makes IDs"
cluster_init lp_b $B "${lease_conf[@]}" "idgen.worker_lease_ttl = '1s'"
cluster_start lp_b
q $B "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint PRIMARY KEY)" >/dev/null
# Both make IDs the whole time (B's attempts fail while it has no worker id).
psql -h 127.0.0.1 -p $A -U postgres -X -q -c "DO \$\$ BEGIN
  FOR i IN 1..40 LOOP INSERT INTO t SELECT snowflake_next() FROM generate_series(1, 100000); COMMIT;
  PERFORM pg_sleep(0.05); END LOOP; END \$\$" >"$WORK/lp_a.err" 2>&1 &
a_load=$!
for _ in $(seq 1 60); do
  q $B "INSERT INTO t SELECT snowflake_next() FROM generate_series(1, 50000)" >/dev/null 2>&1 || true
  sleep 0.1
done &
b_load=$!

as_mallory() { psql -h 127.0.0.1 -p $COORD -U mallory -d postgres -X -q -A -t -v ON_ERROR_STOP=1 -c "$1" 2>&1; }
sqlstate() { psql -h 127.0.0.1 -p "$1" -U "$2" -d postgres -X -q -A -t -c "\set VERBOSITY sqlstate" -c "$3" 2>&1 || true; }
phase "mallory, in idgen_client on the coordinator, tries to free worker id 0"
check "release without a lease number: refused with 42501" eq \
  "$(sqlstate $COORD mallory "SELECT idgen.worker_release(0, '$code', clock_timestamp())")" "ERROR:  42501"
check "the refusal says the lease number is required, and where an administrator finds it" grep -q \
  "HINT:  Pass lease => the lease number from idgen.worker_acquire(). An administrator (idgen_admin) reads it in idgen.worker_leases" \
  <<<"$(as_mallory "SELECT idgen.worker_release(0, '$code')")"
check "heartbeat without a lease number: refused with 42501" eq \
  "$(sqlstate $COORD mallory "SELECT idgen.worker_heartbeat(0, '$code', clock_timestamp())")" "ERROR:  42501"
for guess in 1 2 1099511627776; do
  check "release with a guessed lease number ($guess): refused with 55000" eq \
    "$(sqlstate $COORD mallory "SELECT idgen.worker_release(0, '$code', lease => $guess)")" "ERROR:  55000"
done
own=$(as_mallory "SELECT lease FROM idgen.worker_acquire('mallory', '1 min', 7, 7)")
check "release with the number of mallory's own lease: refused with 55000" eq \
  "$(sqlstate $COORD mallory "SELECT idgen.worker_release(0, '$code', lease => $own)")" "ERROR:  55000"
check "mallory cannot read idgen.workers" grep -q "permission denied" <<<"$(as_mallory "SELECT lease FROM idgen.workers")"
check "mallory cannot read idgen.worker_leases" grep -q "permission denied" <<<"$(as_mallory "SELECT lease FROM idgen.worker_leases")"
check "on A, a plain role does not see the lease number" eq \
  "$(psql -h 127.0.0.1 -p $A -U peek -d postgres -X -q -A -t -c "SELECT coalesce(lease::text, 'hidden') FROM idgen.worker_status")" hidden
check "on A, a member of pg_monitor does not see it either" eq \
  "$(psql -h 127.0.0.1 -p $A -U mon -d postgres -X -q -A -t -c "SELECT coalesce(lease::text, 'hidden') FROM idgen.worker_status")" hidden
check "on A, a superuser sees it (the coordinator's number)" eq \
  "$(q $A "SELECT lease FROM idgen.worker_status")" "$(q $COORD "SELECT lease FROM idgen.workers WHERE worker_id = 0")"
check "worker id 0 is still held by A" eq "$(q $COORD "SELECT state || ' ' || code FROM idgen.worker_leases WHERE worker_id = 0")" "held $code"

a_status=0
wait $a_load || a_status=$?
wait $b_load || true
show_errors "$WORK/lp_a.err"
check "A made IDs the whole time, without an error" eq "$a_status|$(q $A "SELECT count(*) FROM t")" "0|4000000"
check "B got no worker id while A held worker id 0" eq "$(q $B "SELECT coalesce(worker_id::text, 'none') FROM idgen.worker_status")" none
psql -h 127.0.0.1 -p $B -U postgres -X -q -c "COPY t TO STDOUT" |
  psql -h 127.0.0.1 -p $A -U postgres -X -q -c "CREATE TABLE from_b (id bigint); COPY from_b FROM STDIN"
check "no ID of B repeats an ID of A ($(q $A "SELECT count(*) FROM from_b") IDs of B)" eq \
  "$(q $A "SELECT count(*) FROM from_b JOIN t USING (id)")" 0
finish
