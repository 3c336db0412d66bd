#!/usr/bin/env bash
# Public IDs (docs/public-ids.md): keyed, reversible encryption of IDs with FF1 over AES.
#   - Round trips of 100k values per form (bigint, JavaScript-safe bigint, UUIDv7, the two text
#     forms), and no two inputs encrypt to the same output (10M per form: the core crate's
#     ten_million_round_trips_per_form).
#   - An independent FF1 (PyPI's cyphera, checked first on NIST's samples) agrees on 10,000
#     values of each form (tests/system/public_ids_check.py).
#   - Values outside a form's domain, foreign or damaged text forms: each its SQLSTATE.
#   - Consecutive IDs encrypt to no visible order: about half of the neighbours increase in 1M
#     (control: the IDs themselves, all of whose neighbours increase).
#   - Rotation: new public IDs use the new version at once, in every session; old ones still
#     decrypt until their version is dropped; a rolled-back rotation changes nothing.
#   - Keys: a plain role and an administrator never read one: not the table, the view, an error,
#     a setting, pg_stat_statements, nor pg_dump run by a plain role. The SECURITY DEFINER
#     functions ignore objects planted in the caller's schema (control: the same planted
#     function runs where search_path is not pinned).
#   - pg_dump/pg_restore by a superuser carries the keys, and so does a physical standby; two
#     nodes given the same key make the same public IDs and show the same fingerprint.
# (Controls, run by hand on PostgreSQL 16: with the trigger's relcache invalidation removed, the
# session that had the key cached kept making version 01 after the rotation; with public_key_create's
# SET search_path removed, the planted hashtext() ran as the superuser owning it and copied both
# keys into the planter's table. Both checks failed, as the check of its control did.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/clients.sh"
P=$(port 0)
P2=$(port 1)
STANDBY=$(port 2)
K=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
VENV=$(py_venv) || skip_test "pip could not install psycopg and cyphera from PyPI ($VENV)"
trap 'cluster_stop pubid immediate; cluster_stop pubid2 immediate; cluster_stop pubid_standby immediate' EXIT
STATEMENTS=no
[ -f "$("$PG_CONFIG" --sharedir)/extension/pg_stat_statements.control" ] && STATEMENTS=yes
cluster_init pubid $P "idgen.worker_id = 1" "work_mem = '256MB'"
[ $STATEMENTS = yes ] && cluster_conf pubid "shared_preload_libraries = 'pg_idgen, pg_stat_statements'"
cluster_start pubid
q $P "CREATE EXTENSION pg_idgen"
[ $STATEMENTS = yes ] && q $P "CREATE EXTENSION pg_stat_statements"
q $P "CREATE ROLE admin LOGIN; GRANT idgen_admin TO admin; CREATE ROLE plain LOGIN; CREATE ROLE mallory LOGIN"
as() { psql -h 127.0.0.1 -p $P -U "$1" -d postgres -X -q -A -t -v ON_ERROR_STOP=1 -c "$2"; }
# state ROLE SQL: the SQLSTATE of SQL's error (nothing if it succeeded), and its whole text in $WORK/state.txt.
state() {
  psql -h 127.0.0.1 -p $P -U "$1" -d postgres -X -q -A -t -v ON_ERROR_STOP=1 -c "\\set VERBOSITY verbose" -c "$2" >"$WORK/state.txt" 2>&1 || true
  sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\):.*/\1/p' "$WORK/state.txt" | head -1
}

phase "keys"
check "an administrator creates a key with given bytes (version 1)" eq "$(as admin "SELECT idgen.public_key_create('invoice', 'inv', '\\x$K'::bytea)")" 1
check "... and a random one" eq "$(as admin "SELECT idgen.public_key_create('account', 'acc')")" 1
check "a key that exists: 42710" eq "$(state admin "SELECT idgen.public_key_create('invoice', 'inv', '\\x$K'::bytea)")" 42710
check "... whose error does not show the key" not_grep -i "$K" "$WORK/state.txt"
# Another node given the same key bytes makes the same public IDs.
cluster_init pubid2 $P2 "idgen.worker_id = 2"
cluster_start pubid2
q $P2 "CREATE EXTENSION pg_idgen; SELECT idgen.public_key_create('invoice', 'inv', '\\x$K'::bytea)" >/dev/null
check "another node given the same key: the same fingerprint and the same public IDs" eq \
  "$(q $P2 "SELECT fingerprint, idgen.id_to_public(5, 'invoice') FROM idgen.public_keys WHERE name = 'invoice'")" \
  "$(q $P "SELECT fingerprint, idgen.id_to_public(5, 'invoice') FROM idgen.public_keys WHERE name = 'invoice'")"
check "... a random key's fingerprint differs" ne \
  "$(q $P "SELECT fingerprint FROM idgen.public_keys WHERE name = 'account'")" \
  "$(q $P "SELECT fingerprint FROM idgen.public_keys WHERE name = 'invoice'")"
check "a key of 15 bytes: 22023" eq "$(state admin "SELECT idgen.public_key_create('short', '', '\\x${K:0:30}'::bytea)")" 22023
check "... whose error does not show it" not_grep -i "${K:0:30}" "$WORK/state.txt"
check "a bad prefix: 22023" eq "$(state admin "SELECT idgen.public_key_create('bad', 'In_v')")" 22023
check "a bad name: 22023" eq "$(state admin "SELECT idgen.public_key_create('Bad Name')")" 22023
check "a plain role may not create, rotate or drop keys (42501)" eq \
  "$(state plain "SELECT idgen.public_key_create('mine')")$(state plain "SELECT idgen.public_key_rotate('invoice')")$(state plain "SELECT idgen.public_key_drop('invoice')")" 425014250142501
check "an unknown key: 42704" eq "$(state plain "SELECT idgen.encrypt_id(1, 'nokey')")" 42704

# The SQL path, on 100,000 values per form; the volume (10M per form, the same properties) is the
# core crate's ten_million_round_trips_per_form, run by the test command in a release build.
phase "round trips of 100k values per form"
RANDOM_BIGINT="((((random() * 4294967296)::bigint - 2147483648) << 32) | (random() * 4294967295)::bigint)"
check "bigint: 100k random values come back, and distinct inputs give distinct outputs" eq "$(as plain "
  SELECT count(*) FILTER (WHERE idgen.decrypt_id(y, 'invoice') <> x), count(DISTINCT x) = count(DISTINCT y), count(DISTINCT x) > 99990
    FROM (SELECT x, idgen.encrypt_id(x, 'invoice') y FROM (SELECT $RANDOM_BIGINT x FROM generate_series(1, 100000)) v) e")" "0|t|t"
check "JavaScript-safe: 100k random values stay in 0..2^53-1 and come back, distinct" eq "$(as plain "
  SELECT count(*) FILTER (WHERE idgen.decrypt_id_js_safe(y, 'invoice') <> x), count(*) FILTER (WHERE y NOT BETWEEN 0 AND 9007199254740991),
         count(DISTINCT x) = count(DISTINCT y)
    FROM (SELECT x, idgen.encrypt_id_js_safe(x, 'invoice') y
            FROM (SELECT (random() * 4503599627370496)::bigint * 2 + (random() < 0.5)::int x FROM generate_series(1, 100000)) v) e")" "0|0|t"
check "UUIDv7: 100k come back, all encrypted ones are version 4 with the RFC variant, distinct" eq "$(as plain "
  SELECT count(*) FILTER (WHERE idgen.decrypt_uuid(y, 'invoice') <> x),
         count(*) FILTER (WHERE substr(y::text, 15, 1) <> '4' OR substr(y::text, 20, 1) NOT IN ('8', '9', 'a', 'b')),
         count(DISTINCT y) = 100000
    FROM (SELECT x, idgen.encrypt_uuid(x, 'invoice') y FROM (SELECT uuidv7_next() x FROM generate_series(1, 100000)) v) e")" "0|0|t"
check "text (bigint): 100k come back, fixed length, distinct" eq "$(as plain "
  SELECT count(*) FILTER (WHERE idgen.public_to_id(y, 'invoice') <> x), min(length(y)) = max(length(y)), count(DISTINCT x) = count(DISTINCT y)
    FROM (SELECT x, idgen.id_to_public(x, 'invoice') y FROM (SELECT $RANDOM_BIGINT x FROM generate_series(1, 100000)) v) e")" "0|t|t"
check "text (UUIDv7): 100k come back, fixed length, distinct" eq "$(as plain "
  SELECT count(*) FILTER (WHERE idgen.public_to_uuid(y, 'invoice') <> x), min(length(y)) = max(length(y)), count(DISTINCT y) = 100000
    FROM (SELECT x, idgen.uuid_to_public(x, 'invoice') y FROM (SELECT uuidv7_next() x FROM generate_series(1, 100000)) v) e")" "0|t|t"

q $P "CREATE TABLE par AS SELECT g AS id FROM generate_series(1, 1000000) g; ANALYZE par; GRANT SELECT ON par TO plain"
PARALLEL="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;"
check "in parallel workers (the functions are PARALLEL SAFE): a Gather, and 1M round trips" eq \
  "$(as plain "$PARALLEL EXPLAIN (COSTS OFF) SELECT count(*) FROM par WHERE idgen.public_to_id(idgen.id_to_public(id, 'invoice'), 'invoice') <> id" | grep -c Gather)|$(as plain "$PARALLEL SELECT count(*) FROM par WHERE idgen.public_to_id(idgen.id_to_public(id, 'invoice'), 'invoice') <> id")" "1|0"

phase "an independent FF1 agrees"
out=$("$VENV/bin/python" "$REPO/tests/system/public_ids_check.py" "host=127.0.0.1 port=$P user=postgres dbname=postgres" invoice $K inv 2>"$WORK/check.err")
echo "    $out"
show_errors "$WORK/check.err"
check "the reference (cyphera) gives NIST's FF1 samples" eq "$(field "$out" reference_passes_nist_samples)" True
for form in bigint js_safe uuid bigint_text uuid_text; do
  check "$form: 10,000 values, the same as the reference's" eq \
    "$(python3 -c "import json,sys; r=json.load(sys.stdin)['$form']; print(r['compared'], r['disagreed'])" <<<"$out")" "10000 0"
done

phase "outside the domain"
check "JavaScript-safe: a negative ID, 2^53: 22003" eq \
  "$(state plain "SELECT idgen.encrypt_id_js_safe(-1, 'invoice')")$(state plain "SELECT idgen.encrypt_id_js_safe(9007199254740992, 'invoice')")$(state plain "SELECT idgen.decrypt_id_js_safe(-5, 'invoice')")" 220032200322003
check "a UUID of another version to encrypt_uuid, a v7 to decrypt_uuid: 22023" eq \
  "$(state plain "SELECT idgen.encrypt_uuid(gen_random_uuid(), 'invoice')")$(state plain "SELECT idgen.decrypt_uuid(uuidv7_next(), 'invoice')")" 2202322023
pub=$(as plain "SELECT idgen.id_to_public(42, 'invoice')")
check "the text form: prefix, version, 20 characters" eq "$(grep -cE '^inv_01[0-9a-hjkmnp-tv-z]{20}$' <<<"$pub")" 1
check "... read back in upper case" eq "$(as plain "SELECT idgen.public_to_id('inv_' || upper('${pub:4}'), 'invoice')")" 42
check "... its prefix too, as the hint says (before: 22P02, another prefix)" eq "$(as plain "SELECT idgen.public_to_id(upper('$pub'), 'invoice')")" 42
check "a text that is no public ID: 22P02, saying what is wrong with it (not a key version)" \
  eq "$(state plain "SELECT idgen.public_to_id('hello world', 'invoice')")|$(grep -c 'key version' "$WORK/state.txt")" "22P02|0"
damaged="${pub:0:10}$([ "${pub:10:1}" = x ] && echo y || echo x)${pub:11}"
check "a damaged one, another prefix, another key's, a cut one, a character outside: 22P02" eq \
  "$(state plain "SELECT idgen.public_to_id('$damaged', 'invoice')")$(state plain "SELECT idgen.public_to_id('acc_${pub:4}', 'invoice')")$(state plain "SELECT idgen.public_to_id('acc_${pub:4}', 'account')")$(state plain "SELECT idgen.public_to_id('${pub:0:25}', 'invoice')")$(state plain "SELECT idgen.public_to_id('${pub:0:25}!', 'invoice')")" \
  22P0222P0222P0222P0222P02
check "a UUID's text form is not a bigint's: 22P02" eq "$(state plain "SELECT idgen.public_to_id(idgen.uuid_to_public(uuidv7_next(), 'invoice'), 'invoice')")" 22P02
check "NULL in, NULL out" eq "$(as plain "SELECT idgen.encrypt_id(NULL, 'invoice') IS NULL AND idgen.encrypt_uuid(NULL, 'invoice') IS NULL AND idgen.id_to_public(NULL, 'invoice') IS NULL")" t

phase "no visible order"
# (Snowflake IDs of today are about 2^60; JavaScript-safe ones, of the js_safe layout, below 2^53.)
for f in "encrypt_id(x, 'invoice')|1700000000000000000" "encrypt_id_js_safe(x, 'invoice')|4000000000000000" \
  "id_to_public(x, 'invoice') COLLATE \"C\"|1700000000000000000"; do
  start=${f#*|} f=${f%|*}
  up=$(as plain "SELECT round(avg((y < next)::int), 4) FROM (SELECT y, lead(y) OVER (ORDER BY x) next
                   FROM (SELECT x, idgen.$f y FROM generate_series($start, $start + 999999) x) e) s")
  check "$f of 1M consecutive IDs: about half of the neighbours increase ($up)" \
    python3 -c "import sys; sys.exit(abs($up - 0.5) > 0.005)"
done
up=$(as plain "SELECT round(avg((y < next)::int), 4) FROM (SELECT y, lead(y) OVER (ORDER BY y0) next
                 FROM (SELECT y0, idgen.encrypt_uuid(y0, 'invoice') y FROM (SELECT uuidv7_next() y0 FROM generate_series(1, 1000000)) u) e) s")
check "encrypt_uuid of 1M consecutive UUIDv7s: about half of the neighbours increase ($up)" python3 -c "import sys; sys.exit(abs($up - 0.5) > 0.005)"
up=$(as plain "SELECT round(avg((x < next)::int), 4) FROM (SELECT x, lead(x) OVER (ORDER BY x) next FROM generate_series(1, 1000000) x) s")
check "control: the IDs themselves all increase ($up)" eq "$up" 1.0000

phase "rotation"
v1=$(as plain "SELECT idgen.id_to_public(7, 'invoice')")
q $P "BEGIN; SELECT idgen.public_key_rotate('invoice'); ROLLBACK" >/dev/null
check "a rolled-back rotation changes nothing" eq "$(as plain "SELECT idgen.id_to_public(7, 'invoice')")" "$v1"
# A session that has used the key keeps it cached; it must see the rotation at its next transaction.
psql -h 127.0.0.1 -p $P -U plain -d postgres -X -q -A -t -c "SELECT idgen.id_to_public(7, 'invoice')" -c "SELECT pg_sleep(3)" \
  -c "SELECT idgen.id_to_public(7, 'invoice')" -c "SELECT idgen.public_to_id('$v1', 'invoice')" >"$WORK/session.txt" 2>&1 &
sleep 1.5
check "an administrator rotates: version 2" eq "$(as admin "SELECT idgen.public_key_rotate('invoice')")" 2
wait
check "a session that had the key cached makes version 2 right after, and still reads version 1" eq \
  "$(sed -n '1s/^inv_\(..\).*/\1/p; 3s/^inv_\(..\).*/\1/p; 4p' "$WORK/session.txt" | tr '\n' ' ')" "01 02 7 "
v2=$(as plain "SELECT idgen.id_to_public(7, 'invoice')")
check "new public IDs have version 2; the old one still decrypts" eq "${v2:4:2}|$(as plain "SELECT idgen.public_to_id('$v1', 'invoice')")" "02|7"
check "the binary forms take a version: version 1's and 2's differ and each comes back" eq \
  "$(as plain "SELECT idgen.encrypt_id(7, 'invoice', 1) <> idgen.encrypt_id(7, 'invoice'), idgen.decrypt_id(idgen.encrypt_id(7, 'invoice', 1), 'invoice', 1)")" "t|7"
check "the current version cannot be dropped (55000)" eq "$(state admin "SELECT idgen.public_key_drop('invoice', 2)")" 55000
as admin "SELECT idgen.public_key_drop('invoice', 1)" >/dev/null
check "once version 1 is dropped its public IDs no longer decrypt (42704, as the reference says), version 2's do" eq \
  "$(state plain "SELECT idgen.public_to_id('$v1', 'invoice')")|$(as plain "SELECT idgen.public_to_id('$v2', 'invoice')")" "42704|7"
check "... the message names the key and the version" grep -q 'public key "invoice" has no version 1' "$WORK/state.txt"
check "... nor its binary form (42704)" eq "$(state plain "SELECT idgen.decrypt_id(1, 'invoice', 1)")" 42704
check "idgen.public_keys: versions, current, dropped, fingerprints; no key column" eq \
  "$(as plain "SELECT string_agg(format('%s:%s:%s:%s', name, version, current, fingerprint IS NOT NULL), ',' ORDER BY name, version) FROM idgen.public_keys")" \
  "account:1:t:t,invoice:1:f:f,invoice:2:t:t"

phase "nobody but a superuser reads a key"
check "a plain role and an administrator may not read the keys' table (42501)" eq \
  "$(state plain "SELECT * FROM idgen_internal.public_keys")$(state admin "SELECT key FROM idgen_internal.public_keys")" 4250142501
check "the view has no key column (42703)" eq "$(state plain "SELECT key FROM idgen.public_keys")" 42703
check "no setting holds a key" eq "$(as plain "SELECT count(*) FROM pg_settings WHERE setting ILIKE '%${K:0:16}%'")" 0
if [ $STATEMENTS = yes ]; then
  check "pg_stat_statements: the administrator's call with a key has it replaced by a parameter" eq \
    "$(q $P "SELECT count(*) FILTER (WHERE query ILIKE '%${K:0:16}%'), count(*) FILTER (WHERE query ILIKE '%public_key_create%') > 0 FROM pg_stat_statements")" "0|t"
  check "... and a plain role sees no other role's statements" eq \
    "$(as plain "SELECT count(*) FROM pg_stat_statements WHERE query ILIKE '%public_key%' AND userid <> 'plain'::regrole")" 0
else
  echo "  skipped: pg_stat_statements is not part of this PostgreSQL build"
fi
as_pg "$PGBIN/pg_dump" -h 127.0.0.1 -p $P -U plain -d postgres >"$WORK/plain.sql" 2>"$WORK/plain.err" || true
check "pg_dump run by a plain role holds no key (it fails on the keys' table)" not_grep -i "${K:0:16}" "$WORK/plain.sql" "$WORK/plain.err"
check "... and says why" grep -q "permission denied" "$WORK/plain.err"
# Objects planted in the caller's schema by another role: the SECURITY DEFINER functions (which
# run as the superuser that owns them) must not call them.
q $P "GRANT CREATE ON SCHEMA public TO mallory; CREATE TABLE public.loot (what text); GRANT ALL ON public.loot TO PUBLIC"
as mallory "CREATE FUNCTION public.hashtext(text) RETURNS integer LANGUAGE plpgsql AS \$\$
              BEGIN INSERT INTO public.loot SELECT 'hashtext as ' || current_user; BEGIN INSERT INTO public.loot SELECT encode(key, 'hex') FROM idgen_internal.public_keys; EXCEPTION WHEN OTHERS THEN END; RETURN 1; END \$\$;
            CREATE FUNCTION public.length(bytea) RETURNS integer LANGUAGE plpgsql AS \$\$ BEGIN INSERT INTO public.loot VALUES ('length'); RETURN 32; END \$\$;
            CREATE FUNCTION public.pg_advisory_xact_lock(integer, integer) RETURNS void LANGUAGE plpgsql AS \$\$ BEGIN INSERT INTO public.loot VALUES ('lock'); END \$\$;
            CREATE FUNCTION public.quote_literal(text) RETURNS text LANGUAGE plpgsql AS \$\$ BEGIN INSERT INTO public.loot VALUES ('quote'); RETURN ''; END \$\$;
            CREATE TABLE public.public_keys (name text)"
psql -h 127.0.0.1 -p $P -U admin -d postgres -X -q -A -t -v ON_ERROR_STOP=1 -c "SET search_path = public, pg_catalog, pg_temp" \
  -c "CREATE TEMP TABLE public_keys (name text)" -c "SELECT idgen.public_key_create('planted', 'pl')" \
  -c "SELECT idgen.public_key_rotate('planted')" -c "SELECT idgen.public_key_drop('planted', 1)" \
  -c "SELECT count(*) FROM idgen.public_keys" >/dev/null 2>"$WORK/planted.err"
check "with objects planted in the caller's schema, the key functions work" test ! -s "$WORK/planted.err"
show_errors "$WORK/planted.err"
check "... and call none of them" eq "$(q $P "SELECT count(*) FROM public.loot")" 0
as admin "SET search_path = public, pg_catalog; SELECT hashtext('x')" >/dev/null
check "control: where search_path is not pinned the planted function runs (as its caller)" eq \
  "$(q $P "SELECT string_agg(what, ',') FROM public.loot")" "hashtext as admin"

phase "what pg_monitor reads: statement texts"
# A key given as a literal stays in the statement's text: pg_stat_activity shows it while the
# session is there, pg_stat_statements keeps it from a DO block (track = all). Given as a bind
# parameter, the texts hold $1. (tests/system/key_texts.py; psycopg 3 binds parameters on the server.)
if [ $STATEMENTS = yes ]; then
  q $P "ALTER SYSTEM SET pg_stat_statements.track = 'all'" && q $P "SELECT pg_reload_conf()" >/dev/null
  q $P "CREATE ROLE watcher LOGIN; GRANT pg_monitor TO watcher"
  out=$("$VENV/bin/python" "$REPO/tests/system/key_texts.py" "host=127.0.0.1 port=$P dbname=postgres" \
    0f0e0d0c0b0a09080706050403020100f0e0d0c0b0a09080706050403020100f 1f1e1d1c1b1a19181716151413121110f1e1d1c1b1a191817161514131211101)
  echo "    $out"
  check "a key as a literal in a DO block: a pg_monitor member reads it in both views (the hazard)" grep -q '"literal": \[[1-9][0-9]*, [1-9]' <<<"$out"
  check "... and the administrator is warned" grep -q '"literal_warning": "the key.s bytes are in the text of the statement"' <<<"$out"
  check "the key as a bind parameter: in neither view, and no warning" grep -q '"bound": \[0, 0\], "bound_warning": null' <<<"$out"
  check "... and it is the key given" eq \
    "$(q $P "SELECT key = '\\x1f1e1d1c1b1a19181716151413121110f1e1d1c1b1a191817161514131211101'::bytea FROM idgen_internal.public_keys WHERE name = 'bound'")" t
  q $P "ALTER SYSTEM RESET pg_stat_statements.track" && q $P "SELECT pg_reload_conf()" >/dev/null
else
  echo "  skipped: pg_stat_statements is not part of this PostgreSQL build"
fi

phase "pg_dump / pg_restore"
before=$(as plain "SELECT idgen.id_to_public(123, 'invoice') || ' ' || idgen.id_to_public(123, 'account')")
as_pg "$PGBIN/pg_dump" -h 127.0.0.1 -p $P -U postgres -Fc -f "$WORK/pubid.dump" postgres
q $P2 "CREATE DATABASE restored"
as_pg "$PGBIN/pg_restore" -h 127.0.0.1 -p $P2 -U postgres -d restored "$WORK/pubid.dump" 2>"$WORK/restore.err" || true
check "restored into another cluster (a superuser's dump holds the keys): the same public IDs" eq \
  "$(qdb $P2 restored "SELECT idgen.id_to_public(123, 'invoice') || ' ' || idgen.id_to_public(123, 'account')")" "$before"
# (A checkpoint first: pg_basebackup's own is spread over minutes after the writes above.)
q $P "CHECKPOINT"
check "a physical standby has the keys (they are WAL-logged rows): the same public IDs there" eq \
  "$(standby_init pubid_standby $P $STANDBY >/dev/null 2>&1 && cluster_start pubid_standby >/dev/null 2>&1 &&
     q $STANDBY "SELECT idgen.id_to_public(123, 'invoice') || ' ' || idgen.id_to_public(123, 'account')")" "$before"
cluster_stop pubid_standby immediate
finish
