#!/usr/bin/env bash
# Without shared_preload_libraries every entry point fails with 55000 and the server stays up;
# a layout or worker id that cannot make good IDs stops the server at start, naming the setting.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
cluster_init boot $PORT
trap 'cluster_stop boot immediate' EXIT
dir=$(cluster_dir boot)
as_pg sed -i "s/^shared_preload_libraries = 'pg_idgen'/shared_preload_libraries = ''/" "$dir/postgresql.conf"
cluster_start boot
out=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -v VERBOSITY=verbose -c "CREATE EXTENSION pg_idgen" 2>&1 || true)
check "CREATE EXTENSION without preload fails with 55000" grep -q "55000" <<<"$out"
check "the hint names the exact postgresql.conf line" grep -q "shared_preload_libraries = 'pg_idgen'" <<<"$out"
out=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -v VERBOSITY=verbose -c "LOAD 'pg_idgen'" 2>&1 || true)
check "LOAD without preload fails with 55000" grep -q "55000" <<<"$out"
check "the server is still up" eq "$(q $PORT "SELECT 1")" 1
check "no extension was created" eq "$(q $PORT "SELECT count(*) FROM pg_extension WHERE extname = 'pg_idgen'")" 0
cluster_stop boot

refuses() { # refuses "setting line" "expected log text"
  cluster_init boot $PORT "$1"
  ! cluster_start boot 2>/dev/null && grep -q "$2" "$(cluster_dir boot)/server.log"
}
check "a layout over 63 bits stops the server, naming idgen.layout" \
  refuses "idgen.layout = 'twitter sequence=20'" 'invalid value for parameter "idgen.layout"'
check "an unknown preset stops the server" refuses "idgen.layout = 'nosuch'" 'known layouts'
check "a worn-out layout stops the server with what would fit" refuses "idgen.layout = 'uid_generator'" 'needs time=31'
check "... and its hint asks for more time bits or a later epoch" grep -q 'HINT:  Choose a layout with more time bits' "$dir/server.log"
check "westid32 (wraps every 35 min) cannot generate" refuses "idgen.layout = 'westid32'" 'repeats its time field'
check "... and its hint says it is for id_decode only" grep -q 'HINT:  This layout is for id_decode only' "$dir/server.log"
check "an epoch in the future stops the server" refuses "idgen.layout = 'twitter epoch=2099-01-01'" 'is in the future'
check "... and its hint asks for an epoch in the past" grep -q 'HINT:  Choose an epoch in the past' "$dir/server.log"
check "a worker id beyond the layout stops the server" refuses "idgen.worker_id = 1024" 'invalid value for parameter "idgen.worker_id"'
check "rollback_flag on a layout without the bit stops the server" refuses "idgen.clock_policy = rollback_flag" 'needs a layout with a rollback bit'
cluster_init boot $PORT "idgen.layout = 'raindrop'" "idgen.clock_policy = rollback_flag" "idgen.worker_id = 200"
cluster_start boot
check "raindrop with rollback_flag starts and generates" test "$(q $PORT "CREATE EXTENSION pg_idgen; SELECT worker_id FROM id_decode(snowflake_next())")" = 200
finish
