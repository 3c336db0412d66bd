#!/usr/bin/env bash
# Adopted sequences under load: 8 sessions at once, each drawing 1,000,000 IDs through one path
# of PostgreSQL's (a bigserial default, an IDENTITY column, the application's own nextval(), COPY
# FROM leaving the key to its default), every draw kept in a table whose primary key refuses a
# repeat; and the blocks of an INCREMENT 50 sequence (8 sessions x 50,000 draws: each draw takes
# 101 of the 4,096 IDs of a millisecond, so a node serves about 40 a millisecond), whose 101-ID
# spans must never overlap. 0 repeats, 0 overlaps, every row there.
# (Controls: adopt.sh shows the overlap check failing on plain Snowflake IDs, adopt_nodes.sh plain
# sequences repeating across two nodes, clients_java.sh a narrower block than Hibernate counts.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
cluster_init adopt_load $PORT "idgen.worker_id = 3" "shared_buffers = '256MB'" "synchronous_commit = off" "max_wal_size = '2GB'"
cluster_start adopt_load
trap 'cluster_stop adopt_load immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen;
  CREATE TABLE by_default (id bigserial PRIMARY KEY, s int);
  CREATE TABLE by_identity (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, s int);
  CREATE SEQUENCE app_ids;
  CREATE TABLE by_nextval (id bigint PRIMARY KEY, s int);
  CREATE TABLE by_copy (id bigserial PRIMARY KEY, s int);
  CREATE SEQUENCE hilo INCREMENT 50;
  CREATE TABLE by_block (v bigint PRIMARY KEY, s int);
  SELECT count(*) FROM idgen.adopt_sequences('public')" >/dev/null
check "the five sequences adopted" eq "$(q $PORT "SELECT count(*) FROM idgen.adopted_sequences")" 5

# load NAME SQL: SQL in 8 sessions at once (:s is the session's number); no error in any.
load() {
  local name=$1 sql=$2 i pids=()
  for i in 1 2 3 4 5 6 7 8; do
    psql -h 127.0.0.1 -p $PORT -U postgres -X -q -v ON_ERROR_STOP=1 -v s=$i -c "${sql//:s/$i}" >"$WORK/load_${name}_$i.log" 2>&1 &
    pids+=($!)
  done
  local failed=0
  for i in "${pids[@]}"; do wait "$i" || failed=$((failed + 1)); done
  [ "$failed" = 0 ] || { show_errors "$WORK"/load_"${name}"_*.log; return 1; }
}

phase "8 sessions x 1,000,000 draws through each path"
check "a bigserial default: no error (a repeat would be a duplicate key)" \
  load default "INSERT INTO by_default (s) SELECT :s FROM generate_series(1, 1000000)"
check "an IDENTITY column" load identity "INSERT INTO by_identity (s) SELECT :s FROM generate_series(1, 1000000)"
check "nextval() by the application" load nextval "INSERT INTO by_nextval SELECT nextval('app_ids'), :s FROM generate_series(1, 1000000)"
check "COPY FROM leaving the key to its default" load copy "COPY by_copy (s) FROM PROGRAM 'yes :s | head -n 1000000'"
check "8,000,000 rows in each table, each key once, each a Snowflake ID of this node" eq \
  "$(q $PORT "SELECT string_agg(n || '/' || d || '/' || ok, ' ') FROM (
       SELECT count(*) n, count(DISTINCT id) d, count(*) FILTER (WHERE id_worker_id(id) = 3 AND id >= 1e15) ok FROM by_default
       UNION ALL SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id_worker_id(id) = 3 AND id >= 1e15) FROM by_identity
       UNION ALL SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id_worker_id(id) = 3 AND id >= 1e15) FROM by_nextval
       UNION ALL SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id_worker_id(id) = 3 AND id >= 1e15) FROM by_copy) s")" \
  "8000000/8000000/8000000 8000000/8000000/8000000 8000000/8000000/8000000 8000000/8000000/8000000"
check "no key of one path is a key of another" eq \
  "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM (SELECT id FROM by_default UNION ALL SELECT id FROM by_identity
                                                      UNION ALL SELECT id FROM by_nextval UNION ALL SELECT id FROM by_copy) s")" 0

phase "8 sessions x 50,000 draws of an INCREMENT 50 sequence"
check "no error" load block "INSERT INTO by_block SELECT nextval('hilo'), :s FROM generate_series(1, 50000)"
check "400,000 draws, their spans [v - 50, v + 50] never overlap, nor hold another path's key" eq \
  "$(q $PORT "SELECT count(*) || ' ' || count(*) FILTER (WHERE v - 50 <= prev + 50) FROM (SELECT v, lag(v) OVER (ORDER BY v) prev FROM by_block) s")|$(q $PORT \
     "SELECT count(*) FROM by_default d JOIN (SELECT v FROM by_block) b ON d.id BETWEEN b.v - 50 AND b.v + 50")" "400000 0|0"
finish
