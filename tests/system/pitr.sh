#!/usr/bin/env bash
# Point-in-time recovery (issue: segment IDs handed out again). A base backup and a WAL archive; a
# restore point; then ranges committed and IDs handed out (recorded outside the database, as
# clients hold them); recovery to the restore point. The recovered idgen.segments is behind those
# IDs, as PostgreSQL's own sequences would be; idgen.segment_advance(margin) moves every type past
# them, also when a caller had made the node cache ranges before the remedy, and Snowflake IDs are
# above them anyway (time moved on).
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
R=$(port 1)
ARCH="$WORK/pitr.archive"
OUT="$WORK/pitr.out"
as_pg rm -rf "$ARCH" && as_pg mkdir -p "$ARCH"
rm -rf "$OUT" && mkdir -p "$OUT"
cluster_init pitr $P "idgen.worker_id = 4" "wal_level = replica" "archive_mode = on" \
  "archive_command = 'cp %p $ARCH/%f'"
cluster_start pitr
trap 'cluster_stop pitr immediate; cluster_stop pitr_restored immediate' EXIT
q $P "CREATE EXTENSION pg_idgen; SELECT idgen.segment_create('inv', step => 1000);
      SELECT idgen.segment_create('small', step => 10)" >/dev/null
q $P "SELECT segment_next('inv'), segment_next('small') FROM generate_series(1, 1500)" >/dev/null

rdir=$(cluster_dir pitr_restored)
as_pg rm -rf "$rdir"
as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p $P -U postgres -D "$rdir" -X stream
q $P "SELECT pg_create_restore_point('before_ranges')" >/dev/null
# After the restore point: whole ranges for clients, segment and Snowflake IDs, all kept outside.
q $P "SELECT a.start_id, a.end_id FROM generate_series(1, 3), LATERAL idgen.segment_alloc('inv') a" >"$OUT/ranges"
q $P "SELECT 'inv', segment_next('inv') FROM generate_series(1, 2500)
      UNION ALL SELECT 'small', segment_next('small') FROM generate_series(1, 50)" >"$OUT/ids"
q $P "SELECT snowflake_next() FROM generate_series(1, 1000)" >"$OUT/snowflake"
q $P "SELECT pg_switch_wal()" >/dev/null
sleep 1
cluster_stop pitr immediate

for line in "port = $R" "restore_command = 'cp $ARCH/%f %p'" "recovery_target_name = 'before_ranges'" \
  "recovery_target_action = 'promote'" "archive_mode = off"; do
  cluster_conf pitr_restored "$line"
done
as_pg touch "$rdir/recovery.signal"
cluster_start pitr_restored
for _ in $(seq 1 60); do [ "$(q $R "SELECT pg_is_in_recovery()" 2>/dev/null)" = f ] && break; sleep 0.5; done
check "recovered to the restore point and promoted" eq "$(q $R "SELECT pg_is_in_recovery()")" f

inv_out=$(awk -F'|' '{print $2}' "$OUT/ranges" | sort -n | tail -1)
inv_ids=$(awk -F'|' '$1 == "inv" {print $2}' "$OUT/ids" | sort -n | tail -1)
[ "$inv_ids" -gt "$inv_out" ] && inv_out=$inv_ids
small_out=$(awk -F'|' '$1 == "small" {print $2}' "$OUT/ids" | sort -n | tail -1)
check "the recovered idgen.segments is behind IDs handed out after the restore point (the hazard)" eq \
  "$(q $R "SELECT max_id < $inv_out FROM idgen.segments WHERE biz_type = 'inv'")" t
# One caller before the remedy (the node caches a current and a next range of each type, both
# among the IDs handed out after the restore point): segment_advance must forget them.
q $R "SELECT segment_next('inv'), segment_next('small')" >/dev/null
check "before segment_advance, the node has ranges of both types cached" eq \
  "$(q $R "SELECT count(*) FROM idgen.segment_status WHERE cached AND ids_left > 0")" 2
q $R "SELECT * FROM idgen.segment_advance(1000000)" >"$OUT/advanced"
check "segment_advance forgot the ranges this node had cached" eq \
  "$(q $R "SELECT count(*) FROM idgen.segment_status WHERE ids_left > 0")" 0
check "segment_advance moved both types" eq "$(wc -l <"$OUT/advanced")" 2
check "after segment_advance, every new segment ID and range is above everything handed out" eq \
  "$(q $R "SELECT (SELECT min(x) FROM (SELECT segment_next('inv') x FROM generate_series(1, 5000)) a) > $inv_out
           AND (SELECT start_id FROM idgen.segment_alloc('inv')) >= $inv_out
           AND (SELECT min(x) FROM (SELECT segment_next('small') x FROM generate_series(1, 100)) b) > $small_out")" t
check "Snowflake IDs after the recovery are above those made after the restore point" eq \
  "$(q $R "SELECT snowflake_next() > $(sort -n "$OUT/snowflake" | tail -1)")" t
finish
