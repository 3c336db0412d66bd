#!/usr/bin/env bash
# The README's node-postgres recipe (examples/node-postgres.js), run with the real client from the
# npm registry (pg 8, installed once into /var/tmp/pg_idgen_clients/node): a node with the default
# layout, and one with js_safe.
#   - rows: bigint arrives as a string, every one of 1,000 new IDs exact;
#   - JSON made in SQL as numbers: JSON.parse changes IDs above 2^53 (and collapses some into one),
#     which is the hazard the README warns of; as text (id::text) and as id_to_text they stay exact;
#   - with js_safe, JSON numbers are exact too.
# Skipped, saying why, when Node.js is missing or the npm registry cannot be reached.
source "$(dirname "${BASH_SOURCE[0]}")/../assert.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../clients.sh"
PORT=26449
JS_PORT=26450
NODE_DIR=/var/tmp/pg_idgen_clients/node
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install_missing nodejs npm >"$WORK/apt_node.log" 2>&1 ||
    skip_test "apt-get could not install nodejs and npm ($(tail -1 "$WORK/apt_node.log"))"
fi
if [ ! -f "$NODE_DIR/node_modules/pg/package.json" ]; then
  mkdir -p "$NODE_DIR"
  if ! npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error pg@8 >"$WORK/npm.log" 2>&1; then
    skip_test "npm could not install pg from the registry ($(tail -1 "$WORK/npm.log"))"
  fi
fi
echo "  node $(node --version), pg $(sed -n 's/^ *"version": "\(.*\)",/\1/p' "$NODE_DIR/node_modules/pg/package.json")"
run_js() { NODE_PATH="$NODE_DIR/node_modules" node "$REPO/examples/node-postgres.js" "postgres://postgres@127.0.0.1:$1/postgres" ${2:-}; }

cluster_init clients_js $PORT
cluster_init clients_js_safe $JS_PORT "idgen.layout = 'js_safe'"
cluster_start clients_js
cluster_start clients_js_safe
trap 'cluster_stop clients_js immediate; cluster_stop clients_js_safe immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen"
q $JS_PORT "CREATE EXTENSION pg_idgen"
legacy_table $PORT

out=$(run_js $PORT legacy)
echo "    default layout: $out"
check_legacy_row "$out"
check "rows: bigint arrives as a string, all 1,000 IDs exact" eq \
  "$(field "$out" type_in_rows)|$(field "$out" rows_exact)" "string|1000"
check "every ID of the default layout is above 2^53" eq "$(field "$out" above_2_pow_53)" 1000
check "JSON numbers: JSON.parse changed most IDs ($(field "$out" json_numbers_exact) of 1000 exact) and collapsed some ($(field "$out" json_numbers_distinct) distinct)" \
  test "$(field "$out" json_numbers_exact)" -lt 500 -a "$(field "$out" json_numbers_distinct)" -lt 1000
check "JSON text (id::text) and id_to_text: all 1,000 exact, id_to_text in order" eq \
  "$(field "$out" json_text_exact)|$(field "$out" id_to_text_exact)|$(field "$out" id_to_text_sorted)" "1000|1000|True"
out=$(run_js $JS_PORT)
echo "    js_safe layout: $out"
check "js_safe: JSON numbers are exact, all 1,000 distinct, none above 2^53" eq \
  "$(field "$out" json_numbers_exact)|$(field "$out" json_numbers_distinct)|$(field "$out" above_2_pow_53)" "1000|1000|0"
finish
