#!/usr/bin/env bash
# docs/adopting.md's node-postgres recipe (examples/node-postgres.js), run with the real client from the
# npm registry (pg 8, installed once into /var/tmp/pg_idgen_clients/node): a node with the default
# layout, and one with js_safe.
#   - rows: bigint arrives as a string, every one of 1,000 new IDs exact;
#   - JSON made in SQL as numbers: JSON.parse changes IDs above 2^53 (and collapses some into one),
#     which is the hazard docs/adopting.md warns of; as text (id::text) and as id_to_text they stay exact;
#   - with js_safe, JSON numbers are exact too.
# The ORMs (examples/orm.js, docs/adopting.md): Drizzle ORM 0.45, Knex 3, TypeORM 1 and
# Sequelize 6 from npm, each inserting one row and a batch of 100 with the key made by the
# database (`DEFAULT snowflake_next()`): the keys each hands back equal the table's, exactly,
# also through JSON; and the control, Drizzle's bigint in mode 'number', which rounds them (the
# comparison fails there, as it must). Prisma is not tried: its `prisma generate` downloads a
# schema engine from binaries.prisma.sh, which no registry carries.
# Adopted sequences (examples/adopted_orm.js): Knex's bigIncrements and Sequelize's autoIncrement
# BIGINT keys, their sequences adopted, the application unchanged: the keys each hands back are
# Snowflake IDs, exact; and node-postgres's own nextval().
# A free created_at as node-postgres asks (examples/created_at_node.js): a JavaScript Date and a day
# string read by the key range alone; created_at::date = $1 and date_trunc('day', created_at) = $1
# by the day's key range alone (a zone whose clocks do not change); each the rows of the setting off.
# Skipped, saying why, when Node.js is missing or the npm registry cannot be reached.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/clients.sh"
PORT=$(port 0)
JS_PORT=$(port 1)
NODE_DIR=/var/tmp/pg_idgen_clients/node
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install_missing nodejs npm >"$WORK/apt_node.log" 2>&1 ||
    skip_test "apt-get could not install nodejs and npm ($(tail -1 "$WORK/apt_node.log"))"
fi
NPM_PKGS=(pg@8 drizzle-orm@0.45 knex@3 typeorm@1 sequelize@6)
version() { node -p "require('$NODE_DIR/node_modules/$1/package.json').version" 2>/dev/null; }
installed() { local p; for p in pg drizzle-orm knex typeorm sequelize; do [ -n "$(version $p)" ] || return 1; done; }
if ! installed; then
  mkdir -p "$NODE_DIR"
  if ! npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error "${NPM_PKGS[@]}" >"$WORK/npm.log" 2>&1; then
    skip_test "npm could not install ${NPM_PKGS[*]} from the registry ($(tail -1 "$WORK/npm.log"))"
  fi
fi
echo "  node $(node --version), pg $(version pg), drizzle-orm $(version drizzle-orm), knex $(version knex), typeorm $(version typeorm), sequelize $(version sequelize)"
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

phase "a free created_at as node-postgres asks (examples/created_at_node.js)"
ca=$(NODE_PATH="$NODE_DIR/node_modules" node "$REPO/examples/created_at_node.js" "postgres://postgres@127.0.0.1:$PORT/postgres")
echo "    $ca"
ca_case() { python3 -c "import json, sys; r = json.loads(sys.argv[1])[sys.argv[2]]; print(r['how'], r['rows'] == r['rows_off'] > 0)" "$ca" "$1"; }
check "a JavaScript Date (a timestamptz) and a day string (a date): the key range alone, the rows of the setting off" eq \
  "$(ca_case js_date)|$(ca_case day_string)" "range True|range True"
check "created_at::date = a day string, date_trunc('day', created_at) = a Date (parameters of a plan made for them), in a zone whose clocks do not change: the day's key range alone, the rows of the setting off" eq \
  "$(ca_case cast_date)|$(ca_case date_trunc)" "range True|range True"

phase "the ORMs (examples/orm.js)"
orm=$(NODE_PATH="$NODE_DIR/node_modules" node "$REPO/examples/orm.js" "postgres://postgres@127.0.0.1:$PORT/postgres")
echo "$orm" | sed 's/^/    /'
line() { grep -F "\"orm\":\"$1\"" <<<"$orm"; }
for o in drizzle-orm knex typeorm sequelize; do
  l=$(line "$o")
  check "$o: 101 keys made by the database, handed back exactly, distinct, through JSON too" eq \
    "$(field "$l" rows)|$(field "$l" exact)|$(field "$l" distinct)|$(field "$l" json_exact)|$(field "$l" above_2_pow_53)" \
    "101|True|101|True|101"
done
check "drizzle-orm hands keys back as BigInt, the others as strings" eq \
  "$(field "$(line drizzle-orm)" types) $(field "$(line knex)" types) $(field "$(line typeorm)" types) $(field "$(line sequelize)" types)" \
  "bigint string string string"
l=$(line "drizzle-orm mode number (the hazard)")
check "control: Drizzle's mode 'number' rounds the keys, and the comparison says so ($(field "$l" distinct) distinct of 101)" \
  eq "$(field "$l" exact)" False
phase "adopted sequences (examples/adopted_orm.js)"
# Knex's bigIncrements and Sequelize's autoIncrement BIGINT, made by the ORMs, then the
# application run after idgen.adopt_sequences with not one line of it changed.
q $PORT "CREATE DATABASE adopted" >/dev/null
qdb $PORT adopted "CREATE EXTENSION pg_idgen" >/dev/null
NODE_PATH="$NODE_DIR/node_modules" node "$REPO/examples/adopted_orm.js" "postgres://postgres@127.0.0.1:$PORT/adopted" create >/dev/null
check "the ORMs' two sequences adopted" eq "$(qdb $PORT adopted "SELECT count(*) FROM idgen.adopt_sequences('public') WHERE result LIKE 'adopt sequence%'")" 2
ad=$(NODE_PATH="$NODE_DIR/node_modules" node "$REPO/examples/adopted_orm.js" "postgres://postgres@127.0.0.1:$PORT/adopted" run)
keys() { python3 -c "import json, sys; print(','.join(json.loads(sys.argv[1])[sys.argv[2]]))" "$ad" "$1"; }
not_snowflake() { qdb $PORT adopted "SELECT count(*) FILTER (WHERE k < 1e15 OR id_worker_id(k) IS DISTINCT FROM 0) || '/' || count(DISTINCT k) FROM unnest('{$1}'::bigint[]) k"; }
check "Knex: insert().returning('id'), one row and 100: Snowflake IDs, exact (the table's own)" eq \
  "$(not_snowflake "$(keys knex)")|$(qdb $PORT adopted "SELECT count(*) FROM kx_items WHERE id = ANY('{$(keys knex)}'::bigint[])")" "0/101|101"
check "Sequelize: create() and bulkCreate(): Snowflake IDs, exact" eq \
  "$(not_snowflake "$(keys sequelize)")|$(qdb $PORT adopted "SELECT count(*) FROM sq_tickets WHERE id = ANY('{$(keys sequelize)}'::bigint[])")" "0/101|101"
check "node-postgres: the application's own nextval()" eq "$(not_snowflake "$(keys nextval)")" "0/1"
finish
