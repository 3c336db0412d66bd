#!/usr/bin/env bash
# A dead node replaced by a server restored from an older base backup (the same worker id: a
# Citus group pointed at it with citus_update_node, or a setting-mode node rebuilt from backup)
# has the same system identifier and the backup's copy of the mark: nothing tells it of the IDs
# the dead node made after the backup, and it would repeat those ahead of its clock. docs/citus.md's
# procedure ("Removing and replacing a node"): before the replacement takes writes,
# snowflake_start_after(clock_timestamp() + the dead node's idgen.max_drift), or its last ID's
# time. The dead node here ran about 98 s ahead of its clock (js_safe_s, 400,000 IDs).
# 1. Without the procedure the replacement repeats the dead node's IDs (the hazard is real: this
#    check fails if the scenario stops reproducing it).
# 2. With it, none of 20,000 IDs is at or below the dead node's last one.
source "$(dirname "${BASH_SOURCE[0]}")/../assert.sh"
P=26476
R=26477
trap 'cluster_stop rp_dead immediate; cluster_stop rp_new immediate' EXIT
cluster_init rp_dead $P "idgen.layout = 'js_safe_s'" "idgen.worker_id = 2" "idgen.max_drift = '300s'"
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
kill_server rp_dead

# replacement: a server from the backup, on its own port, with the dead node's worker id.
replacement() {
  as_pg rm -rf "$(cluster_dir rp_new)"
  as_pg cp -a "$backup" "$(cluster_dir rp_new)"
  cluster_conf rp_new "port = $R"
  cluster_start rp_new
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

phase "2. with it"
replacement
q $R "SELECT idgen.snowflake_start_after(clock_timestamp() + interval '300 s')" >/dev/null
check "after snowflake_start_after(now + the dead node's max_drift), no ID is at or below its last" eq \
  "$(q $R "SELECT min(n) > $dead_max FROM snowflake_next_batch(20000) n")" t
finish
