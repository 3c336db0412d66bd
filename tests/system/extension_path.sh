#!/usr/bin/env bash
# pg_idgen installed outside PostgreSQL's own directories, found through extension_control_path
# and dynamic_library_path (PostgreSQL 18 and later; how images mounted into a server, as
# CloudNativePG's, bring extensions): the control file names the module without $libdir
# (module_pathname = 'pg_idgen'), so every function, and the preloaded library, is looked up in
# dynamic_library_path. A server whose paths name that directory before PostgreSQL's own ($system,
# $libdir, which also has pg_idgen) preloads the library from there, creates the extension, makes
# IDs and segments (through the allocator worker), updates from the previous version's files there,
# and restarts.
# (Control, run by hand: with dynamic_library_path = '$libdir:<the directory>' the check of the
# mapped library fails: the server loads PostgreSQL's own copy.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
[ "$PG" -ge 18 ] || skip_test "PostgreSQL $PG has no extension_control_path (18 and later)"
dir="$WORK/extension_path"
as_pg rm -rf "$dir"
as_pg mkdir -p "$dir/lib" "$dir/share/extension"
as_pg cp "$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" "$dir/lib/"
as_pg cp "$("$PG_CONFIG" --sharedir)/extension/pg_idgen.control" "$("$PG_CONFIG" --sharedir)/extension/pg_idgen--"*.sql "$dir/share/extension/"
# The previous released version's install script, to update from.
previous=$(ls "$REPO"/sql/released/pg_idgen--*.sql | sort -V | tail -1)
as_pg cp "$previous" "$dir/share/extension/"
prev_version=$(basename "$previous" .sql | sed 's/^pg_idgen--//')
cluster_init extpath $PORT "idgen.worker_id = 1" "extension_control_path = '$dir/share:\$system'" "dynamic_library_path = '$dir/lib:\$libdir'"
cluster_start extpath
trap 'cluster_stop extpath immediate' EXIT
pm=$(head -1 "$(cluster_dir extpath)/postmaster.pid")
check "the postmaster preloaded pg_idgen from $dir/lib" grep -q "$dir/lib/pg_idgen.so" "/proc/$pm/maps"
check "and not PostgreSQL's own copy" not_grep -q "$("$PG_CONFIG" --pkglibdir)/pg_idgen.so" "/proc/$pm/maps"
check "the extension is available from there, at the new version" eq \
  "$(q $PORT "SELECT default_version FROM pg_available_extensions WHERE name = 'pg_idgen'")" \
  "$(sed -n 's/^version = "\(.*\)"$/\1/p' "$REPO/Cargo.toml" | head -1)"
q $PORT "CREATE EXTENSION pg_idgen VERSION '$prev_version'"
q $PORT "CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int);
         INSERT INTO t (v) SELECT g FROM generate_series(1, 1000) g"
q $PORT "ALTER EXTENSION pg_idgen UPDATE"
check "updated from $prev_version with the scripts there" eq \
  "$(q $PORT "SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'")" "$(sed -n 's/^version = "\(.*\)"$/\1/p' "$REPO/Cargo.toml" | head -1)"
q $PORT "SELECT idgen.segment_create('order', step => 100)" >/dev/null
check "segment IDs through the allocator worker" eq \
  "$(q $PORT "SELECT count(DISTINCT s) FROM (SELECT segment_next('order') s FROM generate_series(1, 250)) x")" 250
before=$(q $PORT "SELECT max(id) FROM t")
as_pg "$PGBIN/pg_ctl" -D "$(cluster_dir extpath)" -m fast -w restart -l "$(cluster_dir extpath)/server.log" >/dev/null
check "after a restart, IDs go on above the earlier ones" eq "$(q $PORT "SELECT snowflake_next() > $before")" t
check "and segments above the earlier ones" eq "$(q $PORT "SELECT segment_next('order') > 250")" t
check "the server log has no error" not_grep -qE "ERROR|FATAL|PANIC" "$(cluster_dir extpath)/server.log"
finish
