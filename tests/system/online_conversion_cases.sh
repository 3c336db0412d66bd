#!/usr/bin/env bash
# idgen.convert_online case by case (the load, the interruptions and the lock times are
# online_conversion.sh's): each target (snowflake_next(), the adopted sequence, the widened
# sequence) from serial and IDENTITY keys; the dry run; stop and abort; every refusal with its
# SQLSTATE; other roles (they see no one else's conversion and can touch none; the worker runs as
# the role that started it).
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
cluster_init online_cases $PORT "idgen.worker_id = 6" "max_worker_processes = 16"
cluster_start online_cases
trap 'cluster_stop online_cases immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen" >/dev/null

# state SQLSTATE-OR-ok SQL: runs SQL as postgres (or as ROLE=...), prints ok or the error's SQLSTATE.
state() {
  local out
  out=$(psql -h 127.0.0.1 -p $PORT -U "${ROLE:-postgres}" -d postgres -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "$1" 2>&1 >/dev/null || true)
  out=$(echo "$out" | sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\):.*/\1/p' | head -1)
  echo "${out:-ok}"
}
# done_within TABLE: true once the conversion of TABLE is done, false if it fails, stops or is
# aborted, or after 60 s (saying so). It goes by the state the worker stores; each time the view
# says failed or stopped while the stored state does not, that is written to $view_said (a check
# at the end counts them): the view said 'stopped' for an instant while the worker ran on to
# 'done' (the reader's snapshot older than the worker's last commit; see the phase "what the
# view says of a conversion that ended after the reader's snapshot").
view_said=$(mktemp)
done_within() {
  local i row stored view
  for i in $(seq 1 300); do
    row=$(q $PORT "SELECT c.state || ' ' || v.state || ' ' || coalesce(v.error, '(none)') || ', worker '
                          || coalesce(c.worker_pid::text, '(none)') || CASE WHEN v.running THEN ' in' ELSE ' not in' END
                          || ' pg_stat_activity as ' || coalesce((SELECT string_agg(coalesce(a.backend_type, '(null)'), ',')
                                                                  FROM pg_stat_activity a WHERE a.pid = c.worker_pid), 'nothing')
                     FROM idgen_internal.online_conversions c JOIN idgen.online_conversions v USING (id)
                    WHERE v.table_name = '$1' ORDER BY c.id DESC LIMIT 1")
    read -r stored view _ <<<"$row"
    case $stored in
      done) return 0 ;;
      failed | stopped | aborted) echo "    stored state, view's state, error, worker: $row" >&2; return 1 ;;
    esac
    case $view in
      failed | stopped) echo "    the view said $view while the stored state was: $row" | tee -a "$view_said" >&2 ;;
    esac
    sleep 0.2
  done
  echo "    waited 60 s for the conversion of $1 (last: $row)" >&2
  return 1
}

phase "onto snowflake: a serial key"
q $PORT "CREATE TABLE s1 (id serial PRIMARY KEY, v text, CONSTRAINT s1_positive CHECK (id > 0 OR v = 'id'));
  COMMENT ON CONSTRAINT s1_positive ON s1 IS 'no zero';
  CREATE TABLE s1_child (id serial PRIMARY KEY, s1_id int REFERENCES s1 ON UPDATE CASCADE, w int);
  INSERT INTO s1 (v) SELECT 'v' || g FROM generate_series(1, 3000) g;
  INSERT INTO s1_child (s1_id, w) SELECT 1 + g % 3000, g FROM generate_series(1, 6000) g;
  GRANT SELECT (id, v) ON s1 TO PUBLIC;
  CREATE INDEX s1_child_s1 ON s1_child (s1_id);
  CREATE UNIQUE INDEX s1_child_pair ON s1_child (s1_id, w) NULLS NOT DISTINCT;
  COMMENT ON CONSTRAINT s1_pkey ON s1 IS 'the key'; COMMENT ON INDEX s1_pkey IS 'its index';
  COMMENT ON CONSTRAINT s1_child_s1_id_fkey ON s1_child IS 'the parent'; COMMENT ON INDEX s1_child_s1 IS 'by parent'" >/dev/null
check "the dry run lists the steps and changes nothing" eq \
  "$(q $PORT "SELECT count(*) > 10 FROM idgen.convert_online('s1', 'id', dry_run => true)")|$(q $PORT \
     "SELECT count(*) FROM pg_attribute WHERE attrelid = 's1'::regclass AND attname LIKE '%idgen%'")|$(q $PORT "SELECT count(*) FROM idgen.online_conversions")" "t|0|0"
q $PORT "SELECT count(*) FROM idgen.convert_online('s1', 'id')" >/dev/null 2>&1
check "converted" done_within public.s1
check "the key and its reference are bigint, the key defaults to snowflake_next(), old keys kept" eq \
  "$(q $PORT "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 's1'::regclass AND attname = 'id'") $(q $PORT \
     "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 's1_child'::regclass AND attname = 's1_id'") $(q $PORT \
     "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 's1'::regclass") $(q $PORT "SELECT min(id) || '-' || max(id) FROM s1")" \
  "bigint bigint snowflake_next() 1-3000"
check "a new row's key is a Snowflake ID of this node; its reference and ON UPDATE CASCADE work" eq \
  "$(q $PORT "WITH n AS (INSERT INTO s1 (v) VALUES ('new') RETURNING id) SELECT id_worker_id(id) FROM n;
              INSERT INTO s1_child (s1_id) SELECT max(id) FROM s1; UPDATE s1 SET id = 10000000 WHERE id = 5;
              SELECT count(*) FROM s1_child WHERE s1_id = 10000000")" "6
2"
check "the indexes under their names, on the new columns; the comments of the key's constraint and index, the foreign key and an index kept" eq \
  "$(q $PORT "SELECT string_agg(pg_get_indexdef(indexrelid), '; ' ORDER BY indexrelid::regclass::text) FROM pg_index WHERE indrelid IN ('s1'::regclass, 's1_child'::regclass)")|$(q $PORT \
     "SELECT concat_ws(',', obj_description((SELECT oid FROM pg_constraint WHERE conname = 's1_pkey'), 'pg_constraint'), obj_description('s1_pkey'::regclass, 'pg_class'),
                       obj_description((SELECT oid FROM pg_constraint WHERE conname = 's1_child_s1_id_fkey'), 'pg_constraint'), obj_description('s1_child_s1'::regclass, 'pg_class'))")" \
  "CREATE UNIQUE INDEX s1_child_pair ON public.s1_child USING btree (s1_id, w) NULLS NOT DISTINCT; CREATE UNIQUE INDEX s1_child_pkey ON public.s1_child USING btree (id); CREATE INDEX s1_child_s1 ON public.s1_child USING btree (s1_id); CREATE UNIQUE INDEX s1_pkey ON public.s1 USING btree (id)|the key,its index,the parent,by parent"
check "the CHECK on the key (a literal in it holds the key's name): on the new column, validated, under its name and comment, and it holds (23514)" eq \
  "$(q $PORT "SELECT conname || ' ' || pg_get_constraintdef(oid) || ' ' || convalidated || ' ' || obj_description(oid, 'pg_constraint') FROM pg_constraint WHERE conrelid = 's1'::regclass AND contype = 'c'")|$(state "UPDATE s1 SET id = -1 WHERE id = 7")" \
  "s1_positive CHECK (((id > 0) OR (v = 'id'::text))) true no zero|23514"
check "the column privilege is kept" eq "$(q $PORT "SELECT has_column_privilege('public', 's1', 'id', 'SELECT')")" t
check "the sequence is kept, owned by no column" eq "$(q $PORT "SELECT count(*) FROM pg_class WHERE relname = 's1_id_seq'")|$(q $PORT "SELECT pg_get_serial_sequence('s1', 'id') IS NULL")" "1|t"

phase "onto adopted: an IDENTITY key"
q $PORT "CREATE TABLE a1 (id int GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, v text);
  CREATE TABLE a1_child (a1_id int NOT NULL REFERENCES a1, w int);
  INSERT INTO a1 (v) SELECT 'v' FROM generate_series(1, 2000) g;
  INSERT INTO a1_child SELECT id, 1 FROM a1" >/dev/null
q $PORT "SELECT count(*) FROM idgen.convert_online('a1', 'id', onto => 'adopted')" >/dev/null 2>&1
check "converted" done_within public.a1
check "still an IDENTITY column, now bigint, its sequence adopted; a new row's key is a Snowflake ID" eq \
  "$(q $PORT "SELECT attidentity::text || format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'a1'::regclass AND attname = 'id'") $(q $PORT \
     "SELECT count(*) FROM idgen.adopted_sequences WHERE seq = pg_get_serial_sequence('a1', 'id')::regclass") $(q $PORT \
     "WITH n AS (INSERT INTO a1 (v) VALUES ('new') RETURNING id) SELECT id_worker_id(id) FROM n")" "dbigint 1 6"

phase "onto sequence: an IDENTITY ALWAYS key goes on from its last value"
q $PORT "CREATE TABLE q1 (id int GENERATED ALWAYS AS IDENTITY (START WITH 100) PRIMARY KEY, v text);
  INSERT INTO q1 (v) SELECT 'v' FROM generate_series(1, 500) g" >/dev/null
q $PORT "SELECT count(*) FROM idgen.convert_online('q1', 'id', onto => 'sequence')" >/dev/null 2>&1
check "converted" done_within public.q1
check "IDENTITY ALWAYS, bigint, the next key follows the last" eq \
  "$(q $PORT "SELECT attidentity::text || format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'q1'::regclass AND attname = 'id'") $(q $PORT \
     "INSERT INTO q1 (v) VALUES ('new') RETURNING id")" "abigint 600"

phase "NOT VALID constraints: a foreign key stays so; a CHECK is refused (the copy would check it)"
q $PORT "CREATE TABLE nv (id serial PRIMARY KEY); INSERT INTO nv SELECT FROM generate_series(1, 50);
  CREATE TABLE nv_child (nv_id int); INSERT INTO nv_child VALUES (1), (999);
  ALTER TABLE nv_child ADD CONSTRAINT nv_child_fk FOREIGN KEY (nv_id) REFERENCES nv NOT VALID;
  CREATE TABLE nv_check (id serial PRIMARY KEY, n int); INSERT INTO nv_check (n) VALUES (1), (20);
  ALTER TABLE nv_check ADD CONSTRAINT nv_small CHECK (n < 10) NOT VALID" >/dev/null
q $PORT "SELECT count(*) FROM idgen.convert_online('nv', 'id')" >/dev/null 2>&1
check "converted, with a row that breaks its NOT VALID foreign key" done_within public.nv
check "the foreign key: on the new column, still NOT VALID, enforced on new rows (23503)" eq \
  "$(q $PORT "SELECT conname || ':' || convalidated || ':' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'nv_child_fk'")|$(state "INSERT INTO nv_child VALUES (1000)")|$(q $PORT "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'nv_child'::regclass AND attname = 'nv_id'")" \
  "nv_child_fk:false:FOREIGN KEY (nv_id) REFERENCES nv(id) NOT VALID|23503|bigint"
check "a NOT VALID CHECK, on another column too: refused before anything (0A000)" eq \
  "$(state "SELECT idgen.convert_online('nv_check', 'id')")|$(q $PORT "SELECT count(*) FROM pg_attribute WHERE attrelid = 'nv_check'::regclass AND attname LIKE '%idgen%'")" "0A000|0"
check "the control: validated (after the bad row is mended), it converts" eq \
  "$(q $PORT "UPDATE nv_check SET n = 2 WHERE n = 20; ALTER TABLE nv_check VALIDATE CONSTRAINT nv_small; SELECT count(*) > 0 FROM idgen.convert_online('nv_check', 'id')" 2>/dev/null | tail -1)|$(done_within public.nv_check && echo done)" "t|done"

phase "stop and abort"
q $PORT "CREATE TABLE b1 (id serial PRIMARY KEY, v text); INSERT INTO b1 (v) SELECT 'v' FROM generate_series(1, 2000) g" >/dev/null
before=$(q $PORT "SELECT md5(string_agg(format('%s %s %s', attname, atttypid, attnum), ',' ORDER BY attnum)) FROM pg_attribute WHERE attrelid = 'b1'::regclass AND NOT attisdropped")
# An old snapshot holds its first index build; it waits there until stopped.
psql -h 127.0.0.1 -p $PORT -U postgres -X -q -c "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM s1; SELECT pg_sleep(60)" >/dev/null 2>&1 &
blocker=$!
q $PORT "SELECT count(*) FROM idgen.convert_online('b1', 'id')" >/dev/null 2>&1
for i in $(seq 1 300); do
  [ "$(q $PORT "SELECT doing LIKE 'concurrently%' FROM idgen.online_conversions WHERE table_name = 'public.b1'")" = t ] && break
  sleep 0.2
done
check "abort refused while it runs (55006)" eq "$(state "SELECT idgen.convert_online_abort('b1')")" 55006
check "resume refused while it runs (55006)" eq "$(state "SELECT idgen.convert_online_resume('b1')")" 55006
check "a wait that outlasts its timeout (57014)" eq "$(state "CALL idgen.convert_online_wait('b1', '1 s')")" 57014
check "stopped" eq "$(q $PORT "SELECT idgen.convert_online_stop('b1')")" t
q $PORT "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()" >/dev/null
wait $blocker 2>/dev/null || true
for i in $(seq 1 100); do [ "$(q $PORT "SELECT running FROM idgen.online_conversions WHERE table_name = 'public.b1'")" = f ] && break; sleep 0.2; done
check "stopped: its state says so" eq "$(q $PORT "SELECT state FROM idgen.online_conversions WHERE table_name = 'public.b1'")" stopped
# Stopped on purpose: a restart does not start it again (the resumer has looked once its line is
# in the log).
looked=$(q $PORT "SELECT regexp_count(pg_read_file('server.log'), 'looked for online conversions to resume')")
cluster_stop online_cases fast
cluster_start online_cases
wait_ready $PORT
check "stopped on purpose, it stays stopped across a restart" eq \
  "$(wait_until $PORT "SELECT regexp_count(pg_read_file('server.log'), 'looked for online conversions to resume') > $looked" "the resumer" 60 && q $PORT "SELECT state || ' ' || running FROM idgen.online_conversions WHERE table_name = 'public.b1'")" "stopped false"
check "a wait for a stopped conversion (55000)" eq "$(state "CALL idgen.convert_online_wait('b1')")" 55000
check "a second conversion of the table is refused meanwhile (55006)" eq "$(state "SELECT idgen.convert_online('b1', 'id')")" 55006
check "aborted: the table as it was, nothing of the conversion left" eq \
  "$(q $PORT "SELECT count(*) > 0 FROM idgen.convert_online_abort('b1')")|$(q $PORT "SELECT md5(string_agg(format('%s %s %s', attname, atttypid, attnum), ',' ORDER BY attnum)) FROM pg_attribute WHERE attrelid = 'b1'::regclass AND NOT attisdropped")|$(q $PORT \
     "SELECT (SELECT count(*) FROM pg_trigger WHERE tgrelid = 'b1'::regclass) + (SELECT count(*) FROM pg_constraint WHERE conrelid = 'b1'::regclass AND conname LIKE 'idgen%') + (SELECT count(*) FROM pg_index WHERE indrelid = 'b1'::regclass)")|$(q $PORT "SELECT state FROM idgen.online_conversions WHERE table_name = 'public.b1'")" \
  "t|$before|1|aborted"
check "after the abort it converts" eq "$(q $PORT "SELECT count(*) > 0 FROM idgen.convert_online('b1', 'id')" 2>/dev/null)" t
check "converted" done_within public.b1

phase "a crash of its worker: the postmaster reinitialises, and the conversion goes on by itself"
q $PORT "CREATE TABLE k1 (id serial PRIMARY KEY, pad text); INSERT INTO k1 (pad) SELECT repeat('x', 500) FROM generate_series(1, 300)" >/dev/null
# A batch a second: still copying when it is killed; the resumed worker copies without a pause.
q $PORT "SELECT count(*) FROM idgen.convert_online('k1', 'id', batch_rows => 10, batch_pause => '1s')" >/dev/null 2>&1
wait_until $PORT "SELECT rows_done > 0 FROM idgen.online_conversions WHERE table_name = 'public.k1'" "the copy of k1" 60 >/dev/null
q $PORT "UPDATE idgen_internal.online_conversions SET batch_pause = '0' WHERE relation_name = 'public.k1'" >/dev/null
resumed=$(q $PORT "SELECT regexp_count(pg_read_file('server.log'), 'online conversion [0-9]+ resumed')")
kill -9 "$(q $PORT "SELECT worker_pid FROM idgen.online_conversions WHERE table_name = 'public.k1'")"
sleep 1
wait_ready $PORT
check "after the crash, resumed by the resumer (its log line), and done" eq \
  "$(wait_until $PORT "SELECT regexp_count(pg_read_file('server.log'), 'online conversion [0-9]+ resumed') > $resumed" "the resumer" 60 && echo resumed)|$(done_within public.k1 && q $PORT "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'k1'::regclass AND attname = 'id'")" "resumed|bigint"

phase "what the view says of a conversion that ended after the reader's snapshot"
# A reader's snapshot is older than the worker's last commit when the worker records 'done',
# commits and exits while the reader's statement (or REPEATABLE READ transaction) runs: its row
# says running and its worker is gone. The view said 'stopped' then (seen as an instant
# 'stopped' in this test; convert_online_wait would raise 55000 for a conversion that ended
# well). Made certain here: a REPEATABLE READ transaction takes its snapshot while the worker
# waits for the swap's lock (a session holds ACCESS SHARE on the table, idle in its transaction,
# taken during the copy: it blocks neither the copy nor the index build; the index build waits
# for older snapshots, the reason the snapshot is taken after it), lets that session go, waits
# for the worker's process to end, and reads the view.
q $PORT "CREATE TABLE snap (id serial PRIMARY KEY, pad text); INSERT INTO snap (pad) SELECT repeat('x', 500) FROM generate_series(1, 300)" >/dev/null
# A block a batch, 300 ms apart: copying for seconds, whatever the machine's speed.
q $PORT "SELECT count(*) FROM idgen.convert_online('snap', 'id', batch_rows => 10, batch_pause => '300ms')" >/dev/null 2>&1
wait_until $PORT "SELECT rows_done > 0 FROM idgen.online_conversions WHERE table_name = 'public.snap'" "the copy of snap" 60 >/dev/null
release=$(mktemp -u)
printf 'BEGIN;\nLOCK TABLE snap IN ACCESS SHARE MODE;\n\\! for i in $(seq 1 600); do [ -e %s ] && break; sleep 0.1; done\nCOMMIT;\n' "$release" |
  PGAPPNAME=snap_blocker psql -h 127.0.0.1 -p $PORT -U postgres -d postgres -Xq >/dev/null 2>&1 &
blocker=$!
wait_until $PORT "SELECT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'snap_blocker' AND state = 'idle in transaction')" "the session that holds snap" 60 >/dev/null
q $PORT "UPDATE idgen_internal.online_conversions SET batch_pause = '0' WHERE relation_name = 'public.snap'" >/dev/null
wait_until $PORT "SELECT lock_attempts > 1 AND doing LIKE 'lock: LOCK TABLE public.snap IN ACCESS EXCLUSIVE MODE; ALTER TABLE public.snap DROP CONSTRAINT%' FROM idgen.online_conversions WHERE table_name = 'public.snap'" "the swap of snap to wait for its lock" 60 >/dev/null
snap=$(psql -h 127.0.0.1 -p $PORT -U postgres -d postgres -XAtq -v ON_ERROR_STOP=1 2>&1 <<SQL || true
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT state || ' ' || running FROM idgen.online_conversions WHERE table_name = 'public.snap';
\! touch $release
-- pg_stat_activity is read once per transaction: cleared at each look, while the snapshot stays.
DO \$\$
DECLARE
    p integer := (SELECT worker_pid FROM idgen_internal.online_conversions WHERE relation_name = 'public.snap');
BEGIN
    FOR i IN 1..600 LOOP
        PERFORM pg_stat_clear_snapshot();
        EXIT WHEN NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = p);
        IF i = 600 THEN RAISE EXCEPTION 'waited 60 s for the worker % of snap to end', p; END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
END \$\$;
SELECT (SELECT c.state FROM idgen_internal.online_conversions c WHERE c.relation_name = 'public.snap') || ' '
       || v.state || ' ' || v.running FROM idgen.online_conversions v WHERE v.table_name = 'public.snap';
COMMIT;
SQL
)
touch "$release"
wait "$blocker" || true
rm -f "$release"
check "read in a snapshot taken while it ran: running, then (its worker gone, the snapshot's row still running) done" eq \
  "$(echo $snap)" "running true running done false"
check "... and done as the stored state says" done_within public.snap

phase "a second worker for a conversion that runs ends at once; stop signals the one that runs it"
q $PORT "CREATE TABLE two (id serial PRIMARY KEY, pad text); INSERT INTO two (pad) SELECT repeat('x', 500) FROM generate_series(1, 300)" >/dev/null
q $PORT "SELECT count(*) FROM idgen.convert_online('two', 'id', batch_rows => 10, batch_pause => '200ms')" >/dev/null 2>&1
wait_until $PORT "SELECT rows_done > 0 FROM idgen.online_conversions WHERE table_name = 'public.two'" "the copy of two" 60 >/dev/null
conv=$(q $PORT "SELECT id FROM idgen.online_conversions WHERE table_name = 'public.two'")
first=$(q $PORT "SELECT idgen_internal.online_conversion_worker($conv)")
# A second worker, as convert_online_resume would start it (its check of the view passed by hand).
second=$(q $PORT "SELECT idgen_internal.online_conversion_launch($conv)")
check "the second worker says another runs it and ends; the first keeps the conversion" eq \
  "$(wait_until $PORT "SELECT regexp_count(pg_read_file('server.log'), 'online conversion $conv: another worker runs it') = 1 AND NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $second)" "the second worker to end" 60 && echo ended)|$(q $PORT "SELECT idgen_internal.online_conversion_worker($conv) = $first AND $second <> $first")" "ended|t"
q $PORT "UPDATE idgen_internal.online_conversions SET worker_pid = $second WHERE id = $conv" >/dev/null
check "stop signals the worker that holds the conversion, not the pid recorded (set to the second's here)" eq \
  "$(q $PORT "SELECT idgen.convert_online_stop('two')")|$(wait_until $PORT "SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $first)" "the first worker to end" 60 && q $PORT "SELECT state || ' ' || running FROM idgen.online_conversions WHERE id = $conv")" "t|stopped false"
q $PORT "UPDATE idgen_internal.online_conversions SET batch_pause = '0' WHERE id = $conv" >/dev/null
check "resumed, it converts, the keys as they were" eq \
  "$(state "SELECT idgen.convert_online_resume('two')")|$(done_within public.two && q $PORT "SELECT count(*) || ' ' || sum(id) FROM two")" "ok|300 45150"

phase "a database whose sessions apply changes as a subscriber does (session_replication_role = replica)"
# The worker connects with the database's settings; its own records would be dropped by their
# REPLICA trigger, and it would run its first step again (control, by hand, on the build before
# the worker set it back to origin: "column id_idgen_new ... already exists", the conversion left
# 'starting' with no error).
q $PORT "CREATE TABLE srr (id serial PRIMARY KEY, v int); INSERT INTO srr (v) SELECT g FROM generate_series(1, 1000) g;
         ALTER DATABASE postgres SET session_replication_role = replica" >/dev/null
q $PORT "SET session_replication_role = origin; SELECT count(*) FROM idgen.convert_online('srr', 'id')" >/dev/null 2>&1
check "converted all the same" done_within public.srr
q $PORT "ALTER DATABASE postgres RESET session_replication_role" >/dev/null

phase "refusals"
q $PORT "CREATE TABLE r_big (id bigserial PRIMARY KEY);
  CREATE TABLE r_nokey (id serial, v text);
  CREATE TABLE r_part (id serial, k int, PRIMARY KEY (id, k)) PARTITION BY RANGE (k);
  CREATE TABLE r_pub (id serial PRIMARY KEY); CREATE PUBLICATION r_pub_pub FOR TABLE r_pub;
  CREATE TABLE r_publist (id serial PRIMARY KEY, v text); CREATE PUBLICATION r_publist_pub FOR TABLE r_publist (id, v);
  CREATE TABLE r_pubfilter (id serial PRIMARY KEY, v text); CREATE PUBLICATION r_pubfilter_pub FOR TABLE r_pubfilter WHERE (id > 5) WITH (publish = 'insert');
  CREATE TABLE r_pubother (id serial PRIMARY KEY, v text); CREATE PUBLICATION r_pubother_pub FOR TABLE r_pubother (v) WITH (publish = 'insert');
  CREATE TABLE r_view (id serial PRIMARY KEY); CREATE VIEW r_view_v AS SELECT id FROM r_view;
  CREATE TABLE r_multi (id serial, k int, PRIMARY KEY (id), UNIQUE (id, k));
  CREATE TABLE r_multi_ref (a int, b int, FOREIGN KEY (a, b) REFERENCES r_multi (id, k));
  CREATE TABLE r_own (id serial PRIMARY KEY); CREATE ROLE conv_other LOGIN; CREATE ROLE conv_owner LOGIN" >/dev/null
check "a bigint key: nothing to widen (42804)" eq "$(state "SELECT idgen.convert_online('r_big', 'id')")" 42804
check "no primary or unique key (0A000)" eq "$(state "SELECT idgen.convert_online('r_nokey', 'id')")" 0A000
check "a partitioned table (0A000)" eq "$(state "SELECT idgen.convert_online('r_part', 'id')")" 0A000
check "a published table, subscribers not said ready (0A000)" eq "$(state "SELECT idgen.convert_online('r_pub', 'id')")" 0A000
check "a publication's column list with the key (0A000)" eq "$(state "SELECT idgen.convert_online('r_publist', 'id', subscribers_ready => true)")" 0A000
check "a publication's row filter on the key (0A000)" eq "$(state "SELECT idgen.convert_online('r_pubfilter', 'id', subscribers_ready => true)")" 0A000
check "a publication whose column list leaves the key out publishes no new column: accepted" eq "$(state "SELECT idgen.convert_online('r_pubother', 'id', dry_run => true)")" ok
check "a view over the key (0A000)" eq "$(state "SELECT idgen.convert_online('r_view', 'id')")" 0A000
check "a foreign key of two columns (0A000)" eq "$(state "SELECT idgen.convert_online('r_multi', 'id')")" 0A000
check "a missing column (42703)" eq "$(state "SELECT idgen.convert_online('r_own', 'nope')")" 42703
check "onto anything else (22023)" eq "$(state "SELECT idgen.convert_online('r_own', 'id', onto => 'uuid')")" 22023
check "batch_rows 0 (22023)" eq "$(state "SELECT idgen.convert_online('r_own', 'id', batch_rows => 0)")" 22023
check "a lock_timeout of a minute (22023)" eq "$(state "SELECT idgen.convert_online('r_own', 'id', lock_timeout => '1 min')")" 22023
check "a NULL argument (22004)" eq "$(state "SELECT idgen.convert_online('r_own', NULL)")" 22004
check "a session that applies changes as a subscriber does (session_replication_role = replica: 55000)" eq \
  "$(state "SET session_replication_role = replica; SELECT idgen.convert_online('r_own', 'id')")" 55000
check "a view (42809)" eq "$(state "SELECT idgen.convert_online('r_view_v', 'id')")" 42809
check "the copy trigger called as a function (39P01, PostgreSQL's own)" eq "$(state "SELECT idgen_internal.online_conversion_copy()")" 39P01
check "resume of a table never converted (42704)" eq "$(state "SELECT idgen.convert_online_resume('r_own')")" 42704
check "the control: the same table converts" eq "$(q $PORT "SELECT count(*) > 0 FROM idgen.convert_online('r_own', 'id', dry_run => true)")" t

phase "other roles"
q $PORT "CREATE TABLE o1 (id serial PRIMARY KEY, v text); ALTER TABLE o1 OWNER TO conv_owner;
  CREATE TABLE o1_ref (o1_id int REFERENCES o1); ALTER TABLE o1_ref OWNER TO conv_other;
  CREATE TABLE o2 (id serial PRIMARY KEY); ALTER TABLE o2 OWNER TO conv_owner;
  INSERT INTO o2 SELECT FROM generate_series(1, 100);
  -- Who runs the copy's UPDATEs (a row trigger of the owner's, which the conversion warns of).
  CREATE TABLE o2_who (current_role_name name, session_role_name name); ALTER TABLE o2_who OWNER TO conv_owner;
  CREATE FUNCTION o2_who() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN INSERT INTO o2_who VALUES (current_user, session_user); RETURN NEW; END \$\$;
  ALTER FUNCTION o2_who() OWNER TO conv_owner;
  CREATE TRIGGER o2_who BEFORE UPDATE ON o2 FOR EACH ROW EXECUTE FUNCTION o2_who()" >/dev/null
check "a table referenced by another role's table: refused to its owner (42501)" eq "$(ROLE=conv_owner state "SELECT idgen.convert_online('o1', 'id')")" 42501
check "another role's table: refused (42501)" eq "$(ROLE=conv_other state "SELECT idgen.convert_online('o2', 'id')")" 42501
check "its owner, without CREATE on the schema (which CREATE INDEX needs): refused before anything (42501)" eq \
  "$(ROLE=conv_owner state "SELECT idgen.convert_online('o2', 'id')")|$(q $PORT "SELECT count(*) FROM pg_attribute WHERE attrelid = 'o2'::regclass AND attname LIKE '%idgen%'")" "42501|0"
q $PORT "GRANT CREATE ON SCHEMA public TO conv_owner"
ROLE=conv_owner state "SELECT idgen.convert_online('o2', 'id')" >/dev/null
check "its owner converts it" done_within public.o2
check "the worker ran as the owner (the copy's UPDATEs, seen by the owner's row trigger)" eq \
  "$(q $PORT "SELECT string_agg(DISTINCT current_role_name || '/' || session_role_name, ' ') || ' ' || count(*) FROM o2_who")" "conv_owner/conv_owner 100"
check "another role sees none of the conversions (row level security), the owner its own" eq \
  "$(psql -h 127.0.0.1 -p $PORT -U conv_other -d postgres -XAtq -c "SELECT count(*) FROM idgen.online_conversions")|$(psql -h 127.0.0.1 -p $PORT -U conv_other -d postgres -XAtq -c "SELECT count(*) FROM idgen_internal.online_conversion_steps")|$(psql -h 127.0.0.1 -p $PORT -U conv_owner -d postgres -XAtq -c "SELECT count(*) FROM idgen.online_conversions")" "0|0|1"
conv=$(q $PORT "SELECT id FROM idgen.online_conversions WHERE table_name = 'public.o2'")
check "another role cannot start a worker for it (42704), resume, stop or abort it (42704), nor write its steps" eq \
  "$(ROLE=conv_other state "SELECT idgen_internal.online_conversion_launch($conv)") $(ROLE=conv_other state "SELECT idgen.convert_online_resume('o2')") $(ROLE=conv_other state "SELECT idgen.convert_online_stop('o2')") $(ROLE=conv_other state "SELECT idgen.convert_online_abort('o2')") $(psql -h 127.0.0.1 -p $PORT -U conv_other -d postgres -XAtq -c "UPDATE idgen_internal.online_conversion_steps SET statement = 'SELECT 1' RETURNING 1" | wc -l)" \
  "42704 42704 42704 42704 0"
# A member of the conversion's role (here a superuser) who resumes it runs its steps, which that
# role wrote, as that role: never with the resumer's rights.
q $PORT "CREATE TABLE o5 (id serial PRIMARY KEY, pad text); ALTER TABLE o5 OWNER TO conv_owner;
  INSERT INTO o5 (pad) SELECT repeat('x', 500) FROM generate_series(1, 300);
  CREATE TABLE o5_who (current_role_name name, session_role_name name); ALTER TABLE o5_who OWNER TO conv_owner;
  CREATE FUNCTION o5_who() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN INSERT INTO o5_who VALUES (current_user, session_user); RETURN NEW; END \$\$;
  ALTER FUNCTION o5_who() OWNER TO conv_owner;
  CREATE TRIGGER o5_who BEFORE UPDATE ON o5 FOR EACH ROW EXECUTE FUNCTION o5_who()" >/dev/null
# About 20 blocks, one a batch, a second apart: it is still copying when it is stopped; the pause
# is then taken away for the rest.
ROLE=conv_owner state "SELECT idgen.convert_online('o5', 'id', batch_rows => 10, batch_pause => '1s')" >/dev/null
wait_until $PORT "SELECT rows_done > 0 FROM idgen.online_conversions WHERE table_name = 'public.o5'" "the copy of o5" 60 >/dev/null
psql -h 127.0.0.1 -p $PORT -U conv_owner -d postgres -XAtq -c "SELECT idgen.convert_online_stop('o5')" >/dev/null
wait_until $PORT "SELECT NOT running FROM idgen.online_conversions WHERE table_name = 'public.o5'" "the worker of o5 to end" 60 >/dev/null
q $PORT "UPDATE idgen_internal.online_conversions SET batch_pause = '0' WHERE relation_name = 'public.o5'" >/dev/null
check "resumed by a superuser, its steps run as its own role" eq \
  "$(state "SELECT idgen.convert_online_resume('o5')")|$(done_within public.o5 && q $PORT "SELECT string_agg(DISTINCT current_role_name, ' ') || ' ' || (count(*) FILTER (WHERE session_role_name = 'postgres') > 0) FROM o5_who")" "ok|conv_owner true"
# A materialized view's query runs as its owner in a security-restricted operation, whoever
# refreshes it: a conversion started there would outlive the command that ran the owner's code.
# (PostgreSQL 17 and later refresh with search_path = pg_catalog, pg_temp: the table is qualified.)
q $PORT "CREATE TABLE o3 (id serial PRIMARY KEY); ALTER TABLE o3 OWNER TO conv_owner;
  CREATE FUNCTION o3_convert() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM idgen.convert_online(''public.o3'', ''id'')';
  ALTER FUNCTION o3_convert() OWNER TO conv_owner;
  CREATE MATERIALIZED VIEW o3_mv AS SELECT o3_convert() AS n WITH NO DATA; ALTER MATERIALIZED VIEW o3_mv OWNER TO conv_owner" >/dev/null
check "started from a security-restricted operation (a materialized view's refresh): refused (42501), nothing begun" eq \
  "$(state "REFRESH MATERIALIZED VIEW o3_mv")|$(q $PORT "SELECT count(*) FROM idgen.online_conversions WHERE table_name = 'public.o3'")" "42501|0"
check "the control: the same function, called by its owner, starts it" eq "$(ROLE=conv_owner state "SELECT o3_convert() > 0")" ok
check "... and it converts" done_within public.o3
check "nor claim a conversion for a role it is not (42501: row level security)" eq \
  "$(ROLE=conv_other state "INSERT INTO idgen_internal.online_conversions (id, relation, relation_name, column_name, onto, role, batch_rows, batch_pause, lock_timeout) VALUES (99, 'o2'::regclass, 'o2', 'id', 'snowflake', 'conv_owner'::regrole, 1, '0', '1s')")" 42501
check "nor learn another role's conversion's state through the view's helpers (NULL, nothing of its worker)" eq \
  "$(psql -h 127.0.0.1 -p $PORT -U conv_other -d postgres -XAtq -c "SELECT coalesce(idgen_internal.online_conversion_latest_state($(q $PORT "SELECT id FROM idgen_internal.online_conversions WHERE relation_name = 'public.o5'")), 'null')" 2>&1)" null
check "the view never said failed or stopped for a conversion its worker went on with" eq "$(wc -l <"$view_said")" 0
rm -f "$view_said"
finish
