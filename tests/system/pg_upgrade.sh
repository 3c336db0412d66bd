#!/usr/bin/env bash
# pg_upgrade never leads to a repeated ID (README guarantee 3). A node that ran ahead of its clock
# (a batch past the layout's capacity: IDs about 10 s ahead) is upgraded with pg_upgrade --link
# into a new cluster. The new data directory has no pg_idgen.mark, and its clocks know nothing of
# the old IDs: Snowflake and message IDs are refused (55000, with the command to run) until
# idgen.snowflake_start_after() moves them past the old IDs; then every new ID is above every
# old one.
# (Control, run by hand with the check in origin.rs disabled: the new cluster hands out IDs below
# the old cluster's last one at once, and 6 checks fail.)
source "$(dirname "${BASH_SOURCE[0]}")/../assert.sh"
OLD=26437
NEW=26438
trap 'cluster_stop pu_old immediate; cluster_stop pu_new immediate' EXIT
cluster_init pu_old $OLD "idgen.layout = 'js_safe'"
cluster_start pu_old
q $OLD "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int);
        CREATE TABLE m (m text)"
q $OLD "INSERT INTO t (v) SELECT g FROM generate_series(1, 1000) g"
# 2.5 million js_safe IDs are 10 s of ticks: the last ones are about 10 s ahead of the clock.
q $OLD "INSERT INTO t SELECT max(id), -1 FROM snowflake_next_batch(2500000) id"
q $OLD "INSERT INTO m SELECT msgid_next(1, 'x') FROM generate_series(1, 1000)"
old_max=$(q $OLD "SELECT max(id) FROM t")
ahead=$(q $OLD "SELECT round(extract(epoch FROM id_timestamp($old_max) - clock_timestamp()))")
echo "    the old cluster's last ID is ${ahead} s ahead of its clock"
cluster_stop pu_old fast

cluster_init pu_new $NEW "idgen.layout = 'js_safe'"
udir="$WORK/pu_upgrade"
as_pg rm -rf "$udir" && as_pg mkdir -p "$udir"
if ! (cd "$udir" && as_pg "$PGBIN/pg_upgrade" -b "$PGBIN" -B "$PGBIN" -d "$(cluster_dir pu_old)" \
  -D "$(cluster_dir pu_new)" -p $OLD -P $NEW --link >"$udir/out.txt" 2>&1); then
  tail -20 "$udir/out.txt"
fi
check "pg_upgrade --link succeeded" grep -q "Upgrade Complete" "$udir/out.txt"
cluster_start pu_new
check "the new data directory has no pg_idgen.mark" test ! -e "$(cluster_dir pu_new)/pg_idgen.mark"
state() { psql -h 127.0.0.1 -p $NEW -U postgres -X -q -A -t -c "\set VERBOSITY verbose" -c "$1" 2>&1 || true; }
err=$(state "INSERT INTO t (v) VALUES (0)")
check "Snowflake IDs are refused: 55000" grep -q "ERROR:  55000" <<<"$err"
check "... saying the IDs were made on another system" grep -q "made on another database system" <<<"$err"
check "... with the command to run in the hint" grep -q "idgen.snowflake_start_after" <<<"$err"
check "message IDs are refused too" grep -q "ERROR:  55000" <<<"$(state "SELECT msgid_next(1, 'x')")"
check "decoding works meanwhile" eq "$(q $NEW "SELECT count(*) FROM t, id_decode(id)")" 1001

q $NEW "SELECT idgen.snowflake_start_after(clock_timestamp() + current_setting('idgen.max_drift')::interval)" >/dev/null
check "after the hinted snowflake_start_after, only this system is recorded" eq \
  "$(q $NEW "SELECT count(*), bool_and(system_identifier = idgen.node_system_identifier()) FROM idgen.node_origins")" "1|t"
q $NEW "INSERT INTO t (v) SELECT 0 FROM generate_series(1, 100000)"
q $NEW "INSERT INTO m SELECT msgid_next(1, 'x') FROM generate_series(1, 1000)"
check "every new Snowflake ID is above every old one" eq \
  "$(q $NEW "SELECT min(id) > $old_max FROM t WHERE v = 0")" t
check "no message ID repeats" eq \
  "$(q $NEW "SELECT count(*) = count(DISTINCT m) FROM m")" t
as_pg "$PGBIN/pg_ctl" -D "$(cluster_dir pu_new)" -m fast -w restart -l "$(cluster_dir pu_new)/server.log" >/dev/null
check "after a restart the database is still accepted" eq "$(state "SELECT snowflake_next() > $old_max")" t
finish
