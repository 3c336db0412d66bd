#!/usr/bin/env bash
# Removing pg_idgen from shared_preload_libraries (issue: the recovery error does not name
# pg_idgen). After a crash with IDs made since the last checkpoint, a server without the library
# cannot replay pg_idgen's WAL records: it stops with the exact message docs/install.md quotes. The
# way out it gives: preload again, start (recovery finishes), CHECKPOINT, clean stop, remove.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
cluster_init unload $PORT
cluster_start unload
trap 'cluster_stop unload immediate' EXIT
dir=$(cluster_dir unload)
q $PORT "CREATE EXTENSION pg_idgen; CREATE TABLE t AS SELECT snowflake_next() AS id FROM generate_series(1, 1000)"
# After the checkpoint, past the reservation window (idgen.reserve_window, 1 s): a mark record.
q $PORT "CHECKPOINT"
sleep 1.5
q $PORT "INSERT INTO t SELECT snowflake_next() FROM generate_series(1, 1000)"
kill_server unload
as_pg sed -i "s/^shared_preload_libraries = 'pg_idgen'$/shared_preload_libraries = ''/" "$dir/postgresql.conf"
as_pg truncate -s 0 "$dir/server.log"
started=0
cluster_start unload 2>/dev/null && started=1
check "without the library, recovery refuses to start" eq "$started" 0
msg=$(grep -o '[A-Z]*:  resource manager with ID [0-9]* not registered' "$dir/server.log" | head -1)
check "with the message docs/install.md quotes ($msg)" grep -qF "\`$msg\`" "$REPO/docs/install.md"
check "and PostgreSQL's hint, also quoted" grep -q 'Include the extension module that implements this resource manager in "\?shared_preload_libraries"\?' "$dir/server.log"

# The way out, as docs/install.md gives it.
as_pg sed -i "s/^shared_preload_libraries = ''$/shared_preload_libraries = 'pg_idgen'/" "$dir/postgresql.conf"
cluster_start unload
check "preloaded again, recovery finishes and every row is there" eq "$(q $PORT "SELECT count(*) FROM t")" 2000
q $PORT "CHECKPOINT"
cluster_stop unload
as_pg sed -i "s/^shared_preload_libraries = 'pg_idgen'$/shared_preload_libraries = ''/" "$dir/postgresql.conf"
cluster_start unload
check "after CHECKPOINT and a clean stop, the server starts without the library" eq "$(q $PORT "SELECT count(*) FROM t")" 2000
finish
