#!/usr/bin/env bash
# A dead node replaced by a server restored from an older base backup (the same worker id: a
# Citus group pointed at it with citus_update_node, or a setting-mode node rebuilt from backup)
# has the same system identifier and the backup's copy of the mark: nothing tells it of the IDs
# the dead node made after the backup, and it would repeat those ahead of its clock. docs/citus.md's
# procedure ("Removing and replacing a node"): before the replacement takes writes,
# snowflake_start_after(the time the dead node was last seen + its idgen.max_drift, from a clock you
# trust), or its last ID's time. The dead node here ran about 98 s ahead of its clock (js_safe_s,
# 400,000 IDs, max_drift 120 s).
# 1. Without the procedure the replacement repeats the dead node's IDs (the hazard is real: this
#    check fails if the scenario stops reproducing it).
# 2. With it, none of 20,000 IDs is at or below the dead node's last one.
# 3. The replacement's clock behind (libfaketime), far enough that its own clock_timestamp() +
#    max_drift falls short of the dead node's last ID: that form repeats its IDs (as issue 44
#    found); the trusted time is taken although it is more than max_drift ahead of the
#    replacement's clock (before the fix: refused, 22023, leaving no safe path), with a WARNING;
#    IDs are refused while the clock is behind, and once it is fixed none repeats.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
R=$(port 1)
trap 'cluster_stop rp_dead immediate; cluster_stop rp_new immediate' EXIT
cluster_init rp_dead $P "idgen.layout = 'js_safe_s'" "idgen.worker_id = 2" "idgen.max_drift = '120s'"
cluster_start rp_dead
q $P "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int)"
q $P "INSERT INTO t (v) SELECT g FROM generate_series(1, 1000) g"
backup="$WORK/rp_backup"
as_pg rm -rf "$backup"
as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p $P -U postgres -D "$backup" -X stream
# After the backup: 400,000 IDs, the last ones about 98 s ahead of the clock; then a power cut.
q $P "INSERT INTO t (v) SELECT -1 FROM generate_series(1, 400000)"
as_pg bash -c "cat > '$WORK/rp_old_ids'" < <(q $P "SELECT id FROM t")
dead_max=$(q $P "SELECT max(id) FROM t")
ahead=$(q $P "SELECT extract(epoch FROM id_timestamp(max(id)) - clock_timestamp())::int FROM t")
echo "    the dead node's last ID is $ahead s ahead of its clock"
kill_server rp_dead

# replacement [CLOCK_OFFSET]: a server from the backup, on its own port, with the dead node's
# worker id; its clock moved by CLOCK_OFFSET (libfaketime, "+0" by default).
CLOCK="$WORK/rp_new.faketime"
replacement() {
  echo "${1:-+0}" | as_pg tee "$CLOCK" >/dev/null
  as_pg rm -rf "$(cluster_dir rp_new)"
  as_pg cp -a "$backup" "$(cluster_dir rp_new)"
  cluster_conf rp_new "port = $R"
  cluster_start_faketime rp_new "$CLOCK"
  wait_ready $R
  q $R "CREATE TABLE old (id bigint); COPY old FROM '$WORK/rp_old_ids'"
}

phase "1. without the procedure"
replacement
check "the replacement has the dead node's worker id and system" eq \
  "$(q $R "SELECT worker_id FROM idgen.status")|$(q $R "SELECT count(*) FROM t")" "2|1000"
repeats=$(q $R "SELECT count(*) FROM snowflake_next_batch(20000) n JOIN old o ON o.id = n")
echo "    $repeats of 20,000 IDs repeat the dead node's"
check "without the procedure, it repeats the dead node's IDs" test "$repeats" -gt 0
cluster_stop rp_new immediate

# trusted_after SECONDS: the time SECONDS from now by this machine's clock (the test's trusted one).
trusted_after() { date -u -d "+$1 sec" '+%Y-%m-%d %H:%M:%S.%N+00'; }
state() { psql -h 127.0.0.1 -p $R -U postgres -X -q -A -t -c "\set VERBOSITY verbose" -c "$1" 2>&1 || true; }

phase "2. with it"
replacement
q $R "SELECT idgen.snowflake_start_after('$(trusted_after 120)')" >/dev/null
check "after snowflake_start_after(now + the dead node's max_drift), no ID is at or below its last" eq \
  "$(q $R "SELECT min(n) > $dead_max FROM snowflake_next_batch(20000) n")" t
cluster_stop rp_new immediate

phase "3. the replacement's clock behind"
behind=$((120 - ahead + 15))
echo "    the replacement's clock is $behind s behind"
replacement "-${behind}s"
# Its clock 180 s before the dead node's last ID, held still there while it takes the remedy in
# its own clock's form (libfaketime's absolute form, in this machine's time zone as the
# server's): clock_timestamp() + max_drift is then exactly 60 s before that ID, inside the dead
# node's last ~96 s of IDs, however long the machine took to get here. Then the clock runs on from
# there (its IDs need the next tick): they repeat the dead node's unless it ran a minute first.
# (The clock running "-N s" behind from the start left it to the load: on a slow machine the
# seconds between the phases carried it past the dead node's last ID, and 0 of 2,000 repeated.)
last_s=$(q $R "SELECT floor(extract(epoch FROM id_timestamp($dead_max)))::bigint")
date -d "@$((last_s - 180))" '+%Y-%m-%d %H:%M:%S' | as_pg tee "$CLOCK" >/dev/null
q $R "SELECT idgen.snowflake_start_after(clock_timestamp() + interval '120 s')" >/dev/null
echo "-$(($(date +%s) - (last_s - 180)))s" | as_pg tee "$CLOCK" >/dev/null
repeats=$(q $R "SELECT count(*) FROM snowflake_next_batch(2000) n JOIN old o ON o.id = n")
echo "    $repeats of 2,000 IDs repeat the dead node's"
check "its own clock_timestamp() + max_drift falls short: it repeats the dead node's IDs" test "$repeats" -gt 0
cluster_stop rp_new immediate
replacement "-${behind}s"
out=$(state "SELECT idgen.snowflake_start_after('$(trusted_after 120)') IS NOT NULL")
check "the trusted time, more than max_drift ahead of its clock, is taken" grep -qx t <<<"$out"
check "... with a WARNING saying IDs wait until its clock reaches it" \
  grep -q "WARNING:  01000: idgen.snowflake_start_after: .* more than idgen.max_drift (120000 ms): this node's IDs wait or are refused until its clock reaches" <<<"$out"
check "while its clock is behind, IDs are refused (55000)" grep -q "ERROR:  55000: the system clock is" <<<"$(state "SELECT snowflake_next()")"
echo "+0" | as_pg tee "$CLOCK" >/dev/null
check "its clock fixed: no ID is at or below the dead node's last" eq \
  "$(q $R "SELECT min(n) > $dead_max FROM snowflake_next_batch(20000) n")" t
check "a time more than max_drift and an hour ahead is still refused: 22023" \
  grep -q "ERROR:  22023: idgen.snowflake_start_after: .* is more than idgen.max_drift (120000 ms) and an hour ahead of the clock" \
  <<<"$(state "SELECT idgen.snowflake_start_after(clock_timestamp() + interval '2 hours')")"
finish
