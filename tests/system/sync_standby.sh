#!/usr/bin/env bash
# Failover to a synchronous standby never repeats an ID (docs/guarantees.md, guarantee 3). A primary with
# synchronous_standby_names naming a pg_basebackup standby whose clock is 30 s behind. The standby
# goes away (its connection cut); the primary is still asked for Snowflake and message IDs, which
# a SELECT makes without a transaction id, so no commit waits for the standby. An ID beyond the
# reservation must wait until the reservation's WAL record is confirmed, as a commit would: here
# the callers time out instead. The primary dies, the standby comes back and is promoted: every
# ID it makes is above every ID the old primary handed out.
# (Control, run by hand on the code before the fix: the primary handed out 6,800 IDs of each kind
# after the cut, and 4 checks fail, with 4,300 Snowflake IDs made twice.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
S=$(port 1)
CLOCK="$WORK/sync_standby.faketime"
cluster_init ss_primary $P "idgen.worker_id = 3" "wal_level = replica" "max_wal_senders = 5" \
  "synchronous_standby_names = 'ss_standby'"
cluster_start ss_primary
trap 'cluster_stop ss_primary immediate; cluster_stop ss_standby immediate' EXIT
# Its application_name is the name synchronous_standby_names uses.
standby_init ss_standby $P $S ss_standby
echo "-30s" | as_pg tee "$CLOCK" >/dev/null
cluster_start_faketime ss_standby "$CLOCK"
wait_ready $S
for _ in $(seq 1 100); do
  [ "$(q $P "SELECT sync_state FROM pg_stat_replication")" = sync ] && break
  sleep 0.1
done
check "the standby is synchronous" eq "$(q $P "SELECT sync_state FROM pg_stat_replication")" sync
q $P "CREATE EXTENSION pg_idgen; CREATE TABLE seen (id bigint, m text, promoted bool DEFAULT false)"
q $P "INSERT INTO seen SELECT snowflake_next(), msgid_next(1, 'x') FROM generate_series(1, 20000)"
check "with the synchronous standby there, IDs come as usual" eq "$(q $S "SELECT count(*) FROM seen")" 20000

# The standby's connection is cut; the primary is asked for IDs for 4 s (a SELECT, no commit).
cluster_stop ss_standby immediate
ids=$(mktemp)
msgs=$(mktemp)
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 4 ]; do
  psql -h 127.0.0.1 -p $P -U postgres -X -q -A -t -c "SET statement_timeout = '300ms'" \
    -c "SELECT snowflake_next() FROM generate_series(1, 100)" >>"$ids" 2>/dev/null || true
  psql -h 127.0.0.1 -p $P -U postgres -X -q -A -t -c "SET statement_timeout = '300ms'" \
    -c "SELECT msgid_next(1, 'x') FROM generate_series(1, 100)" >>"$msgs" 2>/dev/null || true
done
echo "    after the cut the primary handed out $(wc -l <"$ids") Snowflake and $(wc -l <"$msgs") message IDs"
check "after the cut, callers beyond the reservation wait (here: time out)" \
  grep -q "canceling statement due to statement timeout" <<<"$(psql -h 127.0.0.1 -p $P -U postgres -X -q \
    -c "SET statement_timeout = '300ms'" -c "SELECT snowflake_next() FROM generate_series(1, 1000000)" 2>&1)"

kill_server ss_primary
cluster_start_faketime ss_standby "$CLOCK"
wait_ready $S
as_pg "$PGBIN/pg_ctl" -D "$(cluster_dir ss_standby)" -w promote >/dev/null
check "the standby was promoted" eq "$(q $S "SELECT pg_is_in_recovery()")" f
# It has no synchronous standby of its own (commits would wait for one, and so would IDs).
q $S "ALTER SYSTEM SET synchronous_standby_names = ''"
q $S "SELECT pg_reload_conf()" >/dev/null
# A session started before the postmaster has read the file would still wait, forever: so until a
# new one sees the empty setting (at most 10 s).
for _ in $(seq 1 100); do
  [ -z "$(q $S "SHOW synchronous_standby_names")" ] && break
  sleep 0.1
done
check "the promoted standby waits for no standby of its own" eq "$(q $S "SHOW synchronous_standby_names")" ""
q $S "CREATE TABLE old_primary (id bigint, m text)"
psql -h 127.0.0.1 -p $S -U postgres -X -q -c "\\copy old_primary (id) FROM '$ids'"
psql -h 127.0.0.1 -p $S -U postgres -X -q -c "\\copy old_primary (m) FROM '$msgs'"
q $S "INSERT INTO seen SELECT snowflake_next(), msgid_next(1, 'x'), true FROM generate_series(1, 20000)"
# 20 million IDs: the promoted node's counters sweep about 5 s of ticks, the whole time the old
# primary went on after the cut.
repeats=$(q $S "SELECT count(*) FROM (SELECT snowflake_next_batch(10000000) UNION ALL
                                      SELECT snowflake_next_batch(10000000)) b (id)
                 WHERE id IN (SELECT id FROM old_primary)")
check "none of 20 million Snowflake IDs of the promoted standby was handed out by the old primary" \
  eq "$repeats" 0
check "no message ID of the promoted standby was handed out by the old primary" eq \
  "$(q $S "SELECT count(*) FROM seen s JOIN old_primary o USING (m)")" 0
check "the new Snowflake IDs are above all of the old primary's" eq "$(q $S "SELECT
  (SELECT min(id) FROM seen WHERE promoted) > greatest((SELECT max(id) FROM seen WHERE NOT promoted),
                                                      (SELECT max(id) FROM old_primary))")" t
check "the new message IDs are above all of the old primary's" eq "$(q $S "SELECT
  (SELECT min(m) FROM seen WHERE promoted) > greatest((SELECT max(m) FROM seen WHERE NOT promoted),
                                                     (SELECT max(m) FROM old_primary))")" t
rm -f "$ids" "$msgs"
finish
