# Citus for the tests and the benchmark, built from $IDGEN_VENDOR_DIR (upstream Citus 13.2.2, with
# the one-hunk patch for PostgreSQL 15.20's headers) for the PostgreSQL of $PG_CONFIG and installed
# next to pg_idgen. Built once: the build tree is kept under /var/tmp/pg_idgen_citus/<version>, and
# an installed Citus of that version is not built again. Sourced after lib.sh.
#
# citus_ensure: 0 when Citus is installed; otherwise prints why not (no Citus source in
# IDGEN_VENDOR_DIR, a PostgreSQL Citus 13.2 does not support, a failed build) and returns 1.
CITUS_VERSION=13.2.2
CITUS_TARBALL="$IDGEN_VENDOR_DIR/citus-$CITUS_VERSION.tar.gz"
CITUS_PATCH="$IDGEN_VENDOR_DIR/citus-$CITUS_VERSION-pg15.20.patch"

# One build at a time: two system tests that need Citus may run side by side (tests/all.sh).
citus_ensure() { with_lock /var/tmp/pg_idgen_citus.lock citus_ensure_locked; }

citus_ensure_locked() {
  local libdir sharedir build major
  libdir=$("$PG_CONFIG" --pkglibdir)
  sharedir=$("$PG_CONFIG" --sharedir)
  major=$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
  if [ -f "$libdir/citus.so" ] && grep -q "default_version = '13.2" "$sharedir/extension/citus.control" 2>/dev/null; then
    return 0
  fi
  if [ "$major" -gt 17 ]; then
    echo "  skipped: Citus $CITUS_VERSION supports PostgreSQL 15 to 17, not $major"
    return 1
  fi
  if [ ! -f "$CITUS_TARBALL" ]; then
    echo "  skipped: no citus-$CITUS_VERSION.tar.gz in IDGEN_VENDOR_DIR ($IDGEN_VENDOR_DIR; CONTRIBUTING.md)"
    return 1
  fi
  apt_install_missing libzstd-dev liblz4-dev libkrb5-dev
  build="/var/tmp/pg_idgen_citus/$("$PG_CONFIG" --version | awk '{print $2}')"
  $SUDO mkdir -p "$build"
  $SUDO rm -rf "${build:?}/citus-$CITUS_VERSION"
  tar -xzf "$CITUS_TARBALL" -C "$build"
  log "building Citus $CITUS_VERSION for $("$PG_CONFIG" --version) (about 3 minutes, once; kept in $build)"
  local started=$SECONDS
  if (cd "$build/citus-$CITUS_VERSION" &&
    { [ "$major" != 15 ] || patch -p1 <"$CITUS_PATCH"; } &&
    ./configure --without-libcurl PG_CONFIG="$PG_CONFIG" &&
    make -j2 &&
    $SUDO make install) >"$build/build.log" 2>&1; then
    log "Citus built and installed in $((SECONDS - started)) s"
    return 0
  fi
  echo "  skipped: the Citus build failed; see $build/build.log ($(tail -1 "$build/build.log"))"
  return 1
}
