#!/usr/bin/env bash
# Within one statement the IDs increase in the order its rows come out, also under a parallel
# plan (docs/guarantees.md, guarantee 1): the generators are PARALLEL RESTRICTED, so the planner runs them in
# the leader, above the Gather, never in the parallel workers (whose IDs interleave). A 300,000-row
# table read by a parallel sequential scan with two workers launched; each generator's column,
# read in output order, is strictly increasing.
# (Control, run by hand: with the functions declared PARALLEL SAFE again, as they were up to
# 0.2.4, the plan computes them in the workers and every column is out of order: 6 of
# the 7 checks fail.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
trap 'cluster_stop parallel immediate' EXIT
cluster_init parallel $P "max_worker_processes = 16" "max_parallel_workers = 8"
cluster_start parallel
q $P "CREATE EXTENSION pg_idgen; CREATE TABLE big AS SELECT g FROM generate_series(1, 300000) g; ANALYZE big"
PAR="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
     SET max_parallel_workers_per_gather = 2; SET parallel_leader_participation = off;"
plan=$(q $P "$PAR EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF) SELECT snowflake_next() FROM big")
check "the plan is parallel, with two workers launched" grep -q "Workers Launched: 2" <<<"$plan"
check "... and computes snowflake_next() above the Gather, not in the workers" eq \
  "$(grep -A1 -- "-> *Parallel Seq Scan" <<<"$plan" | grep -c snowflake_next)" 0
# in_order QUERY SORT-OPTIONS: its one column in output order, checked by sort -c (strict: -u).
in_order() {
  q $P "$PAR $1" >"$WORK/parallel_out"
  [ "$(wc -l <"$WORK/parallel_out")" -ge 300000 ] && LC_ALL=C sort -c -u $2 "$WORK/parallel_out"
}
check "snowflake_next() increases in output order" in_order "SELECT snowflake_next() FROM big" -n
check "uuidv7_next() increases in output order" in_order "SELECT uuidv7_next() FROM big" ""
check "ulid_next() increases in output order" in_order "SELECT ulid_next() FROM big" ""
check "msgid_next() increases in output order" in_order "SELECT msgid_next(1, g::text) FROM big" ""
check "snowflake_next_batch() in a lateral join increases" in_order "SELECT b FROM big, LATERAL snowflake_next_batch(1 + g % 2) b" -n
finish
