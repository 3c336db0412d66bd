#!/usr/bin/env bash
# Builds pg_idgen (release) and installs it into the PostgreSQL that pg_config names, without
# touching the library a running server has mapped: each file is written under a temporary name
# and renamed into place, so running servers keep the old file (copying over it, as `cargo pgrx
# install` does, changes the code under a server that preloads it, which then crashes). Restart
# the servers afterwards to load the new library.
#
#   tools/install.sh [--debug] [--pg-config PATH]     build, then install
#   tools/install.sh [--pg-config PATH] --out DIR     build only, into DIR (`make`, for PGXN's client)
#   tools/install.sh --from DIR                       install a tree made by `cargo pgrx package`
#                                                     (`make install` installs the one `make` built)
# Building installs cargo-pgrx 0.19.3 (with cargo) when it is missing. DESTDIR, when set, is put in
# front of every path (a staged install, as PGXS's `make install DESTDIR=...`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tools/rust_toolchain.sh
use_new_enough_rust
export PGRX_HOME=${PGRX_HOME:-$PWD/pgrx-config}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
profile=()
from=""
build_only=""
while (($#)); do
  case $1 in
    --debug) profile=(--debug) ;;
    --pg-config) PG_CONFIG=$2; shift ;;
    --from) from=$2; shift ;;
    --out) build_only=$2; shift ;;
    *) echo "usage: $0 [--debug] [--pg-config PATH] [--out DIR] | --from DIR" >&2; exit 2 ;;
  esac
  shift
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

if [ -z "$from" ]; then
  if [ -n "$build_only" ]; then
    from=$build_only
    rm -rf "$from" && mkdir -p "$from"
  else
    from=$(mktemp -d)
    trap 'rm -rf "$from"' EXIT
  fi
  if ! cargo pgrx --version 2>/dev/null | grep -q ' 0\.19\.3$'; then
    echo "$0: installing cargo-pgrx 0.19.3 (a few minutes, once)" >&2
    cargo install cargo-pgrx --version 0.19.3 --locked >&2
  fi
  major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
  case $major in
    15 | 16 | 17 | 18 | 19) ;;
    *) echo "$0: PostgreSQL ${major:-?} is not supported (15 to 19 are)" >&2; exit 2 ;;
  esac
  use_target_dir_for "$major"
  cargo pgrx package "${profile[@]}" --pg-config "$PG_CONFIG" --no-default-features --features "pg$major" \
    --out-dir "$from" >&2
fi
[ -n "$(find "$from" -name '*.so' -print -quit)" ] || { echo "$0: no library under $from" >&2; exit 1; }
if [ -n "$build_only" ]; then
  echo "built pg_idgen for $("$PG_CONFIG" --version) into $build_only; install it with make install (tools/install.sh --from $build_only)" >&2
  exit 0
fi
(cd "$from" && find . -type f) | while read -r f; do
  dest=${DESTDIR:-}/${f#./}
  mode=644
  case $dest in *.so) mode=755 ;; esac
  # The same file already in place stays (a second install of one build replaces nothing).
  if cmp -s "$from/$f" "$dest"; then continue; fi
  $SUDO mkdir -p "$(dirname "$dest")"
  $SUDO install -m "$mode" "$from/$f" "$dest.new-$$"
  $SUDO mv -f "$dest.new-$$" "$dest"
done
echo "installed pg_idgen into ${DESTDIR:-}$("$PG_CONFIG" --pkglibdir) and ${DESTDIR:-}$("$PG_CONFIG" --sharedir)/extension; restart servers that preload it" >&2
