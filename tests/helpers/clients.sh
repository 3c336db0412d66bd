# Helpers of the client tests (tests/system/clients_*.sh), sourced after assert.sh. Each example
# program prints one JSON object of what it found.

# field JSON KEY: one value of an example's output (Python's spelling: True, None, [...]).
field() { python3 -c "import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }

# legacy_table PORT: a serial-keyed table "legacy" with 100 rows, converted by
# idgen.convert_to_snowflake; the example programs insert one row into it when named.
legacy_table() {
  q "$1" "CREATE TABLE legacy (id serial PRIMARY KEY, note text);
          INSERT INTO legacy (note) SELECT 'old' FROM generate_series(1, 100);
          SELECT count(*) FROM idgen.convert_to_snowflake('legacy', 'id', widen => true)" >/dev/null
}

# check_legacy_row OUTPUT: the client's row in "legacy" got a Snowflake ID (above 2^53).
check_legacy_row() {
  check "a serial table converted by idgen.convert_to_snowflake takes a row from this client, with a Snowflake ID" \
    test "$(field "$1" converted_table_id)" -gt 9007199254740992
}

# py_venv: the path of the Python venv of the client tests (psycopg 3, SQLAlchemy 2, Alembic,
# Django 5.2, SQLModel, cyphera from PyPI), made once in /var/tmp/pg_idgen_clients/py; on failure, pip's last line
# and status 1. One caller at a time: the tests of several majors may ask at once.
PY_VENV=/var/tmp/pg_idgen_clients/py
# cyphera: an FF1 implementation in Python (over the cryptography package's AES) that
# tests/system/public_ids_check.py checks public IDs against; pinned, being a pre-release.
PY_PKGS=("psycopg[binary]>=3.2,<4" "sqlalchemy>=2,<3" "alembic>=1.13,<2" "django>=5.2,<5.3" "sqlmodel>=0.0.24,<0.1" "cyphera==0.0.1a10")
py_venv() { mkdir -p "$(dirname "$PY_VENV")" && with_lock "$(dirname "$PY_VENV")/.lock" py_venv_locked; }
py_venv_locked() {
  if [ ! -x "$PY_VENV/bin/python" ] || ! "$PY_VENV/bin/python" -c "import psycopg, sqlalchemy, alembic, django, sqlmodel, cyphera" 2>/dev/null; then
    rm -rf "$PY_VENV"
    if ! { python3 -m venv "$PY_VENV" && "$PY_VENV/bin/pip" install -q "${PY_PKGS[@]}"; } >"$WORK/pip.log" 2>&1; then
      rm -rf "$PY_VENV"
      tail -1 "$WORK/pip.log"
      return 1
    fi
  fi
  echo "$PY_VENV"
}
