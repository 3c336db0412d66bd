#!/usr/bin/env bash
# Moving an existing schema onto Snowflake IDs (idgen.convert_to_snowflake and
# idgen.convert_schema_to_snowflake), as a team with data would: serial and bigserial keys, an
# integer key referenced by a foreign key, an identity column, a default on a sequence the column
# does not own, and a partitioned table, all with rows.
#   - refusals, each naming what to do: an integer key without widen (naming the referencing
#     column), a partition, a column without a sequence, values not below the node's next ID, a
#     column already converted;
#   - the dry run lists the statements and changes nothing;
#   - the conversion, in one transaction: new rows get Snowflake IDs above every old key, foreign
#     keys hold, identities are gone, sequences are detached and kept (or dropped);
#   - a failure part way undoes all of it;
#   - it changes only what it was asked to: a sequence another table shares or owns is left as it
#     is (and said so), a numeric(10,0) key is refused without widen, an integer key's dry run
#     lists the plan with a warning instead of stopping;
#   - pg_dump / pg_restore of the converted schema restores, and the restored tables take rows.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
cluster_init convert $PORT
cluster_start convert
trap 'cluster_stop convert immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen; CREATE SCHEMA app"
q $PORT "
CREATE TABLE app.customers (id serial PRIMARY KEY, name text);
CREATE TABLE app.orders (id bigserial PRIMARY KEY, customer_id int NOT NULL REFERENCES app.customers, total numeric);
CREATE TABLE app.items (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, sku text);
CREATE SEQUENCE app.event_ids;
CREATE TABLE app.events (id bigint PRIMARY KEY DEFAULT nextval('app.event_ids'), kind text);
CREATE TABLE app.readings (id bigserial, k int NOT NULL, v float8, PRIMARY KEY (id, k)) PARTITION BY RANGE (k);
CREATE TABLE app.readings_a PARTITION OF app.readings FOR VALUES FROM (0) TO (100);
CREATE TABLE app.readings_b PARTITION OF app.readings FOR VALUES FROM (100) TO (200);
CREATE TABLE app.notes (id bigint PRIMARY KEY, body text);
CREATE TABLE app.tags (id bigserial PRIMARY KEY, label text);
CREATE TABLE app.item_tags (item_id int REFERENCES app.items, tag_id int REFERENCES app.tags);
INSERT INTO app.customers (name) SELECT 'c' || g FROM generate_series(1, 1000) g;
INSERT INTO app.orders (customer_id, total) SELECT 1 + g % 1000, g FROM generate_series(1, 5000) g;
INSERT INTO app.items (sku) SELECT 's' || g FROM generate_series(1, 300) g;
INSERT INTO app.events (kind) SELECT 'e' FROM generate_series(1, 200) g;
INSERT INTO app.readings (k, v) SELECT g % 200, g FROM generate_series(1, 2000) g;
INSERT INTO app.notes SELECT g, 'n' FROM generate_series(1, 10) g;
INSERT INTO app.tags (label) SELECT 't' || g FROM generate_series(1, 10) g;
INSERT INTO app.item_tags SELECT g, 1 + g % 10 FROM generate_series(1, 300) g" >/dev/null
err() { psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -v VERBOSITY=verbose -c "$1" 2>&1 | grep -E '^(ERROR|DETAIL|HINT):' || true; }
snapshot() {
  q $PORT "SELECT string_agg(format('%s.%s %s %s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
                                    a.attidentity, pg_get_expr(d.adbin, d.adrelid)), '; ' ORDER BY c.relname, a.attnum)
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'app'
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
             LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
            WHERE c.relkind IN ('r', 'p')"
}
before=$(snapshot)

phase "refusals"
out=$(err "SELECT idgen.convert_to_snowflake('app.customers', 'id')")
check "integer key without widen: 42804, naming it, the referencing column, and widen" eq \
  "$(grep -c 'ERROR:  42804: .*app.customers.id, app.orders.customer_id cannot hold Snowflake IDs\|DETAIL:  .*the key app.customers.id is integer\|HINT:  Call it with widen => true' <<<"$out")" 3
check "bigint key referenced by an integer column, without widen: 42804 naming that column" grep -q \
  'ERROR:  42804: .*app.item_tags.tag_id cannot hold' <<<"$(err "SELECT idgen.convert_to_snowflake('app.tags', 'id')")"
check "a partition: 42809, convert its parent" grep -q 'ERROR:  42809: .*app.readings_a is a partition' \
  <<<"$(err "SELECT idgen.convert_to_snowflake('app.readings_a', 'id')")"
check "a column without a sequence: 22023" grep -q 'ERROR:  22023: .*takes its values from no sequence' \
  <<<"$(err "SELECT idgen.convert_to_snowflake('app.notes', 'id')")"
check "a column that does not exist: 42703" grep -q 'ERROR:  42703:' \
  <<<"$(err "SELECT idgen.convert_to_snowflake('app.orders', 'nope')")"
check "NULL argument: 22004" grep -q 'ERROR:  22004:' <<<"$(err "SELECT idgen.convert_to_snowflake('app.orders', NULL)")"
# A value at or above the node's next Snowflake ID: new IDs could repeat it.
q $PORT "CREATE TABLE app.ahead (id bigserial PRIMARY KEY); INSERT INTO app.ahead VALUES (id_from_timestamp(clock_timestamp() + interval '1 day'))" >/dev/null
out=$(err "SELECT idgen.convert_to_snowflake('app.ahead', 'id')")
check "values not below the node's next ID: 55000 with the way out" eq \
  "$(grep -c 'ERROR:  55000: .*holds values up to\|HINT:  If these values are Snowflake IDs of this layout, move this node past them first' <<<"$out")" 2
q $PORT "DROP TABLE app.ahead" >/dev/null
check "nothing changed by the refusals" eq "$(snapshot)" "$before"

phase "the dry run"
plan=$(q $PORT "SELECT table_name || ': ' || statement FROM idgen.convert_schema_to_snowflake('app', widen => true)")
echo "$plan" | sed 's/^/    /'
check "it lists the widening of the keys and of the foreign key columns" eq \
  "$(grep -c 'ALTER TABLE app.customers ALTER COLUMN id TYPE bigint\|ALTER TABLE app.orders ALTER COLUMN customer_id TYPE bigint\|ALTER TABLE app.items ALTER COLUMN id TYPE bigint\|ALTER TABLE app.item_tags ALTER COLUMN item_id TYPE bigint\|ALTER TABLE app.item_tags ALTER COLUMN tag_id TYPE bigint' <<<"$plan")" 5
check "it lists dropping the identity, the new defaults and detaching the owned sequences" eq \
  "$(grep -c 'DROP IDENTITY\|SET DEFAULT .*snowflake_next()\|OWNED BY NONE' <<<"$plan")" \
  "$((1 + 6 + 4))"
check "the dry run changed nothing" eq "$(snapshot)" "$before"

phase "a failure part way undoes everything"
# In one transaction: the second conversion fails (no widen), so the first is undone too.
out=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -c "BEGIN" \
  -c "SELECT count(*) FROM idgen.convert_to_snowflake('app.orders', 'id')" \
  -c "SELECT count(*) FROM idgen.convert_to_snowflake('app.customers', 'id')" -c "COMMIT" 2>&1 || true)
check "the failed transaction left the schema as it was" eq "$(snapshot)" "$before"

phase "the conversion"
max_before=$(q $PORT "SELECT greatest((SELECT max(id) FROM app.customers), (SELECT max(id) FROM app.orders),
                                      (SELECT max(id) FROM app.items), (SELECT max(id) FROM app.events),
                                      (SELECT max(id) FROM app.readings))")
q $PORT "SELECT count(*) FROM idgen.convert_to_snowflake('app.events', 'id', drop_sequence => true)" >/dev/null
q $PORT "SELECT count(*) FROM idgen.convert_schema_to_snowflake('app', widen => true, dry_run => false)" >/dev/null
after=$(snapshot)
check "every sequence-backed key now defaults to snowflake_next(), as bigint, with no identity" eq \
  "$(q $PORT "SELECT count(*) FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'app'
               JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = d.adnum
              WHERE pg_get_expr(d.adbin, d.adrelid) LIKE '%snowflake_next()' AND a.atttypid = 'int8'::regtype AND a.attidentity = ''")" \
  "$(q $PORT "SELECT 6 + count(*) FROM pg_inherits WHERE inhparent = 'app.readings'::regclass")"
check "the foreign key columns were widened with their keys" eq \
  "$(q $PORT "SELECT string_agg(format_type(atttypid, atttypmod), ',') FROM pg_attribute
               WHERE (attrelid, attname) IN (('app.orders'::regclass, 'customer_id'), ('app.item_tags'::regclass, 'item_id'), ('app.item_tags'::regclass, 'tag_id'))")" bigint,bigint,bigint
check "owned sequences are kept, detached; the one asked for is dropped" eq \
  "$(q $PORT "SELECT count(*) FILTER (WHERE d.objid IS NULL) || '/' || count(*) FROM pg_class s
               JOIN pg_namespace n ON n.oid = s.relnamespace AND n.nspname = 'app'
               LEFT JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = s.oid AND d.deptype IN ('a', 'i')
              WHERE s.relkind = 'S'")|$(q $PORT "SELECT to_regclass('app.event_ids') IS NULL")" "4/4|t"
q $PORT "INSERT INTO app.customers (name) VALUES ('new') ;
         INSERT INTO app.orders (customer_id, total) SELECT id, 1 FROM app.customers WHERE name = 'new';
         INSERT INTO app.items (sku) VALUES ('new'); INSERT INTO app.events (kind) VALUES ('new');
         INSERT INTO app.readings (k, v) VALUES (5, 1), (150, 2)" >/dev/null
check "new rows get Snowflake IDs above every old key (${max_before})" eq \
  "$(q $PORT "SELECT bool_and(id > $max_before) FROM (SELECT id FROM app.customers WHERE name = 'new'
               UNION ALL SELECT id FROM app.orders WHERE total = 1 AND id > 5000 UNION ALL SELECT id FROM app.items WHERE sku = 'new'
               UNION ALL SELECT id FROM app.events WHERE kind = 'new' UNION ALL SELECT id FROM app.readings WHERE v IN (1, 2) AND id > 2000) x")|$(q $PORT "SELECT count(*) FROM app.readings WHERE id > $max_before")" "t|2"
check "the old rows and the foreign keys are intact" eq \
  "$(q $PORT "SELECT (SELECT count(*) FROM app.orders o JOIN app.customers c ON c.id = o.customer_id) || ',' ||
                     (SELECT count(*) FROM app.item_tags x JOIN app.items i ON i.id = x.item_id JOIN app.tags t ON t.id = x.tag_id)")" 5001,300
check "converting again is refused: 42710" grep -q 'ERROR:  42710: .*already defaults to snowflake_next()' \
  <<<"$(err "SELECT idgen.convert_to_snowflake('app.orders', 'id')")"

phase "only what it was asked to change: shared sequences, keys that cannot hold IDs"
# Older Rails and Django schemas share one sequence between tables: converting one table must
# leave the other's sequence (and its ownership) alone. A numeric(10,0) key cannot hold IDs.
q $PORT "CREATE SCHEMA shop;
         CREATE TABLE shop.a (id serial PRIMARY KEY, v text);
         CREATE TABLE shop.b (id bigint PRIMARY KEY DEFAULT nextval('shop.a_id_seq'), v text);
         CREATE TABLE shop.c (id bigint PRIMARY KEY DEFAULT nextval('shop.a_id_seq'), v text);
         CREATE SEQUENCE shop.n_seq;
         CREATE TABLE shop.n (id numeric(10,0) PRIMARY KEY DEFAULT nextval('shop.n_seq'), v text);
         CREATE TABLE shop.i (id serial PRIMARY KEY, v text);
         INSERT INTO shop.a (v) VALUES ('a'); INSERT INTO shop.b (v) VALUES ('b');
         INSERT INTO shop.n (v) VALUES ('n'); INSERT INTO shop.i (v) VALUES ('i')" >/dev/null
notices=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -c \
  "SELECT count(*) FROM idgen.convert_to_snowflake('shop.b', 'id')" 2>&1 || true)
check "converting shop.b says it leaves the sequence shop.a shares alone" grep -q \
  "sequence shop.a_id_seq is left as it is" <<<"$notices"
notices=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -c \
  "SELECT count(*) FROM idgen.convert_to_snowflake('shop.c', 'id', drop_sequence => true)" 2>&1 || true)
check "converting shop.c with drop_sequence keeps it too, saying so" grep -q \
  "sequence shop.a_id_seq is left as it is" <<<"$notices"
check "shop.a still owns its sequence, which still exists" eq \
  "$(q $PORT "SELECT pg_get_serial_sequence('shop.a', 'id')")" "shop.a_id_seq"
check "shop.a still takes rows from it" eq "$(q $PORT "INSERT INTO shop.a (v) VALUES ('a2') RETURNING id" 2>&1)" 3
check "shop.b takes Snowflake IDs" eq "$(q $PORT "INSERT INTO shop.b (v) VALUES ('b2') RETURNING id > 2^53" 2>&1)" t
check "a numeric(10,0) key is refused without widen (42804), naming it" grep -q \
  'ERROR:  42804: .*shop.n.id cannot hold Snowflake IDs' <<<"$(err "SELECT idgen.convert_to_snowflake('shop.n', 'id')")"
q $PORT "SELECT count(*) FROM idgen.convert_to_snowflake('shop.n', 'id', widen => true)" >/dev/null 2>&1 || true
check "with widen it becomes bigint and takes rows" eq \
  "$(q $PORT "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'shop.n'::regclass AND attname = 'id'")|$(q $PORT "INSERT INTO shop.n (v) VALUES ('n2') RETURNING id > 2^53" 2>&1)" "bigint|t"
plan=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -c \
  "SELECT s FROM idgen.convert_to_snowflake('shop.i', 'id', dry_run => true) s" 2>&1 || true)
check "an integer key's dry run lists the plan (no 42804), warning that it needs widen" eq \
  "$(grep -c 'ALTER TABLE shop.i ALTER COLUMN id TYPE bigint\|WARNING:  .*shop.i.id cannot hold Snowflake IDs: the plan widens them, which needs widen => true' <<<"$plan")" 2
check "and warns that applications must declare the key 64-bit first" grep -q \
  'WARNING:  .*the key shop.i.id was integer: declare it 64-bit in every application first' <<<"$plan"

phase "pg_dump / pg_restore"
q $PORT "CREATE DATABASE restored" >/dev/null
dump="$WORK/convert.dump"
as_pg "$PGBIN/pg_dump" -h 127.0.0.1 -p $PORT -U postgres -Fc -f "$dump" postgres
restore_err=$(as_pg "$PGBIN/pg_restore" -h 127.0.0.1 -p $PORT -U postgres -d restored "$dump" 2>&1 || echo "pg_restore failed")
check "the converted schema restores without an error" eq "$restore_err" ""
check "the restored tables take rows with Snowflake IDs" eq \
  "$(qdb $PORT restored "INSERT INTO app.customers (name) VALUES ('after restore') RETURNING id > $max_before")" t
finish
