#!/usr/bin/env bash
# The README's Python recipes (examples/sqlalchemy_app.py, examples/django/), run with the real
# clients from PyPI (psycopg 3, SQLAlchemy 2, Alembic, Django 5.2; installed once into a venv in
# /var/tmp/pg_idgen_clients/py):
#   - SQLAlchemy: a BigInteger key with server_default=text("snowflake_next()") gets its id back
#     after flush, for one row, for many, and from a bulk INSERT ... RETURNING;
#   - Alembic autogenerate with include_schemas=True proposes dropping pg_idgen's tables, and with
#     the recipe's include_name it proposes nothing;
#   - psycopg: INSERT ... RETURNING id, and a lost lease told by diag.constraint_name;
#   - Django: the BigAutoField migration with RunSQL (DROP IDENTITY, SET DEFAULT snowflake_next()):
#     create() and bulk_create() get Snowflake IDs back; a segment type created in an open
#     transaction is not usable in it (the TestCase caveat), and is once committed.
# Skipped, saying why, when PyPI cannot be reached.
source "$(dirname "${BASH_SOURCE[0]}")/../assert.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../clients.sh"
PORT=26451
VENV=/var/tmp/pg_idgen_clients/py
PKGS=("psycopg[binary]>=3.2,<4" "sqlalchemy>=2,<3" "alembic>=1.13,<2" "django>=5.2,<5.3")
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import psycopg, sqlalchemy, alembic, django" 2>/dev/null; then
  rm -rf "$VENV"
  if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "${PKGS[@]}"; } >"$WORK/pip.log" 2>&1; then
    rm -rf "$VENV"
    skip_test "pip could not install psycopg, SQLAlchemy, Alembic and Django from PyPI ($(tail -1 "$WORK/pip.log"))"
  fi
fi
echo "  $("$VENV/bin/python" -c "import psycopg, sqlalchemy, alembic, django, sys; print(f'python {sys.version.split()[0]}, psycopg {psycopg.__version__}, SQLAlchemy {sqlalchemy.__version__}, Alembic {alembic.__version__}, Django {django.get_version()}')")"
cluster_init clients_py $PORT
cluster_start clients_py
trap 'cluster_stop clients_py immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen"
legacy_table $PORT
out=$("$VENV/bin/python" "$REPO/examples/sqlalchemy_app.py" "postgresql+psycopg://postgres@127.0.0.1:$PORT/postgres" legacy)
echo "    $out"
check_legacy_row "$out"
check "SQLAlchemy: the id is there after flush, for one row and for 100" eq \
  "$(field "$out" orm_id_after_flush)|$(field "$out" orm_ids_distinct)" "True|100"
check "SQLAlchemy: a bulk INSERT ... RETURNING gives 100 distinct ids; 201 rows in all" eq \
  "$(field "$out" bulk_returning_ids)|$(field "$out" rows)" "100|201"
check "Alembic, include_schemas=True: proposes dropping pg_idgen's tables" eq \
  "$(field "$out" alembic_drops_plain)" "['idgen.node_origins', 'idgen.segments', 'idgen.segments_retired', 'idgen.workers']"
check "Alembic with the recipe's include_name: proposes nothing" eq "$(field "$out" alembic_drops_with_include_name)" "[]"
check "psycopg: INSERT ... RETURNING id; a lost lease has diag.constraint_name idgen_lease_lost" eq \
  "$(field "$out" psycopg_returning)|$(field "$out" lease_lost_condition)" "True|idgen_lease_lost"
out=$("$VENV/bin/python" "$REPO/examples/django/run.py" "host=127.0.0.1 port=$PORT dbname=postgres user=postgres")
echo "    $out"
check "Django: create() and bulk_create() get Snowflake IDs back (101 distinct)" eq \
  "$(field "$out" create_id_is_snowflake)|$(field "$out" bulk_create_ids)|$(field "$out" distinct)|$(field "$out" all_snowflake)" "True|100|101|True"
check "Django: a segment type created in an open transaction is not usable in it (42704), and is once committed" eq \
  "$(field "$out" segment_in_open_transaction)|$(field "$out" segment_after_commit)" "42704|1"
finish
