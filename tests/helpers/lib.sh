#!/usr/bin/env bash
# Shared helpers for the run, test and benchmark scripts: dependencies, building, and throwaway
# PostgreSQL 15 clusters run as the postgres user (initdb refuses root).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The builds a run may start (PostgreSQL 17, Citus, the benchmark's peers) each run make of their
# own. Started from `make test`, they would inherit MAKELEVEL and MAKEFLAGS and take themselves for
# sub-makes: PostgreSQL's Makefile.global then skips generating its headers (utils/errcodes.h) and
# the build stops. Nothing of the outer make passes down.
unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES
# Third-party sources that some tests and the benchmark build: Citus (tests/system/citus.sh, the
# benchmark's Citus rows), pgEdge snowflake and pg_uuidv7 (the benchmark's peer rows). Optional:
# where they are missing those parts are skipped and counted as skipped (CONTRIBUTING.md).
IDGEN_VENDOR_DIR=${IDGEN_VENDOR_DIR:-$REPO/../shared/vendor}
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
# A Rust new enough (tools/rust_toolchain.sh), checked before anything long starts.
source "$REPO/tools/rust_toolchain.sh"
use_new_enough_rust
# The PostgreSQL to build for and test against: PG=15 (default) to 19 (tests/helpers/pg_versions.sh).
source "$REPO/tests/helpers/pg_versions.sh"
# pgrx_home_for MAJOR PG_CONFIG: prints the PGRX_HOME to build for that PostgreSQL with; cargo-pgrx
# finds each PostgreSQL through its config.toml, so each major gets one of its own. Outside the
# clone, 15's too (the clone's pgrx-config/ says the same, for tools/install.sh run by hand): pgrx's
# bindings are generated again, and pgrx compiled again, whenever PGRX_HOME names another
# directory, so a home inside each fresh clone made every run compile them for 15 three times
# (clippy, release, debug) despite the shared target directory (use_shared_target_root).
pgrx_home_for() {
  local home config
  versions_dir_ready
  home="$PG_VERSIONS_DIR/pgrx-home-$1"
  config=$(printf '[configs]\npg%s = "%s"' "$1" "$2")
  # Written again when it names another pg_config (a PostgreSQL fetched again elsewhere).
  if [ "$(cat "$home/config.toml" 2>/dev/null)" != "$config" ]; then
    $SUDO mkdir -p "$home"
    echo "$config" | $SUDO tee "$home/config.toml" >/dev/null
  fi
  echo "$home"
}
PG_CONFIG=$(pg_config_for "$PG")
# Each major's clusters and files under a directory of its own, so that the same test can run for
# two majors at once (tests/all_versions.sh).
WORK_ROOT=${PG_IDGEN_WORK:-/var/tmp/pg_idgen}
WORK=$WORK_ROOT/$PG
PGBIN=$("$PG_CONFIG" --bindir)
PG_FEATURES="pg$PG"
PGRX_HOME=$(pgrx_home_for "$PG" "$PG_CONFIG")
export PGRX_HOME
# Builds for this PostgreSQL in target/pg$PG (tools/rust_toolchain.sh): one directory per major.
use_target_dir_for "$PG"

log() { printf '==> %s\n' "$*" >&2; }

# Installs what is missing: Debian packages, then cargo-pgrx 0.19.3 (with the Rust chosen above).
# Safe to run again.
ensure_deps() {
  apt_install_missing postgresql-15 postgresql-server-dev-15 libpq-dev libclang-dev clang sudo faketime gdb python3-psycopg2 python3-yaml
  if ! cargo pgrx --version 2>/dev/null | grep -q ' 0\.19\.3'; then
    log "installing cargo-pgrx 0.19.3 (a few minutes, once)"
    cargo install cargo-pgrx --version 0.19.3 --locked
  fi
  id postgres >/dev/null
}

# Builds (release) and installs the extension into the PostgreSQL under test.
install_extension() {
  log "building and installing pg_idgen (release)"
  PG_CONFIG=$PG_CONFIG bash "$REPO/tools/install.sh" >&2
}

# install_for MAJOR: builds and installs this tree's pg_idgen into another PostgreSQL (a test that
# needs two majors); prints its bin directory. The build is cargo's, so the layer of that version
# later finds it done.
install_for() {
  local config home
  config=$(pg_config_for "$1") || return
  home=$(pgrx_home_for "$1" "$config")
  log "building and installing pg_idgen for PostgreSQL $1 (release)"
  PGRX_HOME=$home PG_CONFIG=$config bash "$REPO/tools/install.sh" >&2 || return
  "$config" --bindir
}

as_pg() { runuser -u postgres -- "$@"; }

# run_golden PORT [OUTDIR]: the pg_regress golden files (tests/pg_regress) against the server on
# PORT, with the pg_regress of $PG_CONFIG's PGXS; returns its status. Results and diffs go to
# OUTDIR, by default tests/pg_regress (the build part's run, tests/all.sh). A system test gives a
# directory of its own: it runs beside other majors' build parts, and two runs writing one results/
# directory read each other's files half written.
run_golden() {
  local outdir=${2:-$REPO/tests/pg_regress}
  mkdir -p "$outdir"
  (cd "$REPO/tests/pg_regress" && rm -rf "$outdir/results" &&
    "$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress" \
      --bindir="$PGBIN" --host=127.0.0.1 --port="$1" --user=postgres \
      --dbname=pg_idgen_regress --inputdir=. --outputdir="$outdir" \
      $(cd sql && ls *.sql | sed 's/\.sql$//'))
}

cluster_dir() { echo "$WORK/$1"; }

# port K: the K-th port (0 to 9) of the script that runs ($0: a system test, the benchmark, or
# tests/all.sh for its golden files' cluster). Each script has ten of its own for each major: 27000
# + 1000 x (major - 15) + 10 x its place among the scripts (all, bench, then tests/system/*.sh by
# name). So any two scripts, of one major or of two, can run at once, and a new test needs no
# number picked by hand. All of them lie below Linux's ephemeral range (32768-60999), where the
# local end of any client connection (or its TIME_WAIT) could hold a port a cluster is about to
# bind, and the start would fail with "Address already in use".
port() {
  local k=$1 me i=0 name
  me=$(basename "$0" .sh)
  case $k in [0-9]) ;; *) echo "port: K is 0 to 9, not '$k'" >&2; return 2 ;; esac
  for name in all bench $(cd "$REPO/tests/system" && ls -- *.sh | sed 's/\.sh$//'); do
    if [ "$name" = "$me" ]; then
      ((10 * i < 1000)) || { echo "port: more than 100 scripts: widen the ranges of port()" >&2; return 1; }
      echo $((27000 + 1000 * (PG - 15) + 10 * i + k))
      return
    fi
    i=$((i + 1))
  done
  echo "port: $0 is none of tests/all.sh, tests/bench/bench.sh, tests/system/*.sh" >&2
  return 1
}

# cluster_init NAME PORT [postgresql.conf lines...]: a fresh cluster with pg_idgen preloaded, on a
# port from port().
cluster_init() {
  local name=$1 port=$2 dir
  shift 2
  dir=$(cluster_dir "$name")
  cluster_stop "$name" immediate 2>/dev/null || true
  $SUDO mkdir -p "$WORK"
  $SUDO chown postgres "$WORK"
  as_pg rm -rf "$dir"
  # Which script made it: tests/all.sh removes the clusters of a system test that passed (a run
  # of every major left some 40 GB of them), and keeps a failed one's to look into.
  echo "$dir" | $SUDO tee -a "$WORK/clusters_of_$(basename "$0" .sh)" >/dev/null
  # shellcheck disable=SC2086 # INITDB_OPTS: extra words for initdb (e.g. --no-data-checksums)
  as_pg "$PGBIN/initdb" -D "$dir" -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8 ${INITDB_OPTS:-} >/dev/null
  {
    echo "port = $port"
    echo "listen_addresses = '127.0.0.1'"
    echo "unix_socket_directories = '$WORK'"
    echo "shared_preload_libraries = 'pg_idgen'"
    echo "max_connections = 100"
    echo "fsync = on"
    local line
    for line in "$@"; do echo "$line"; done
  } | as_pg tee -a "$dir/postgresql.conf" >/dev/null
}

# cluster_conf NAME "line": appends a setting.
cluster_conf() { echo "$2" | as_pg tee -a "$(cluster_dir "$1")/postgresql.conf" >/dev/null; }

# cluster_start NAME [VAR=value ...]: starts it, with extra environment (e.g. libfaketime).
cluster_start() {
  local name=$1 dir
  shift
  dir=$(cluster_dir "$name")
  as_pg env "$@" "$PGBIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 start >/dev/null
}

# cluster_start_faketime NAME FILE: starts it with a clock moved by the offset written in FILE.
cluster_start_faketime() {
  cluster_start "$1" LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$2" FAKETIME_NO_CACHE=1
}

cluster_stop() {
  local dir
  dir=$(cluster_dir "$1")
  [ -f "$dir/postmaster.pid" ] || return 0
  as_pg "$PGBIN/pg_ctl" -D "$dir" -m "${2:-fast}" -w -t 60 stop >/dev/null
}

# kill_server NAME: SIGKILL to the postmaster and all its children at once (no exit callback, no
# shutdown checkpoint: what a power cut leaves), then waits until they are gone.
kill_server() {
  local dir pm pids i
  dir=$(cluster_dir "$1")
  pm=$(head -1 "$dir/postmaster.pid")
  pids="$pm $(pgrep -P "$pm" | tr '\n' ' ')"
  kill -9 $pids 2>/dev/null || true
  for i in $(seq 1 100); do
    kill -0 $pids 2>/dev/null || break
    sleep 0.1
  done
  as_pg rm -f "$dir/postmaster.pid"
}

# standby_init NAME PRIMARY_PORT PORT [APPLICATION_NAME]: a physical standby of the cluster on
# PRIMARY_PORT (pg_basebackup -R -X stream), not started. Its primary_conninfo is a plain one,
# written after the line pg_basebackup -R wrote: that one carries every option of the libpq
# pg_basebackup ran with, and the walreceivers of the PostgreSQL 16 and 17 builds used here refuse
# one of them (sslcertmode), so the standby would never stream.
standby_init() {
  local name=$1 primary=$2 port=$3 app=${4:-} dir
  dir=$(cluster_dir "$name")
  cluster_stop "$name" immediate 2>/dev/null || true
  as_pg rm -rf "$dir"
  as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$primary" -U postgres -D "$dir" -R -X stream
  cluster_conf "$name" "port = $port"
  echo "primary_conninfo = 'host=127.0.0.1 port=$primary user=postgres${app:+ application_name=$app}'" |
    as_pg tee -a "$dir/postgresql.auto.conf" >/dev/null
}

cluster_port() { sed -n "s/^port = //p" "$(cluster_dir "$1")/postgresql.conf" | tail -1; }

# q PORT SQL: one value, no decoration; errors fail the caller.
q() { psql -h 127.0.0.1 -p "$1" -U postgres -d postgres -X -q -A -t -v ON_ERROR_STOP=1 -c "$2"; }

# qdb PORT DB SQL
qdb() { psql -h 127.0.0.1 -p "$1" -U postgres -d "$2" -X -q -A -t -v ON_ERROR_STOP=1 -c "$3"; }

# wait_until PORT SQL WHAT LIMIT: polls SQL (a boolean) every 0.2 s until true; false after LIMIT s,
# saying what it waited for.
wait_until() {
  local i
  for i in $(seq 1 $(($4 * 5))); do
    [ "$(q "$1" "$2" 2>/dev/null)" = t ] && return 0
    sleep 0.2
  done
  echo "    waited $4 s for $3" >&2
  return 1
}

wait_ready() {
  local port=$1 i
  for i in $(seq 1 120); do
    q "$port" "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "server on port $port did not come up" >&2
  return 1
}
