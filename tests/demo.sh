#!/usr/bin/env bash
# The run command: build, install, start a throwaway cluster with pg_idgen preloaded, show what
# it does in psql, and say how to connect and how to stop. Safe to run again (it starts over).
source "$(dirname "${BASH_SOURCE[0]}")/helpers/lib.sh"

PORT=${PG_IDGEN_PORT:-5499}
ensure_deps
install_extension
log "starting a throwaway cluster on port $PORT ($(cluster_dir demo))"
cluster_init demo "$PORT" "idgen.worker_id = 1"
cluster_start demo
# The demo has a database of its own, so that the README's quick start, pasted into the
# database postgres, starts from nothing as it says.
psql -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -X -q -c "CREATE DATABASE demo"
psql -h 127.0.0.1 -p "$PORT" -U postgres -d demo -X -v ON_ERROR_STOP=1 -e -f "$REPO/tests/demo.sql"
cat <<MSG

pg_idgen is running in a throwaway cluster.
  connect:  psql -h 127.0.0.1 -p $PORT -U postgres          (the README's quick start goes here)
            psql -h 127.0.0.1 -p $PORT -U postgres -d demo  (what the demo made)
  stop:     runuser -u postgres -- $PGBIN/pg_ctl -D $(cluster_dir demo) stop
  logs:     $(cluster_dir demo)/server.log
MSG
