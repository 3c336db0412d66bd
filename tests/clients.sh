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
