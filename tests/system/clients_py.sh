#!/usr/bin/env bash
# docs/adopting.md's Python recipes (examples/sqlalchemy_app.py, sqlalchemy_typeid.py, examples/django/), run with the real
# clients from PyPI (psycopg 3, SQLAlchemy 2, Alembic, Django 5.2; installed once into a venv in
# /var/tmp/pg_idgen_clients/py):
#   - SQLAlchemy: a BigInteger key with server_default=text("snowflake_next()") gets its id back
#     after flush, for one row, for many, and from a bulk INSERT ... RETURNING;
#   - Alembic autogenerate with include_schemas=True proposes dropping pg_idgen's tables, and with
#     the recipe's include_name it proposes nothing;
#   - psycopg: INSERT ... RETURNING id, and a lost lease told by diag.constraint_name;
#   - SQLModel (examples/sqlmodel_app.py): the key made by the database comes back for one object
#     and for 100, exactly, and as JSON strings;
#   - Django: the BigAutoField migration with RunSQL (DROP IDENTITY, SET DEFAULT snowflake_next()):
#     create() and bulk_create() get Snowflake IDs back; Django 5's db_default (migration 0002,
#     as makemigrations writes it): create() gets its key back, bulk_create() does not; a segment
#     type created in an open transaction is not usable in it (the TestCase caveat), and is once
#     committed;
#   - adopted sequences (examples/adopted_orms.py): models declared the ORMs' ordinary way
#     (Django's BigAutoField, SQLAlchemy's Identity() and Sequence()), their sequences adopted, the
#     application unchanged: create(), bulk_create(), loaddata (with Django's sequence reset),
#     flush, a bulk INSERT ... RETURNING and nextval() by hand all get Snowflake IDs;
#   - a free created_at (examples/created_at_orm.py): psycopg's naive datetime and date
#     parameters, SQLAlchemy's Mapped[datetime], Django's USE_TZ = False filters: each read by the
#     key range alone, and the rows of the setting off; a day as Django (__date, TruncDay) and
#     SQLAlchemy (cast to Date, date_trunc) write it, in a zone whose clocks do not change: the
#     day's key range alone, the same rows.
# Skipped, saying why, when PyPI cannot be reached.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/clients.sh"
PORT=$(port 0)
VENV=$(py_venv) || skip_test "pip could not install psycopg, SQLAlchemy, Alembic, Django and SQLModel from PyPI ($VENV)"
echo "  $("$VENV/bin/python" -c "import psycopg, sqlalchemy, alembic, django, sqlmodel, sys; print(f'python {sys.version.split()[0]}, psycopg {psycopg.__version__}, SQLAlchemy {sqlalchemy.__version__}, Alembic {alembic.__version__}, Django {django.get_version()}, SQLModel {sqlmodel.__version__}')")"
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
  "$(field "$out" alembic_drops_plain)" "['idgen.node_origins', 'idgen.segments', 'idgen.segments_retired', 'idgen.workers', 'idgen_internal.adopted_sequences', 'idgen_internal.backfill_counters', 'idgen_internal.online_conversion_steps', 'idgen_internal.online_conversions', 'idgen_internal.public_keys']"
check "Alembic with the recipe's include_name: proposes nothing" eq "$(field "$out" alembic_drops_with_include_name)" "[]"
check "psycopg: INSERT ... RETURNING id; a lost lease has diag.constraint_name idgen_lease_lost" eq \
  "$(field "$out" psycopg_returning)|$(field "$out" lease_lost_condition)" "True|idgen_lease_lost"
out=$("$VENV/bin/python" "$REPO/examples/sqlalchemy_typeid.py" "postgresql+psycopg://postgres@127.0.0.1:$PORT/postgres")
echo "    $out"
check "SQLAlchemy, TypeIDs over a UUIDv7 key: the key (version 7) and its TypeID (member_...) come back, for one object and 10 added at once" eq \
  "$(field "$out" member_key_version)|$(field "$out" member_typeid_prefix)|$(field "$out" member_bulk_keys)" "7|member_|10"
check "SQLAlchemy, TypeIDs: found by its TypeID; a malformed one, one of another type and '' are None (a 404), and the transaction goes on" eq \
  "$(field "$out" member_found)|$(field "$out" member_refused)|$(field "$out" member_transaction_goes_on)" "one|[True, True, True]|11"
check "SQLAlchemy, TypeIDs: the control, the same lookup without the recipe's savepoint, is a DataError (22P02)" eq "$(field "$out" member_unguarded)" "DataError 22P02"
check "SQLAlchemy, a text key with DEFAULT typeid_next('note'): keys back for one and 10, found by it, a malformed one not found, its UUID version 7" eq \
  "$(field "$out" note_key_prefix)|$(field "$out" note_bulk_keys)|$(field "$out" note_found)|$(field "$out" note_malformed)|$(field "$out" note_uuid_version)" "note_|10|first|True|7"
out=$("$VENV/bin/python" "$REPO/examples/sqlmodel_app.py" "postgresql+psycopg://postgres@127.0.0.1:$PORT/postgres")
echo "    $out"
check "SQLModel: the key made by the database comes back, for one object and 100 (101 exact)" eq \
  "$(field "$out" one_id_is_snowflake)|$(field "$out" many_ids_distinct)|$(field "$out" exact)|$(field "$out" rows)" "True|100|True|101"
check "SQLModel: keys as JSON strings stay exact; as numbers most would not in JavaScript ($(field "$out" json_number_exact_in_javascript) of 101)" \
  test "$(field "$out" json_string_exact)" = True -a "$(field "$out" json_number_exact_in_javascript)" -lt 101
out=$("$VENV/bin/python" "$REPO/examples/django/run.py" "host=127.0.0.1 port=$PORT dbname=postgres user=postgres")
echo "    $out"
check "Django: create() and bulk_create() get Snowflake IDs back (101 distinct)" eq \
  "$(field "$out" create_id_is_snowflake)|$(field "$out" bulk_create_ids)|$(field "$out" distinct)|$(field "$out" all_snowflake)" "True|100|101|True"
check "Django 5 db_default: create() gets its Snowflake ID back; bulk_create() does not (Django 5.2), the rows get theirs" eq \
  "$(field "$out" db_default_create_id_is_snowflake)|$(field "$out" db_default_bulk_create_ids)|$(field "$out" db_default_rows)|$(field "$out" db_default_all_snowflake)" "True|0|11|True"
check "Django, TypeIDs over a UUIDv7 key: bulk_create() gets no keys back (Django 5.2), the recipe's bulk_create_keyed() gets all 10, rows and objects alike" eq \
  "$(field "$out" typeid_plain_bulk_create_keys)|$(field "$out" typeid_keyed_bulk_create_keys)|$(field "$out" typeid_keyed_rows)" "0|10|10"
check "Django, TypeIDs: a member found by its TypeID (member_...); a malformed one, one of another type and '' are DoesNotExist, not a DataError, and the transaction goes on" eq \
  "$(field "$out" typeid)|$(field "$out" typeid_found)|$(field "$out" typeid_refused)|$(field "$out" typeid_transaction_goes_on)" \
  "member_|k0|['DoesNotExist', 'DoesNotExist', 'DoesNotExist']|1"
check "Django: a segment type created in an open transaction is not usable in it (42704), and is once committed" eq \
  "$(field "$out" segment_in_open_transaction)|$(field "$out" segment_after_commit)" "42704|1"

# Django's contrib apps declare 32-bit keys (AutoField): Django drops lookups beyond 32 bits for
# them, so a converted table would lose every new row to Django without an error. The conversion
# cannot see that; its dry run (widen off, as by default) lists the whole plan and warns for each
# such key instead of stopping at the first.
q $PORT "CREATE DATABASE djcontrib" >/dev/null
qdb $PORT djcontrib "CREATE EXTENSION pg_idgen" >/dev/null
out=$("$VENV/bin/python" "$REPO/examples/django/contrib_migrate.py" "host=127.0.0.1 port=$PORT dbname=djcontrib user=postgres")
echo "    $out"
int_keys=$(qdb $PORT djcontrib "SELECT string_agg(c.relname, ' ' ORDER BY c.relname) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                                 JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
                                WHERE a.attname = 'id' AND a.atttypid = 'int4'::regtype AND c.relkind = 'r'")
plan=$(psql -h 127.0.0.1 -p $PORT -U postgres -d djcontrib -X -q -A -t -c \
  "SELECT table_name || ': ' || statement FROM idgen.convert_schema_to_snowflake('public')" 2>&1)
warned=0
for t in $int_keys; do grep -q "WARNING:  .*the key public.$t.id was integer: declare it 64-bit in every application first" <<<"$plan" && warned=$((warned + 1)); done
check "Django's contrib tables with 32-bit keys ($(wc -w <<<"$int_keys"), e.g. auth_user): the dry run warns for each" \
  eq "$warned|$(grep -c "ALTER TABLE public.auth_user ALTER COLUMN id TYPE bigint" <<<"$plan")" "$(wc -w <<<"$int_keys")|1"
check "Django declares those keys AutoField (so a converted table would hide its new rows from Django)" eq \
  "$(field "$out" keys | python3 -c "import ast, sys; k = ast.literal_eval(sys.stdin.read()); print(k['auth_user'], k['django_content_type'])")" "AutoField AutoField"
check "the dry run changed nothing" eq "$(qdb $PORT djcontrib "SELECT count(*) FROM pg_attrdef d WHERE pg_get_expr(d.adbin, d.adrelid) LIKE '%snowflake_next%'")" 0

# Adopted sequences (examples/adopted_orms.py): Django's BigAutoField, SQLAlchemy's Identity() and
# Sequence(), the schema made by the ORMs, then the application run after idgen.adopt_sequences
# with not one line of it changed.
Q() { q $PORT "$1"; }
Q "CREATE DATABASE adopted" >/dev/null
qdb $PORT adopted "CREATE EXTENSION pg_idgen" >/dev/null
"$VENV/bin/python" "$REPO/examples/adopted_orms.py" "postgresql://postgres@127.0.0.1:$PORT/adopted" create >/dev/null
check "the ORMs' four sequences adopted" eq "$(qdb $PORT adopted "SELECT count(*) FROM idgen.adopt_sequences('public') WHERE result LIKE 'adopt sequence%'")" 4
out=$("$VENV/bin/python" "$REPO/examples/adopted_orms.py" "postgresql://postgres@127.0.0.1:$PORT/adopted" run)
not_snowflake() { qdb $PORT adopted "SELECT count(*) FILTER (WHERE id_worker_id(k) IS DISTINCT FROM 0 OR k < 1e15) || '/' || count(DISTINCT k) FROM unnest('{$1}'::bigint[]) k"; }
ids() { python3 -c "import json, sys; v = json.loads(sys.argv[1])[sys.argv[2]]; print(','.join(map(str, v if isinstance(v, list) else [v])))" "$out" "$1"; }
check "Django: create() and bulk_create() get Snowflake IDs back (1 + 100, all distinct)" eq \
  "$(not_snowflake "$(ids django_create_id),$(ids django_bulk_ids)")" "0/101"
check "Django: loaddata keeps the fixture's key, its sequence reset is accepted, the next key is a Snowflake ID" eq \
  "$(field "$out" django_fixture_kept)|$(not_snowflake "$(ids django_after_fixture_id)")" "True|0/1"
check "SQLAlchemy: Identity() keys after flush, one and 100" eq "$(not_snowflake "$(ids sqlalchemy_identity_ids)")" "0/101"
check "SQLAlchemy: Sequence() keys (its own nextval), one, a bulk INSERT ... RETURNING of 100, and nextval() by hand" eq \
  "$(not_snowflake "$(ids sqlalchemy_sequence_ids)")" "0/102"

# A free created_at as ORMs ask for it (examples/created_at_orm.py): naive datetimes and dates,
# which the clients send as timestamp and date, in a session of odd offset (Asia/Kathmandu).
out=$("$VENV/bin/python" "$REPO/examples/created_at_orm.py" "host=127.0.0.1 port=$PORT dbname=postgres user=postgres")
echo "    $out"
for client in psycopg_naive_datetime psycopg_date sqlalchemy_naive_datetime django_naive_datetime django_range; do
  check "a free created_at, $client: read by the key range alone, the rows of the setting off" eq \
    "$(python3 -c "import json, sys; r = json.loads(sys.argv[1])[sys.argv[2]]; print(r['served'], r['rows'] == r['rows_off'] > 0)" "$out" "$client")" "True True"
done
for client in django_date django_trunc_day sqlalchemy_cast_date sqlalchemy_date_trunc; do
  check "a free created_at, a day as $client writes it (a literal, or a bind parameter of a plan made for it), in a zone whose clocks do not change: read by the day's key range alone, the rows of the setting off" eq \
    "$(python3 -c "import json, sys; r = json.loads(sys.argv[1])[sys.argv[2]]; print(r['served'], r['rows'] == r['rows_off'] > 0)" "$out" "$client")" "True True"
done
finish
