#!/usr/bin/env bash
# Online key conversion (idgen.convert_online) under an application's load: a table of 1,000,000
# rows whose integer serial key is near 2^31 - 5M, three tables that reference it (one ON DELETE
# CASCADE, one nullable, one whose primary key is the reference), and pgbench clients inserting,
# updating, deleting and reading through the foreign keys all the while with lock_timeout = 200ms.
# The conversion is cancelled once and resumed, the server killed (-9) once and resumed. Then:
# the application saw no error (no lock timeout, no foreign key violation, no duplicate key), no
# lock wait of 1 s was logged, every row of every table equals the application's own record of
# what it did (mirror tables it wrote in the same transactions), every foreign key is there and
# valid, and the key's sequence goes on past 2^31.
# Control: the same load against convert_to_snowflake(widen => true) inside a transaction sees
# the application's statements time out, which is what the "no error" check would see.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
cluster_init online $PORT "idgen.worker_id = 5" "shared_buffers = '256MB'" "max_wal_size = '2GB'" \
  "log_lock_waits = on" "deadlock_timeout = '1s'" "log_line_prefix = '%m [%p] %a '" "max_worker_processes = 16"
cluster_start online
PGBENCH=$PGBIN/pgbench
APPLOG=$WORK/online_app
rm -rf "$APPLOG" && mkdir -p "$APPLOG"
trap 'touch "$APPLOG/stop"; cluster_stop online immediate' EXIT
ROWS=${ONLINE_ROWS:-1000000}

# schema ROWS: the four tables, and the application's mirrors of them.
schema() {
  local ROWS=$1
  q $PORT "SET client_min_messages = warning;
    DROP TABLE IF EXISTS profile, notes, orders, acct, mirror_acct, mirror_orders, mirror_notes, mirror_profile CASCADE;
    DROP SEQUENCE IF EXISTS acct_id_seq;
    CREATE TABLE acct (id serial PRIMARY KEY, name text NOT NULL, n int);
    SELECT setval('acct_id_seq', 2147483647 - 5000000);
    CREATE TABLE orders (id serial PRIMARY KEY, acct_id int NOT NULL REFERENCES acct ON DELETE CASCADE, amount int NOT NULL);
    CREATE INDEX orders_acct ON orders (acct_id);
    CREATE TABLE notes (id bigserial PRIMARY KEY, acct_id int REFERENCES acct, body text);
    CREATE INDEX notes_acct ON notes (acct_id) WHERE acct_id IS NOT NULL;
    CREATE TABLE profile (acct_id int PRIMARY KEY REFERENCES acct, bio text);
    COMMENT ON COLUMN acct.id IS 'the account';
    INSERT INTO acct (name, n) SELECT 'a' || g, g FROM generate_series(1, $ROWS) g;
    INSERT INTO orders (acct_id, amount) SELECT 2147483647 - 5000000 + 1 + (g * 7) % $ROWS, g FROM generate_series(1, $ROWS / 2) g;
    INSERT INTO notes (acct_id, body) SELECT CASE WHEN g % 5 = 0 THEN NULL ELSE 2147483647 - 5000000 + 1 + (g * 13) % $ROWS END, 'n'
      FROM generate_series(1, $ROWS / 5) g;
    INSERT INTO profile SELECT id, 'p' FROM acct WHERE id % 10 = 0;
    -- The application's own record of what it did: the same rows, written in its transactions.
    CREATE TABLE mirror_acct AS SELECT id::bigint, name, n FROM acct;
    CREATE TABLE mirror_orders AS SELECT id, acct_id::bigint, amount FROM orders;
    CREATE TABLE mirror_notes AS SELECT id, acct_id::bigint, body FROM notes;
    CREATE TABLE mirror_profile AS SELECT acct_id::bigint, bio FROM profile;
    CREATE INDEX ON mirror_orders (id); CREATE INDEX ON mirror_orders (acct_id); CREATE INDEX ON mirror_acct (id);
    CREATE INDEX ON mirror_notes (acct_id); CREATE INDEX ON mirror_profile (acct_id);
    ANALYZE" >/dev/null
}

LO=$((2147483647 - 5000000 + 1))
HI=$((LO + ROWS - 1))
cat >"$WORK/new.sql" <<EOF
\set r random(1, 1000)
BEGIN;
INSERT INTO acct (name, n) VALUES ('new', :r) RETURNING id AS a \gset
INSERT INTO mirror_acct (id, name, n) VALUES (:a, 'new', :r);
INSERT INTO orders (acct_id, amount) VALUES (:a, :r) RETURNING id AS o \gset
INSERT INTO mirror_orders (id, acct_id, amount) VALUES (:o, :a, :r);
INSERT INTO notes (acct_id, body) VALUES (:a, 'new') RETURNING id AS t \gset
INSERT INTO mirror_notes (id, acct_id, body) VALUES (:t, :a, 'new');
INSERT INTO profile (acct_id, bio) VALUES (:a, 'new');
INSERT INTO mirror_profile (acct_id, bio) VALUES (:a, 'new');
COMMIT;
EOF
cat >"$WORK/update.sql" <<EOF
\set k random($LO, $HI)
BEGIN;
UPDATE orders SET amount = amount + 1 WHERE acct_id = :k;
UPDATE mirror_orders SET amount = amount + 1 WHERE acct_id = :k;
UPDATE acct SET n = n + 1 WHERE id = :k;
UPDATE mirror_acct SET n = n + 1 WHERE id = :k;
COMMIT;
EOF
cat >"$WORK/delete.sql" <<EOF
\set k random($LO, $HI)
BEGIN;
DELETE FROM notes WHERE acct_id = :k;
DELETE FROM mirror_notes WHERE acct_id = :k;
DELETE FROM profile WHERE acct_id = :k;
DELETE FROM mirror_profile WHERE acct_id = :k;
DELETE FROM acct WHERE id = :k;
DELETE FROM mirror_orders WHERE acct_id = :k;
DELETE FROM mirror_acct WHERE id = :k;
COMMIT;
EOF
cat >"$WORK/read.sql" <<EOF
\set k random($LO, $HI)
SELECT a.name, count(o.id), sum(o.amount) FROM acct a JOIN orders o ON o.acct_id = a.id WHERE a.id = :k GROUP BY a.name;
SELECT count(*) FROM notes n JOIN acct a ON a.id = n.acct_id WHERE n.acct_id = :k;
EOF

# The application: pgbench clients at a steady rate, in runs of 3 s until $WORK/stop exists; every
# run's log kept. lock_timeout = 200ms on its side: any wait longer than that is an error.
app_start() {
  rm -f "$APPLOG/stop"
  (
    i=0
    until [ -e "$APPLOG/stop" ]; do
      i=$((i + 1))
      PGAPPNAME=app PGOPTIONS="-c lock_timeout=200ms" "$PGBENCH" -h 127.0.0.1 -p $PORT -U postgres -n -c 4 -j 2 -R 200 -T 3 \
        -f "$WORK/new.sql@2" -f "$WORK/update.sql@3" -f "$WORK/delete.sql@1" -f "$WORK/read.sql@4" postgres \
        >"$APPLOG/$1_$i.log" 2>&1 || echo "run $i exited $?" >>"$APPLOG/$1_failed"
    done
  ) &
  APP=$!
}
app_stop() { touch "$APPLOG/stop"; wait $APP; }
# app_clean NAME: no run of the application failed, none logged an error.
app_clean() {
  [ ! -e "$APPLOG/$1_failed" ] && ! grep -l "ERROR\|error\|aborted" "$APPLOG"/"$1"_*.log >/dev/null ||
    { cat "$APPLOG/$1_failed" 2>/dev/null >&2; show_errors $(grep -l "ERROR\|error\|aborted" "$APPLOG"/"$1"_*.log | head -2); return 1; }
}
app_transactions() { cat "$APPLOG"/"$1"_*.log | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }'; }

same_rows() {
  q $PORT "SELECT (SELECT count(*) FROM (SELECT id, name, n FROM acct EXCEPT ALL SELECT * FROM mirror_acct) d)
              + (SELECT count(*) FROM (SELECT * FROM mirror_acct EXCEPT ALL SELECT id, name, n FROM acct) d)
              + (SELECT count(*) FROM (SELECT id, acct_id, amount FROM orders EXCEPT ALL SELECT * FROM mirror_orders) d)
              + (SELECT count(*) FROM (SELECT * FROM mirror_orders EXCEPT ALL SELECT id, acct_id, amount FROM orders) d)
              + (SELECT count(*) FROM (SELECT id, acct_id, body FROM notes EXCEPT ALL SELECT * FROM mirror_notes) d)
              + (SELECT count(*) FROM (SELECT * FROM mirror_notes EXCEPT ALL SELECT id, acct_id, body FROM notes) d)
              + (SELECT count(*) FROM (SELECT acct_id, bio FROM profile EXCEPT ALL SELECT * FROM mirror_profile) d)
              + (SELECT count(*) FROM (SELECT * FROM mirror_profile EXCEPT ALL SELECT acct_id, bio FROM profile) d)"
}

q $PORT "CREATE EXTENSION pg_idgen" >/dev/null
phase "control: the offline conversion (convert_to_snowflake, widen) under the same load"
schema $((ROWS / 10))
app_start control
sleep 2
# Inside a transaction, the offline conversion's locks are held until COMMIT: the application's
# statements meanwhile wait for them and time out (lock_timeout = 200ms).
psql -h 127.0.0.1 -p $PORT -U postgres -X -q -v ON_ERROR_STOP=1 >/dev/null 2>"$WORK/control.err" <<EOF
BEGIN;
SELECT count(*) FROM idgen.convert_to_snowflake('acct', 'id', widen => true);
SELECT pg_sleep(4);
COMMIT;
EOF
app_stop
check "control: the application's statements timed out behind the offline conversion" \
  grep -q "canceling statement due to lock timeout" -r "$APPLOG" --include="control_*"

phase "the online conversion of $ROWS rows and three referencing tables, under load"
schema $ROWS
before=$(q $PORT "SELECT count(*) FROM acct")
app_start online
sleep 2
check "it starts, its steps listed" eq "$(q $PORT "SELECT count(*) > 20 FROM idgen.convert_online('acct', 'id', onto => 'sequence', batch_rows => 1000)" 2>"$WORK/start.err")" t
[ "$FAILS" = 0 ] || { app_stop; cat "$WORK/start.err"; finish; }
check "the copy begins" wait_until $PORT "SELECT rows_done > 0 FROM idgen.online_conversions" "the copy" 120
check "cancelled (pg_cancel_backend of its worker): stopped" eq \
  "$(q $PORT "SELECT pg_cancel_backend(worker_pid) FROM idgen.online_conversions")" t
check "... and not running" wait_until $PORT "SELECT NOT running FROM idgen.online_conversions" "the worker to end" 60
check "... its copy is part done" eq "$(q $PORT "SELECT rows_done > 0 AND next_step < steps FROM idgen.online_conversions")" t
check "resumed" eq "$(q $PORT "SELECT idgen.convert_online_resume('acct') > 0")" t
# A transaction with an old snapshot holds the first index build (CREATE INDEX CONCURRENTLY waits
# for it) with its index there but not valid: the kill leaves that behind, for the resume to find.
psql -h 127.0.0.1 -p $PORT -U postgres -X -q -c "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM mirror_notes; SELECT pg_sleep(600)" >/dev/null 2>&1 &
check "it gets to the first index build, which waits" wait_until $PORT \
  "SELECT doing LIKE 'concurrently%' AND EXISTS (SELECT FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname LIKE 'idgen_online_%' AND NOT i.indisvalid) FROM idgen.online_conversions" "the index build" 300
app_stop
check "the application saw no error before the crash" app_clean online
phase "kill -9 of the server mid-conversion"
kill_server online
cluster_start online
wait_ready $PORT
app_start after
# Nobody resumes it: the server's resumer starts its worker again (as its role), which finds the
# invalid index the kill left, drops it and builds it again.
check "after the crash, it goes on by itself (the resumer's log line)" wait_until $PORT \
  "SELECT pg_read_file('server.log') ~ 'online conversion [0-9]+ resumed \\(worker'" "the resumer" 60
check "done" wait_until $PORT "SELECT state = 'done' FROM idgen.online_conversions" "the conversion's end" 300
sleep 2
app_stop
check "the application saw no error after the crash" app_clean after
check "the application worked throughout ($(app_transactions online) + $(app_transactions after) transactions)" \
  test "$(app_transactions online)" -gt 0 -a "$(app_transactions after)" -gt 0
check "no statement of the application waited 1 s for a lock (log_lock_waits)" not_grep "\] app .*still waiting for" "$(cluster_dir online)/server.log"
check "locks stronger than ROW EXCLUSIVE held at most 1 s in total" eq \
  "$(q $PORT "SELECT lock_ms_total < 1000 FROM idgen.online_conversions")" t
q $PORT "SELECT 'lock ms total ' || round(lock_ms_total::numeric, 1) || ', max ' || round(lock_ms_max::numeric, 1) || ', attempts ' || lock_attempts FROM idgen.online_conversions" | sed 's/^/    /'
check "every key and referencing column is bigint" eq "$(q $PORT "SELECT string_agg(attrelid::regclass || '.' || attname || ':' || format_type(atttypid, atttypmod), ' ' ORDER BY attrelid::regclass::text)
  FROM pg_attribute WHERE attrelid IN ('acct'::regclass, 'orders'::regclass, 'notes'::regclass, 'profile'::regclass)
   AND attname IN ('id', 'acct_id') AND attrelid::regclass::text || attname <> 'ordersid' AND attrelid::regclass::text || attname <> 'notesid'")" \
  "acct.id:bigint notes.acct_id:bigint orders.acct_id:bigint profile.acct_id:bigint"
check "every row equals the application's record of what it did" eq "$(same_rows)" 0
check "rows were added and deleted meanwhile" eq "$(q $PORT "SELECT count(*) <> $before AND count(*) FILTER (WHERE id > $HI) > 0 FROM acct")" t
check "every foreign key is there, validated, with its action, and holds" eq \
  "$(q $PORT "SELECT string_agg(conname || ':' || convalidated || ':' || confdeltype::text, ' ' ORDER BY conname) FROM pg_constraint WHERE contype = 'f' AND confrelid = 'acct'::regclass")|$(q $PORT \
     "SELECT (SELECT count(*) FROM orders o WHERE NOT EXISTS (SELECT FROM acct a WHERE a.id = o.acct_id))
           + (SELECT count(*) FROM notes o WHERE o.acct_id IS NOT NULL AND NOT EXISTS (SELECT FROM acct a WHERE a.id = o.acct_id))
           + (SELECT count(*) FROM profile o WHERE NOT EXISTS (SELECT FROM acct a WHERE a.id = o.acct_id))")" \
  "notes_acct_id_fkey:true:a orders_acct_id_fkey:true:c profile_acct_id_fkey:true:a|0"
check "indexes, keys and the comment kept, under their names" eq \
  "$(q $PORT "SELECT string_agg(indexrelid::regclass::text, ' ' ORDER BY indexrelid::regclass::text) FROM pg_index WHERE indrelid IN ('acct'::regclass, 'orders'::regclass, 'notes'::regclass, 'profile'::regclass) AND indisvalid")|$(q $PORT "SELECT col_description('acct'::regclass, (SELECT attnum FROM pg_attribute WHERE attrelid = 'acct'::regclass AND attname = 'id'))")" \
  "acct_pkey notes_acct notes_pkey orders_acct orders_pkey profile_pkey|the account"
check "nothing of the conversion is left (columns, triggers, constraints, invalid indexes)" eq \
  "$(q $PORT "SELECT (SELECT count(*) FROM pg_attribute WHERE attname LIKE '%idgen%' AND NOT attisdropped AND attrelid IN ('acct'::regclass, 'orders'::regclass, 'notes'::regclass, 'profile'::regclass))
     + (SELECT count(*) FROM pg_trigger WHERE tgname LIKE '%idgen_online%') + (SELECT count(*) FROM pg_constraint WHERE conname LIKE 'idgen_online%')
     + (SELECT count(*) FROM pg_class WHERE relname LIKE 'idgen_online%')")" 0
q $PORT "SELECT setval('acct_id_seq', 2147483647)" >/dev/null
check "the key's sequence goes on past 2^31" eq "$(q $PORT "INSERT INTO acct (name) VALUES ('past') RETURNING id")" 2147483648
# What no conversion that adds a column can keep: a widened column is now the last of its table.
check "the widened columns come last in SELECT * (said by its WARNING and docs)" eq \
  "$(q $PORT "SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'profile'::regclass AND attnum > 0 AND NOT attisdropped")" "bio,acct_id"
finish
