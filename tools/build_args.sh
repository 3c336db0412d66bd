# Sourced by tools/package.sh and tools/image.sh after they set their defaults (PG_CONFIG, out):
# their arguments (--pg-config PATH, --out DIR), pgrx's configuration, and what both need to know:
# `major`, the PostgreSQL major of PG_CONFIG, and `version`, pg_idgen's (Cargo.toml).
while (($#)); do
  case $1 in
    --pg-config) PG_CONFIG=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--pg-config PATH] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$PG_CONFIG" ] || { echo "$0: --pg-config PATH is needed (make image PG=N gives it)" >&2; exit 2; }
export PGRX_HOME=${PGRX_HOME:-$PWD/pgrx-config}
major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
use_target_dir_for "$major"  # (tools/rust_toolchain.sh: target/pgMAJOR)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
