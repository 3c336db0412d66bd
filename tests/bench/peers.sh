#!/usr/bin/env bash
# The peers the benchmark measures pg_idgen against, built from $IDGEN_VENDOR_DIR (unmodified
# upstream sources, PGXS) for the PostgreSQL of $PG_CONFIG and installed next to pg_idgen:
#   pgEdge snowflake 2.6 (snowflake.nextval(), needs snowflake.node set)
#   pg_uuidv7 1.6        (uuid_generate_v7())
# Built once per PostgreSQL: the build directory is kept under /var/tmp/pg_idgen_peers, and an
# installed peer whose library is in place is not built again. Sourced by bench.sh after lib.sh;
# sets PEERS to the names installed ("snowflake pg_uuidv7", or fewer) and prints why one is missing.
VENDOR=$IDGEN_VENDOR_DIR
PEERS=""
peer_build() { # peer_build NAME TARBALL DIR
  local name=$1 tarball=$2 dir=$3 libdir build
  libdir=$("$PG_CONFIG" --pkglibdir)
  if [ -f "$libdir/$name.so" ] && [ -f "$("$PG_CONFIG" --sharedir)/extension/$name.control" ]; then
    PEERS="$PEERS $name"
    return 0
  fi
  if [ ! -f "$VENDOR/$tarball" ]; then
    log "peer $name skipped: $VENDOR/$tarball not found (docs/install.md, "Optional third-party sources")"
    return 0
  fi
  build="/var/tmp/pg_idgen_peers/$("$PG_CONFIG" --version | awk '{print $2}')"
  mkdir -p "$build"
  rm -rf "${build:?}/$dir"
  tar -xzf "$VENDOR/$tarball" -C "$build"
  log "building peer $name for $("$PG_CONFIG" --version) (once; kept in $build)"
  # With the compiler PostgreSQL was built with, or else clang: the PostgreSQL 18 wheel's flags
  # include a warning option Debian 12's gcc 12 does not know.
  local cc
  for cc in "$("$PG_CONFIG" --cc)" clang; do
    make -C "$build/$dir" USE_PGXS=1 PG_CONFIG="$PG_CONFIG" clean >/dev/null 2>&1 || true
    make -C "$build/$dir" USE_PGXS=1 PG_CONFIG="$PG_CONFIG" CC="$cc" >"$build/$name.build.log" 2>&1 && break
  done
  if [ -f "$build/$dir/$name.so" ] &&
    $SUDO make -C "$build/$dir" USE_PGXS=1 PG_CONFIG="$PG_CONFIG" install >>"$build/$name.build.log" 2>&1; then
    PEERS="$PEERS $name"
  else
    log "peer $name skipped: its build failed, see $build/$name.build.log"
  fi
}
peer_build snowflake pgedge-snowflake-2.6.0.tar.gz pgedge-snowflake
peer_build pg_uuidv7 pg_uuidv7-1.6.tar.gz pg_uuidv7
PEERS=${PEERS# }
