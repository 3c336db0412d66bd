#!/usr/bin/env bash
# idgen.convert_online of published tables (logical replication), the publications' view kept: a
# publisher publishes FOR ALL TABLES (pg_idgen's own tables among them) to a subscriber; its
# table of 20,000 rows and the two that reference it (one through a bigint column, which stays as
# it is) are converted onto snowflake_next()
# while an application writes to them. The refusal says what each subscriber needs first; done
# as it says, the subscriber applies every change throughout (no apply error), ends with the
# same rows, and goes on receiving the new 64-bit keys; the conversion's own rows never reach
# it (a subscriber that had them would resume the publisher's conversion against its own
# tables at its next start). Controls, by hand: without the subscriber's new columns its apply
# worker stops ("missing replicated column"); with the REPLICA trigger of
# idgen_internal.online_conversions disabled on the subscriber, the conversion's rows arrive.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
S=$(port 1)
cluster_init online_pub $P "wal_level = logical" "idgen.worker_id = 1"
cluster_init online_sub $S "idgen.worker_id = 2"
cluster_start online_pub
cluster_start online_sub
trap 'cluster_stop online_pub immediate; cluster_stop online_sub immediate' EXIT
# errors_of_sub: the subscription's errors, every *_error_count of pg_stat_subscription_stats
# (19 has sync_table_error_count and sync_seq_error_count where 15 to 18 have sync_error_count).
errors_of_sub() {
  q $S "SELECT sum(e.value::bigint) FROM pg_stat_subscription_stats s, jsonb_each_text(to_jsonb(s)) e
         WHERE s.subname = 'sub' AND e.key LIKE '%error_count'"
}
schema="CREATE EXTENSION pg_idgen;
  CREATE TABLE pa (id serial PRIMARY KEY, v text NOT NULL);
  CREATE TABLE pb (id bigserial PRIMARY KEY, pa_id int NOT NULL REFERENCES pa ON DELETE CASCADE, w int);
  CREATE INDEX pb_pa ON pb (pa_id);
  CREATE TABLE pc (id bigserial PRIMARY KEY, pa_id bigint REFERENCES pa ON DELETE CASCADE);"
q $P "$schema" >/dev/null
q $S "$schema" >/dev/null
q $P "INSERT INTO pa (v) SELECT 'v' || g FROM generate_series(1, 20000) g;
      INSERT INTO pb (pa_id, w) SELECT 1 + g % 20000, g FROM generate_series(1, 40000) g;
      INSERT INTO pc (pa_id) SELECT 1 + g % 20000 FROM generate_series(1, 5000) g;
      CREATE PUBLICATION everything FOR ALL TABLES" >/dev/null
q $S "CREATE SUBSCRIPTION sub CONNECTION 'host=127.0.0.1 port=$P user=postgres dbname=postgres' PUBLICATION everything" >/dev/null

# synced: until the subscriber has applied everything the publisher wrote (at most 60 s).
synced() {
  local lsn i
  lsn=$(q $P "SELECT pg_current_wal_lsn()")
  for i in $(seq 1 600); do
    [ "$(q $S "SELECT coalesce(bool_and(latest_end_lsn >= '$lsn'), false) FROM pg_stat_subscription WHERE subname = 'sub' AND relid IS NULL")" = t ] &&
      [ "$(q $S "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'")" = 0 ] && return 0
    sleep 0.1
  done
  echo "    waited 60 s for the subscriber to apply $lsn" >&2
  return 1
}
same_rows() {
  local sql="SELECT count(*) || ' ' || md5(string_agg(a.id || ':' || a.v || ':' || coalesce(b.n, '-'), ',' ORDER BY a.id))
               FROM pa a LEFT JOIN (SELECT pa_id, count(*) || '/' || sum(w) AS n FROM pb GROUP BY pa_id) b ON b.pa_id = a.id"
  local want
  sql="$sql UNION ALL SELECT count(*) || ' ' || md5(string_agg(id || ':' || pa_id, ',' ORDER BY id)) FROM pc"
  want=$(q $P "$sql")
  check "$1" eq "$(q $S "$sql")" "${want:?no rows from the publisher}"
}

phase "the table and those that reference it are published: refused, with what subscribers need"
check "the subscriber has the rows" synced
err=$(psql -h 127.0.0.1 -p $P -U postgres -X -q -At -v VERBOSITY=verbose -c "SELECT idgen.convert_online('pa', 'id')" 2>&1 >/dev/null || true)
check "refused (0A000)" grep -q "ERROR:  0A000: idgen.convert_online: public.pa, public.pb are published" <<<"$err"
prep=$(sed -n 's/^HINT:  On each subscriber first run \(.*\) (the ALTER COLUMN .*/\1/p' <<<"$err")
check "the hint names each widened table's columns (not pc's, bigint already)" eq "$prep" \
  "ALTER TABLE public.pa ALTER COLUMN id TYPE bigint, ADD COLUMN id_idgen_new bigint, ADD COLUMN id_idgen_old integer; ALTER TABLE public.pb ALTER COLUMN pa_id TYPE bigint, ADD COLUMN pa_id_idgen_new bigint, ADD COLUMN pa_id_idgen_old integer"

phase "done as the hint says: converted while the application writes, applied throughout"
q $S "$prep" >/dev/null
cat >"$WORK/pub_app.sql" <<'SQL'
\set k random(1, 20000)
BEGIN;
INSERT INTO pa (v) VALUES ('new') RETURNING id AS a \gset
INSERT INTO pb (pa_id, w) VALUES (:a, 1);
UPDATE pb SET w = w + 1 WHERE pa_id = :k;
UPDATE pa SET v = v || '+' WHERE id = :k + 1;
DELETE FROM pa WHERE id = :k + 2 AND v NOT LIKE '%+';
COMMIT;
SQL
q $P "SELECT count(*) FROM idgen.convert_online('pa', 'id', batch_rows => 200, batch_pause => '20ms', subscribers_ready => true)" >/dev/null
i=0
while [ "$(q $P "SELECT state IN ('done', 'failed', 'stopped') FROM idgen.online_conversions")" != t ] && [ $i -lt 60 ]; do
  i=$((i + 1))
  (cd "$WORK" && PGOPTIONS="-c lock_timeout=200ms" "$PGBIN/pgbench" -h 127.0.0.1 -p $P -U postgres -n -c 2 -R 50 -T 2 \
    -f "$WORK/pub_app.sql" postgres >"$WORK/pub_app.$i.out" 2>&1) ||
    echo "    pgbench run $i exited with an error: $(grep -m1 -i error "$WORK/pub_app.$i.out")" >&2
done
check "the conversion is done" eq "$(q $P "SELECT state FROM idgen.online_conversions")" done
check "the application ran through it with no error" eq "$(cat "$WORK"/pub_app.*.out | grep -ci 'error\|abort')" 0
check "in $i runs of 2 s" ne "$(cat "$WORK"/pub_app.*.out | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' | paste -sd+ | bc)" 0
check "the keys are bigint, from snowflake_next()" eq \
  "$(q $P "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'pb'::regclass AND attname = 'pa_id'") $(q $P "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'pa'::regclass")" \
  "bigint snowflake_next()"
check "the subscriber applied everything" synced
check "with no apply error" eq "$(errors_of_sub)" 0
same_rows "the subscriber has the publisher's rows"
check "still published by the same publication" eq "$(q $P "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_publication_tables WHERE pubname = 'everything' AND schemaname = 'public'")" "pa,pb,pc"
check "the subscriber never received the conversion's rows" eq \
  "$(q $S "SELECT (SELECT count(*) FROM idgen_internal.online_conversions) + (SELECT count(*) FROM idgen_internal.online_conversion_steps)")" 0

phase "after it: the subscriber's extra columns dropped, new 64-bit keys replicated"
q $S "ALTER TABLE pa DROP COLUMN id_idgen_new, DROP COLUMN id_idgen_old; ALTER TABLE pb DROP COLUMN pa_id_idgen_new, DROP COLUMN pa_id_idgen_old" >/dev/null
q $P "INSERT INTO pa (v) SELECT 'after' FROM generate_series(1, 10); INSERT INTO pb (pa_id, w) SELECT id, 7 FROM pa WHERE v = 'after'" >/dev/null
check "the subscriber applied them" synced
check "keys past 2^31 arrived" eq "$(q $S "SELECT count(*) FROM pa WHERE v = 'after' AND id > 2147483647")" 10
same_rows "the subscriber still has the publisher's rows"
check "with no apply error" eq "$(errors_of_sub)" 0
finish
