#!/usr/bin/env bash
# The Rust recipe (examples/rust/, docs/adopting.md): sqlx 0.8 and tokio-postgres 0.7 from
# crates.io, built with the example's Cargo.lock. For each, one row and a batch of 100 inserted
# without a key: the i64 keys from RETURNING id equal the table's, distinct, all Snowflake IDs
# above 2^53 (so a JavaScript number could not hold them, and Rust's i64 does).
# Skipped, saying why, when the crates cannot be fetched.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/clients.sh"
PORT=$(port 0)
TARGET="$WORK/rust-example-target"
cd "$REPO"
if ! CARGO_TARGET_DIR="$TARGET" cargo build --locked -q --manifest-path examples/rust/Cargo.toml >"$WORK/cargo_rust_example.log" 2>&1; then
  if grep -q "failed to download\|failed to get\|Unable to update\|Couldn't resolve" "$WORK/cargo_rust_example.log"; then
    skip_test "cargo could not fetch sqlx and tokio-postgres from crates.io ($(grep -m1 'error' "$WORK/cargo_rust_example.log"))"
  fi
  tail -20 "$WORK/cargo_rust_example.log"
  echo "  FAIL: examples/rust does not build"
  exit 1
fi
crate() { sed -n "/^name = \"$1\"$/{n;s/^version = \"\\(.*\\)\"/\\1/p}" examples/rust/Cargo.lock; }
echo "  sqlx $(crate sqlx), tokio-postgres $(crate tokio-postgres), $(rustc --version)"
cluster_init clients_rust $PORT "idgen.worker_id = 3"
cluster_start clients_rust
trap 'cluster_stop clients_rust immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen"
out=$("$TARGET/debug/pg_idgen_rust_example" "postgres://postgres@127.0.0.1:$PORT/postgres")
echo "$out" | sed 's/^/    /'
for c in tokio-postgres sqlx; do
  l=$(grep -F "\"client\":\"$c\"" <<<"$out")
  check "$c: 101 keys made by the database come back as i64, exactly, distinct, above 2^53" eq \
    "$(field "$l" rows)|$(field "$l" returned)|$(field "$l" exact)|$(field "$l" distinct)|$(field "$l" above_2_pow_53)" \
    "101|101|True|101|101"
done
finish
