#!/usr/bin/env bash
# docs/guarantees.md, guarantees 3 and 5 across failover: a physical standby refuses to generate (25006) but decodes; after
# the primary dies and the standby is promoted, its IDs are above every ID of the old primary,
# even though the standby's clock is 30 s behind and the primary issued IDs after the base backup
# (only the WAL-logged mark can tell the standby about those). The same for UUIDv7s, whose stream
# shares the mark, and for an adopted sequence's draws (an IDENTITY column of the application's):
# the standby refuses them as PostgreSQL refuses nextval() there, and after promotion they go on
# above the old primary's.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
S=$(port 1)
CLOCK="$WORK/standby.faketime"
cluster_init sb_primary $P "idgen.worker_id = 5" "wal_level = replica" "max_wal_senders = 5"
cluster_start sb_primary
trap 'cluster_stop sb_primary immediate; cluster_stop sb_standby immediate' EXIT
q $P "CREATE EXTENSION pg_idgen; CREATE TABLE seen (phase text, id bigint); CREATE TABLE useen (phase text, id uuid);
      CREATE TABLE adopted (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, phase text);
      SELECT count(*) FROM idgen.adopt_sequence('adopted_id_seq')" >/dev/null
q $P "INSERT INTO adopted (phase) SELECT 'before_backup' FROM generate_series(1, 1000)"
q $P "INSERT INTO seen SELECT 'before_backup', snowflake_next() FROM generate_series(1, 20000)"

standby_init sb_standby $P $S
echo "-30s" | as_pg tee "$CLOCK" >/dev/null
cluster_start_faketime sb_standby "$CLOCK"
wait_ready $S

check "the standby is in recovery" eq "$(q $S "SELECT pg_is_in_recovery()")" t
err=$(psql -h 127.0.0.1 -p $S -U postgres -X -q -A -t -c "\set VERBOSITY sqlstate" -c "SELECT snowflake_next()" 2>&1 || true)
check "the standby refuses to generate with 25006" grep -q "25006" <<<"$err"
check "the standby refuses UUIDv7s with 25006" grep -q "25006" <<<"$(psql -h 127.0.0.1 -p $S -U postgres -X -q -A -t -c "\set VERBOSITY sqlstate" -c "SELECT uuidv7_next()" 2>&1 || true)"
check "the standby refuses an adopted sequence's draw, as PostgreSQL its nextval() (25006)" grep -q "25006" \
  <<<"$(psql -h 127.0.0.1 -p $S -U postgres -X -q -A -t -c "\set VERBOSITY sqlstate" -c "SELECT nextval('adopted_id_seq')" 2>&1 || true)"
check "the standby decodes" eq "$(q $S "SELECT worker_id FROM seen, id_decode(id) LIMIT 1")" 5

# IDs the base backup's copy of the mark knows nothing about; some borrowed ahead of the clock.
sleep 2
q $P "INSERT INTO seen SELECT 'after_backup', snowflake_next() FROM generate_series(1, 20000)"
q $P "SELECT count(*) FROM snowflake_next_batch(3000000)" >/dev/null
q $P "INSERT INTO seen SELECT 'last_on_primary', snowflake_next()"
q $P "INSERT INTO adopted (phase) SELECT 'after_backup' FROM generate_series(1, 1000)"
q $P "INSERT INTO useen SELECT 'after_backup', u FROM uuidv7_next_batch(200000) u"
lsn=$(q $P "SELECT pg_current_wal_lsn()")
caught_up=f
for _ in $(seq 1 240); do
  caught_up=$(q $S "SELECT pg_last_wal_replay_lsn() >= '$lsn'")
  [ "$caught_up" = t ] && break
  sleep 0.5
done
check "the standby replayed the primary's WAL up to its last IDs" eq "$caught_up" t
primary_max=$(q $S "SELECT max(id) FROM seen")
check "the standby replayed the primary's mark (its floor is above the primary's last ID)" \
  test "$(q $S "SELECT last_id FROM idgen.status")" -gt "$primary_max"
# What IdgenStandbyMarkBehind compares (monitoring/alerts.yml): the mark the standby replayed.
check "the standby's idgen.status shows the replayed mark, above the time of the primary's last ID" \
  eq "$(q $S "SELECT persisted_mark > id_timestamp($primary_max) FROM idgen.status")" t

cluster_stop sb_primary immediate
as_pg "$PGBIN/pg_ctl" -D "$(cluster_dir sb_standby)" -w promote >/dev/null
check "the standby was promoted" eq "$(q $S "SELECT pg_is_in_recovery()")" f
q $S "INSERT INTO seen SELECT 'promoted', snowflake_next() FROM generate_series(1, 20000)"
check "after promotion every ID is above every ID of the old primary" \
  test "$(q $S "SELECT min(id) FROM seen WHERE phase = 'promoted'")" -gt "$primary_max"
check "no ID repeats" eq "$(q $S "SELECT count(*) - count(DISTINCT id) FROM seen")" 0
q $S "INSERT INTO adopted (phase) SELECT 'promoted' FROM generate_series(1, 1000)"
check "after promotion the adopted sequence's draws are above every one of the old primary, none repeats" eq \
  "$(q $S "SELECT (SELECT min(id) FROM adopted WHERE phase = 'promoted') > (SELECT max(id) FROM adopted WHERE phase <> 'promoted')
                  AND count(*) = count(DISTINCT id) FROM adopted")" t
q $S "INSERT INTO useen SELECT 'promoted', uuidv7_next() FROM generate_series(1, 20000)"
check "after promotion every UUIDv7 is above every UUIDv7 of the old primary" eq "$(q $S "
  SELECT (SELECT id FROM useen WHERE phase = 'promoted' ORDER BY id LIMIT 1)
       > (SELECT id FROM useen WHERE phase <> 'promoted' ORDER BY id DESC LIMIT 1)")" t
finish
