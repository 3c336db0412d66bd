#!/usr/bin/env bash
# Benchmark: each row is a ratio against a baseline measured in the same run on the same
# cluster, because these machines are noisy. Never run as a test; nothing here asserts.
#   ROWS=1000000 PGBENCH_SECONDS=5 ROUNDS=3 bash tests/bench/bench.sh
#   PARTS="segments" SKIP_INSTALL=1 bash tests/bench/bench.sh   (only some parts: peers segments
#   text public backfill parallel leases citus idle connect created_at adopt online baseline)
#   BASELINE=<git revision> make bench PARTS=baseline    this tree against that revision's build,
#   per row (tests/bench/baseline.sh; with BASELINE set, the default parts include it)
# The part "peers" (tests/bench/compare.py) measures pg_idgen beside pgEdge snowflake and
# pg_uuidv7, built from IDGEN_VENDOR_DIR by peers.sh, and the built-ins.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/lib.sh"
PORT=$(port 0)
ROWS=${ROWS:-1000000}
INSERT_ROWS=${INSERT_ROWS:-2000000}
SECS=${PGBENCH_SECONDS:-5}
PARTS=${PARTS:-peers segments text public backfill parallel leases citus idle connect created_at adopt online${BASELINE:+ baseline}}
part() { [[ " $PARTS " == *" $1 "* ]]; }
ensure_deps
[ -n "${SKIP_INSTALL:-}" ] || install_extension
source "$REPO/tests/bench/peers.sh"
BENCH_CONF=("shared_buffers = '1GB'" "synchronous_commit = off" "max_wal_size = '4GB'"
  "snowflake.node = 1" "idgen.backfill_worker_id = 1023" "idgen.backfill_database = 'postgres'")
cluster_init bench $PORT "${BENCH_CONF[@]}"
cluster_start bench
trap 'cluster_stop bench immediate' EXIT
# (gen_random_uuid() is built in since PostgreSQL 13: no pgcrypto, which not every build has.)
q $PORT "CREATE EXTENSION pg_idgen; CREATE SEQUENCE s" >/dev/null
BENCH_PER_ROW="CREATE OR REPLACE FUNCTION bench_per_row(expr text, n int) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; best float8 := 'infinity';
BEGIN
  FOR i IN 1..3 LOOP
    t0 := clock_timestamp();
    EXECUTE format('SELECT count(%s) FROM generate_series(1, %s)', expr, n);
    best := least(best, extract(epoch FROM clock_timestamp() - t0));
  END LOOP;
  RETURN best * 1e9 / n;  -- ns per row, best of 3
END \$\$;"
q $PORT "$BENCH_PER_ROW"

# The same for a query over a table: ns per row of sql over n rows, best of 3.
q $PORT "CREATE OR REPLACE FUNCTION bench_query(sql text, n int) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; best float8 := 'infinity';
BEGIN
  FOR i IN 1..3 LOOP
    t0 := clock_timestamp();
    EXECUTE sql;
    best := least(best, extract(epoch FROM clock_timestamp() - t0));
  END LOOP;
  RETURN best * 1e9 / n;
END \$\$;"

# Where the chart of the ratios goes (tests/bench/chart.py; docs/benchmarks.md shows one).
BENCH_OUT=${BENCH_OUT:-$REPO/target/bench}
mkdir -p "$BENCH_OUT"
if part peers; then
  # pg_idgen against its peers and the built-ins, rounds interleaved, with the spread
  # (tests/bench/compare.py), and the ratios drawn as a chart with matplotlib from PyPI, in a venv
  # of its own (made once).
  PORT=$PORT PGBIN=$PGBIN PEERS="$PEERS" BENCH_JSON="$BENCH_OUT/ratios.json" python3 "$REPO/tests/bench/compare.py"
  CHART_VENV=/var/tmp/pg_idgen_clients/chart
  if { [ -x "$CHART_VENV/bin/python" ] && "$CHART_VENV/bin/python" -c "import matplotlib" 2>/dev/null; } ||
    { rm -rf "$CHART_VENV" && python3 -m venv "$CHART_VENV" &&
      "$CHART_VENV/bin/pip" install -q "matplotlib>=3.8,<4" >"$WORK/pip_chart.log" 2>&1; }; then
    "$CHART_VENV/bin/python" "$REPO/tests/bench/chart.py" "$BENCH_OUT/ratios.json" "$BENCH_OUT/ratios.svg"
  else
    echo "chart not drawn: pip could not install matplotlib ($(tail -1 "$WORK/pip_chart.log" 2>/dev/null))"
  fi
fi

printf '\n## pg_idgen alone: segments, text forms, leases\n%-58s %12s %10s\n' "benchmark" "value" "ratio"
row() { printf '%-58s %12s %10s\n' "$1" "$2" "$3"; }
ratio() { python3 -c "print(f'{$1/$2:.2f}x')"; }

ns() { q $PORT "SELECT round(bench_per_row('$1', $ROWS)::numeric, 1)"; }
base_clock=$(ns "clock_timestamp()")
base_seq=$(ns "nextval(''s'')")
base_uuid=$(ns "gen_random_uuid()")
row "per row: clock_timestamp() (baseline)" "${base_clock} ns" ""
row "per row: nextval() (baseline)" "${base_seq} ns" ""
row "per row: gen_random_uuid() (baseline)" "${base_uuid} ns" ""
# PostgreSQL 18 has a built-in uuidv7() (time-ordered within one backend): the row to beat there.
has_uuidv7=$(q $PORT "SELECT current_setting('server_version_num')::int >= 180000")
if [ "$has_uuidv7" = t ]; then
  base_v7=$(ns "uuidv7()")
  row "per row: uuidv7() (baseline, built into PostgreSQL 18)" "${base_v7} ns" ""
fi
tps() { # tps CLIENTS SQL
  local f
  f=$(mktemp)
  echo "$2" >"$f"
  "$PGBIN/pgbench" -h 127.0.0.1 -p $PORT -U postgres -n -M prepared -T "$SECS" -c "$1" -j "$1" -f "$f" postgres 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\).*/\1/p' | cut -d. -f1
  rm -f "$f"
}

if part segments; then
  # Segment mode (issue 4). Types are created first so that only handing out is measured.
  q $PORT "SELECT idgen.segment_create('t'), idgen.segment_create('w', step => 1000), idgen.segment_create('w50k', step => 50000),
                  idgen.segment_create('p'), idgen.segment_create('client')" >/dev/null
  seg=$(ns "segment_next(''t'')")
  [ -n "${sf:-}" ] || sf=$(ns "snowflake_next()")
  row "per row: segment_next() vs nextval() [goal<=0.8]" "${seg} ns" "$(ratio "$seg" "$base_seq")"
  row "per row: segment_next() vs snowflake_next()" "" "$(ratio "$seg" "$sf")"
  # 10M IDs of a fresh type with step 1000: refills a caller waited for, read from the view.
  t0=$(date +%s.%N)
  q $PORT "SELECT count(segment_next('w')) FROM (SELECT generate_series(1, 10000000)) g" >/dev/null
  t1=$(date +%s.%N)
  w=$(q $PORT "SELECT refills_waited || ' waited / ' || refills_ahead || ' ahead, step now ' || current_step FROM idgen.segment_status WHERE biz_type = 'w'")
  row "10M IDs of a new type, step 1000: refills [goal: 1 waited]" "$w" ""
  row "10M IDs of a new type: IDs/s" "$(python3 -c "print(round(10000000/($t1-$t0)))")" ""
  # With a first range larger than (rate x commit latency), only the first refill is waited for.
  q $PORT "SELECT count(segment_next('w50k')) FROM (SELECT generate_series(1, 10000000)) g" >/dev/null
  row "10M IDs of a new type, step 50000: refills" "$(q $PORT "SELECT refills_waited || ' waited / ' || refills_ahead || ' ahead' FROM idgen.segment_status WHERE biz_type = 'w50k'")" ""
  one=$(tps 16 "SELECT 1;")
  sq=$(tps 16 "SELECT segment_next('p');")
  row "pgbench 16 clients: SELECT 1 (baseline tps)" "$one" ""
  row "pgbench 16 clients: segment_next() vs SELECT 1" "$sq" "$(ratio "$sq" "$one")"
  al=$(tps 32 "SELECT * FROM idgen.segment_alloc('client');")
  row "pgbench 32 clients: idgen.segment_alloc() calls/s" "$al" ""
  row "  ranges handed out, checked disjoint by max_id" "$(q $PORT "SELECT version || ' ranges, max_id ' || max_id FROM idgen.segments WHERE biz_type = 'client'")" ""
fi

if part text; then
  # Message IDs (RongCloud's format) and text forms (issue 6).
  uuid_text=$(ns "gen_random_uuid()::text")
  mid=$(ns "msgid_next(1, ''room-42'')")
  row "per row: gen_random_uuid()::text (baseline)" "${uuid_text} ns" ""
  row "per row: msgid_next() vs gen_random_uuid()::text" "${mid} ns" "$(ratio "$mid" "$uuid_text")"
  [ -n "${base_clock:-}" ] || base_clock=$(ns "clock_timestamp()")
  for b in base62 base32 hex; do
    tt=$(ns "id_to_text(generate_series, ''$b'')")
    row "per row: id_to_text(id, '$b') vs clock_timestamp()" "${tt} ns" "$(ratio "$tt" "$base_clock")"
  done
  q $PORT "CREATE TABLE enc AS SELECT id_to_text(snowflake_next()) AS t FROM generate_series(1, $ROWS)" >/dev/null
  scan=$(q $PORT "SELECT round(bench_query('SELECT count(t) FROM enc', $ROWS)::numeric, 1)")
  ft=$(q $PORT "SELECT round(bench_query('SELECT count(id_from_text(t)) FROM enc', $ROWS)::numeric, 1)")
  row "per row: count(t) over 1M stored base62 strings (baseline)" "${scan} ns" ""
  row "per row: id_from_text(t, 'base62') vs the scan alone" "${ft} ns" "$(ratio "$ft" "$scan")"
  # TypeIDs (issue 49): written and read per row against uuid_out and uuid_in over the same stored
  # UUIDs [goal<=1.2], with the scan alone, which both include.
  q $PORT "CREATE TABLE tids AS SELECT u, u::text AS t, typeid_from_uuid('user', u) AS tid
             FROM (SELECT uuidv7_next() AS u FROM generate_series(1, $ROWS)) g" >/dev/null
  tq() { q $PORT "SELECT round(bench_query('SELECT count($1) FROM tids', $ROWS)::numeric, 1)"; }
  scan_u=$(tq "u")
  out_u=$(tq "u::text")
  out_t=$(tq "typeid_from_uuid(''user'', u)")
  in_u=$(tq "t::uuid")
  in_t=$(tq "typeid_to_uuid(tid)")
  row "per row: count(u) over 1M stored UUIDv7s (the scan alone)" "${scan_u} ns" ""
  row "per row: u::text (uuid_out), scan included" "${out_u} ns" ""
  row "per row: typeid_from_uuid('user', u) vs uuid_out [goal<=1.2]" "${out_t} ns" "$(ratio "$out_t" "$out_u")"
  row "per row: t::uuid (uuid_in), scan included" "${in_u} ns" ""
  row "per row: typeid_to_uuid(tid) vs uuid_in" "${in_t} ns" "$(ratio "$in_t" "$in_u")"
  ntid=$(tq "typeid_next(''user'')")
  nuuid=$(tq "uuidv7_next()::text")
  row "per row: typeid_next('user') vs uuidv7_next()::text" "${ntid} ns" "$(ratio "$ntid" "$nuuid")"
fi

if part backfill; then
  # IDs at a past time (docs/backfill.md), against snowflake_next() over the same rows: rows 1 ms
  # apart (most of a block is used: one allocator commit per bucket of 1,024 ms) and 500 ms apart
  # (two rows a bucket: nearly a commit per row for the scalar form, per 128 buckets for the batch).
  n_thin=$((ROWS / 20))
  q $PORT "CREATE TABLE bf_dense AS SELECT timestamptz '2025-03-10' + g * interval '1 ms' AS ts FROM generate_series(1, $ROWS) g;
           CREATE TABLE bf_thin AS SELECT timestamptz '2024-06-01' + g * interval '500 ms' AS ts FROM generate_series(1, $n_thin) g" >/dev/null
  bq() { q $PORT "SELECT round(bench_query(\$q\$$1\$q\$, $2)::numeric, 1)"; }
  live=$(bq "SELECT count(snowflake_next()) FROM bf_dense" "$ROWS")
  d1=$(bq "SELECT count(snowflake_at(ts)) FROM bf_dense" "$ROWS")
  d2=$(bq "SELECT count(x) FROM unnest((SELECT snowflake_at_batch(array_agg(ts)) FROM bf_dense)) x" "$ROWS")
  t1=$(bq "SELECT count(snowflake_at(ts)) FROM bf_thin" "$n_thin")
  t2=$(bq "SELECT count(x) FROM unnest((SELECT snowflake_at_batch(array_agg(ts)) FROM bf_thin)) x" "$n_thin")
  u1=$(bq "SELECT count(uuidv7_at(ts)) FROM bf_dense" "$ROWS")
  row "per row: snowflake_next() over a table (baseline)" "${live} ns" ""
  row "per row: snowflake_at(), rows 1 ms apart, vs snowflake_next()" "${d1} ns" "$(ratio "$d1" "$live")"
  row "per row: snowflake_at_batch(), rows 1 ms apart" "${d2} ns" "$(ratio "$d2" "$live")"
  row "per row: uuidv7_at(), rows 1 ms apart" "${u1} ns" "$(ratio "$u1" "$live")"
  row "per row: snowflake_at(), rows 500 ms apart" "${t1} ns" "$(ratio "$t1" "$live")"
  row "per row: snowflake_at_batch(), rows 500 ms apart" "${t2} ns" "$(ratio "$t2" "$live")"
fi

if part public; then
  # Public IDs (FF1 over AES-256): against gen_random_uuid() (the goal: encryption of a bigint at
  # most 0.5x) and id_to_text() (an unkeyed text form).
  q $PORT "SELECT idgen.public_key_create('bench', 'b')" >/dev/null
  [ -n "${base_uuid:-}" ] || base_uuid=$(ns "gen_random_uuid()")
  tt=$(ns "id_to_text(generate_series + 1700000000000000000, ''base62'')")
  row "per row: id_to_text(id, 'base62') (baseline)" "${tt} ns" ""
  S="generate_series + 1700000000000000000"
  for f in "encrypt_id($S, ''bench'')" "decrypt_id($S, ''bench'')" "encrypt_id_js_safe(generate_series, ''bench'')" \
    "id_to_public($S, ''bench'')"; do
    v=$(ns "idgen.$f")
    row "per row: idgen.${f%%(*}() vs gen_random_uuid()" "${v} ns" "$(ratio "$v" "$base_uuid")"
  done
  row "  ... idgen.id_to_public() vs id_to_text(id, 'base62')" "" "$(ratio "$v" "$tt")"
  q $PORT "CREATE TABLE pub AS SELECT idgen.id_to_public(g, 'bench') AS t, uuidv7_next() AS u FROM generate_series(1, $ROWS) g" >/dev/null
  scan=$(q $PORT "SELECT round(bench_query('SELECT count(t) FROM pub', $ROWS)::numeric, 1)")
  back=$(q $PORT "SELECT round(bench_query('SELECT count(idgen.public_to_id(t, ''bench'')) FROM pub', $ROWS)::numeric, 1)")
  eu=$(q $PORT "SELECT round(bench_query('SELECT count(idgen.encrypt_uuid(u, ''bench'')) FROM pub', $ROWS)::numeric, 1)")
  row "per row: idgen.public_to_id(t, 'bench') over 1M stored (scan included)" "${back} ns" "$(ratio "$back" "$base_uuid")"
  row "per row: idgen.encrypt_uuid(u, 'bench') over 1M stored (scan included)" "${eu} ns" "$(ratio "$eu" "$base_uuid")"
fi

if part parallel; then
  # The generators are PARALLEL RESTRICTED (IDs in output order within a statement): a parallel
  # scan still feeds them, but they run in the leader. Against the same C function declared
  # PARALLEL SAFE (what 0.2.4 declared), which parallel workers call, and the scan alone.
  q $PORT "CREATE TABLE par AS SELECT g FROM generate_series(1, $ROWS) g; ANALYZE par;
           CREATE FUNCTION bench_sf_parallel_safe() RETURNS bigint STRICT VOLATILE PARALLEL SAFE
             LANGUAGE c AS 'pg_idgen', 'snowflake_next_wrapper'" >/dev/null
  q $PORT "CREATE OR REPLACE FUNCTION bench_query(sql text) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; best float8 := 'infinity';
BEGIN
  SET LOCAL parallel_setup_cost = 0; SET LOCAL parallel_tuple_cost = 0;
  SET LOCAL min_parallel_table_scan_size = 0; SET LOCAL max_parallel_workers_per_gather = 2;
  FOR i IN 1..3 LOOP
    t0 := clock_timestamp();
    EXECUTE sql;
    best := least(best, extract(epoch FROM clock_timestamp() - t0));
  END LOOP;
  RETURN round((best * 1000)::numeric, 1);  -- ms, best of 3
END \$\$;" >/dev/null
  scan=$(q $PORT "SELECT bench_query('SELECT count(g) FROM par')")
  safe=$(q $PORT "SELECT bench_query('SELECT count(bench_sf_parallel_safe()) FROM par')")
  restricted=$(q $PORT "SELECT bench_query('SELECT count(snowflake_next()) FROM par')")
  row "parallel scan of $ROWS rows, count(g) (baseline)" "${scan} ms" ""
  row "... count(snowflake_next()), PARALLEL SAFE (0.2.4)" "${safe} ms" "$(ratio "$safe" "$scan")"
  row "... count(snowflake_next()), PARALLEL RESTRICTED (now)" "${restricted} ms" "$(ratio "$restricted" "$scan")"
  row "... restricted vs safe" "" "$(ratio "$restricted" "$safe")"
fi

if part leases; then
  # Worker-id leases (issue 5). Each call is its own committed transaction (worker_acquire forces
  # synchronous_commit to at least local), so the baseline is a committed one-row INSERT.
  q $PORT "CREATE TABLE bench_commit (id bigserial PRIMARY KEY, code text)"
  ins=$(tps 32 "SET synchronous_commit = local; INSERT INTO bench_commit (code) VALUES ('x');")
  acq=$(tps 32 $'\\set r random(1, 1000000000)\nSELECT worker_id FROM idgen.worker_acquire(\'bench-\' || :client_id || \'-\' || :r, \'10 min\', 100000, 2000000000);')
  row "pgbench 32 clients: committed INSERT (baseline tps)" "$ins" ""
  row "pgbench 32 clients: idgen.worker_acquire() calls/s vs INSERT" "$acq" "$(ratio "$acq" "$ins")"
  row "  leases held, all distinct ids" "$(q $PORT "SELECT count(*) || ' rows, ' || count(DISTINCT worker_id) || ' ids' FROM idgen.workers")" ""
  cyc=$(tps 32 "SELECT idgen.worker_release(worker_id, 'cyc-' || :client_id, lease => lease) FROM idgen.worker_acquire('cyc-' || :client_id, '1 min', 5000, 6023);")
  row "pgbench 32 clients: acquire + release cycles/s, 1024 ids" "$cyc" "$(ratio "$cyc" "$ins")"

  # Time for a node in lease mode to get its lease at start: from pg_ctl start returning to the
  # first snowflake_next() that works, against the same wait for SELECT 1 (the baseline).
  NODE_PORT=$(port 1)
  cluster_init bench_node $NODE_PORT "idgen.worker_id_source = lease" \
    "idgen.worker_lease_conninfo = 'host=127.0.0.1 port=$PORT dbname=postgres user=postgres'"
  cluster_start bench_node
  trap 'cluster_stop bench immediate; cluster_stop bench_node immediate' EXIT
  q $NODE_PORT "CREATE EXTENSION pg_idgen"
  first_ok() { # first_ok SQL -> ms from now until SQL succeeds
    local t0 i
    t0=$(date +%s%N)
    for i in $(seq 1 1000); do q $NODE_PORT "$1" >/dev/null 2>&1 && break; sleep 0.005; done
    echo $((($(date +%s%N) - t0) / 1000000))
  }
  best_sel=999999
  best_sf=999999
  keeper=""
  for i in 1 2 3; do
    cluster_stop bench_node fast
    cluster_start bench_node
    s1=$(first_ok "SELECT 1")
    s2=$(first_ok "SELECT snowflake_next()")
    ((s1 < best_sel)) && best_sel=$s1
    ((s1 + s2 < best_sf)) && best_sf=$((s1 + s2))
    keeper="$keeper$(q $NODE_PORT "SELECT first_lease_ms FROM idgen.worker_status") "
  done
  row "node start: first SELECT 1 after pg_ctl start (baseline)" "${best_sel} ms" ""
  row "node start: first snowflake_next() in lease mode" "${best_sf} ms" ""
  row "  keeper start to lease, 3 restarts" "${keeper% } ms" ""
  cluster_stop bench_node fast
fi

if part citus; then
  # Citus (issue 20): INSERTs into a distributed table through the coordinator, the key's DEFAULT
  # snowflake_next() against Citus's own bigserial, pgbench at 8 and 32 clients, ROUNDS (3)
  # interleaved rounds: median and spread of the tps, ratio taken round by round.
  source "$REPO/tests/helpers/citus.sh"
  printf '\n## Citus %s: a coordinator and two workers, INSERT into a distributed table\n' "$CITUS_VERSION"
  if citus_ensure; then
    CC=$(port 2)
    citus_conf=("shared_preload_libraries = 'citus,pg_idgen'" "idgen.worker_id_source = citus" "max_connections = 300"
      "shared_buffers = '256MB'" "synchronous_commit = off")
    for n in 0 1 2; do
      cluster_init bench_citus$n $((CC + n)) "${citus_conf[@]}"
      cluster_start bench_citus$n
    done
    trap 'cluster_stop bench immediate; cluster_stop bench_node immediate 2>/dev/null; for n in 0 1 2; do cluster_stop bench_citus$n immediate; done' EXIT
    for n in 0 1 2; do q $((CC + n)) "CREATE EXTENSION citus; CREATE EXTENSION pg_idgen" >/dev/null; done
    q $CC "SELECT citus_set_coordinator_host('127.0.0.1', $CC);
           SELECT citus_add_node('127.0.0.1', $((CC + 1))); SELECT citus_add_node('127.0.0.1', $((CC + 2)));
           CREATE TABLE t_sf (id bigint DEFAULT snowflake_next(), v int); SELECT create_distributed_table('t_sf', 'v');
           CREATE TABLE t_seq (id bigserial, v int); SELECT create_distributed_table('t_seq', 'v')" >/dev/null
    citus_tps() { # citus_tps CLIENTS TABLE
      local f
      f=$(mktemp)
      printf '\\set v random(1, 1000000)\nINSERT INTO %s (v) VALUES (:v);\n' "$2" >"$f"
      "$PGBIN/pgbench" -h 127.0.0.1 -p $CC -U postgres -n -M prepared -T "$SECS" -c "$1" -j "$1" -f "$f" postgres 2>/dev/null |
        sed -n 's/^tps = \([0-9.]*\).*/\1/p' | cut -d. -f1
      rm -f "$f"
    }
    for c in 8 32; do
      sf_runs=""
      seq_runs=""
      for r in $(seq 1 "${ROUNDS:-3}"); do
        seq_runs="$seq_runs $(citus_tps "$c" t_seq)"
        sf_runs="$sf_runs $(citus_tps "$c" t_sf)"
      done
      python3 - "$c" "$seq_runs" "$sf_runs" <<'PY'
import statistics, sys
c, seq, sf = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
cell = lambda v: f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})"
rs = [a / b for a, b in zip(sf, seq)]
mark = "~" if min(rs) <= 1 <= max(rs) else " "
print(f"pgbench {c} clients: INSERT, bigserial key (baseline tps)    {cell(seq)}")
print(f"pgbench {c} clients: INSERT, DEFAULT snowflake_next()       {cell(sf)}   {mark}{statistics.median(rs):.2f}x ({min(rs):.2f}-{max(rs):.2f})")
PY
    done
    row "  rows, all distinct; worker ids seen" "$(q $CC "SELECT count(*) || ' rows, ' || count(DISTINCT id) || ' distinct, worker ' || string_agg(DISTINCT id_worker_id(id, 'pg_idgen')::text, ',') FROM t_sf")" ""
    for n in 0 1 2; do cluster_stop bench_citus$n fast; done
  fi
fi

if part connect; then
  # A new session per statement (issue 62): what an application without a pooler pays for the
  # first ID of each request, against the first nextval() and a bigserial INSERT of a new session
  # (tests/bench/connect.py: CONNECT_ROUNDS interleaved rounds of CONNECT_SESSIONS sessions each).
  CP=$(port 6)
  cluster_init bench_connect $CP "idgen.worker_id = 1"
  cluster_start bench_connect
  trap 'cluster_stop bench immediate; cluster_stop bench_connect immediate' EXIT
  q $CP "CREATE EXTENSION pg_idgen" >/dev/null
  /usr/bin/python3 "$REPO/tests/bench/connect.py" "host=127.0.0.1 port=$CP user=postgres dbname=postgres" \
    "${CONNECT_ROUNDS:-5}" "${CONNECT_SESSIONS:-100}"
  cluster_stop bench_connect
  trap 'cluster_stop bench immediate' EXIT
fi

if part idle; then
  # Low traffic (issue 50): a single-row INSERT in autocommit after a pause (IDLE_PAUSES seconds,
  # ROUNDS interleaved rounds: median and spread), each key against bigserial; WAL bytes per
  # million IDs against nextval(). On a cluster as most run (fsync, synchronous_commit on), then
  # with a synchronous standby (a pause of 2 s). tests/bench/idle.py, with Debian's python3-psycopg2
  # (ensure_deps installs it for /usr/bin/python3).
  printf '\n## Low traffic: the first INSERT after a pause (fsync on, synchronous_commit on)\n'
  IP=$(port 3)
  IS=$(port 4)
  cluster_init bench_idle $IP "shared_buffers = '256MB'" "idgen.worker_id = 1" "max_wal_senders = 4"
  cluster_start bench_idle
  trap 'cluster_stop bench immediate; cluster_stop bench_idle immediate; cluster_stop bench_idle_s immediate 2>/dev/null' EXIT
  q $IP "CREATE EXTENSION pg_idgen" >/dev/null
  /usr/bin/python3 "$REPO/tests/bench/idle.py" "host=127.0.0.1 port=$IP user=postgres dbname=postgres" \
    "${IDLE_PAUSES:-0.5 2 30}" "${ROUNDS:-3}"
  # As before 0.2.5 (idgen.reserve_idle = 0): the first ID after a pause writes the mark itself.
  q $IP "ALTER SYSTEM SET idgen.reserve_idle = 0" && q $IP "SELECT pg_reload_conf()" >/dev/null
  /usr/bin/python3 "$REPO/tests/bench/idle.py" "host=127.0.0.1 port=$IP user=postgres dbname=postgres" 2 "${ROUNDS:-3}" "reserve_idle = 0: "
  q $IP "ALTER SYSTEM RESET idgen.reserve_idle" && q $IP "SELECT pg_reload_conf()" >/dev/null
  q $IP "CHECKPOINT" >/dev/null
  standby_init bench_idle_s $IP $IS idle_standby
  cluster_start bench_idle_s
  q $IP "ALTER SYSTEM SET synchronous_standby_names = 'idle_standby'" && q $IP "SELECT pg_reload_conf()" >/dev/null
  sleep 1
  printf '\n## Low traffic with a synchronous standby (synchronous_standby_names)\n'
  /usr/bin/python3 "$REPO/tests/bench/idle.py" "host=127.0.0.1 port=$IP user=postgres dbname=postgres" 2 "${ROUNDS:-3}" "sync standby: "
  cluster_stop bench_idle_s fast
  cluster_stop bench_idle fast
fi

if part created_at; then
  # A free created_at (issue 48): queries by the time inside a key against the hand-written key
  # range, the cost with the derivation off, the planning it adds (tests/bench/created_at.py).
  PGBIN=$PGBIN ROUNDS=${ROUNDS:-3} PGBENCH_SECONDS=$SECS python3 "$REPO/tests/bench/created_at.py" $PORT
fi

if part adopt; then
  # Adopted sequences (issue 59): an INSERT of 2M rows through an adopted IDENTITY column against
  # the same table with a plain IDENTITY (throughput ratio, goal >= 0.95), and nextval() of an
  # adopted sequence against snowflake_next() per call (goal <= 1.1; also net of the loop's own
  # cost, count(1) over the same series), in interleaved rounds (best of 3 within each).
  printf '\n## Adopted sequences (%s rounds)\n\n' "${ROUNDS:-3}"
  q $PORT "CREATE TABLE ad_plain (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v int);
           CREATE TABLE ad_adopted (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v int);
           CREATE SEQUENCE ad_seq;
           SELECT count(*) FROM idgen.adopt_sequence('ad_adopted_id_seq');
           SELECT count(*) FROM idgen.adopt_sequence('ad_seq')" >/dev/null
  printf '| round | INSERT 2M, plain IDENTITY (ns/row) | adopted IDENTITY | throughput ratio | snowflake_next() (ns/call) | nextval(adopted) | ratio | net of the loop | plain nextval() |\n|---|---|---|---|---|---|---|---|---|\n'
  insert2m() { q $PORT "TRUNCATE $1; SELECT round(bench_query('INSERT INTO $1 (v) SELECT g FROM generate_series(1, 2000000) g; TRUNCATE $1', 2000000)::numeric, 1)"; }
  per_call() { q $PORT "SELECT round(bench_per_row('$1', 2000000)::numeric, 1)"; }
  for r in $(seq 1 "${ROUNDS:-3}"); do
    ip=$(insert2m ad_plain); ia=$(insert2m ad_adopted)
    loop=$(per_call 1); sf=$(per_call 'snowflake_next()'); na=$(per_call "nextval(''ad_seq'')"); np=$(per_call "nextval(''s'')")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$r" "$ip" "$ia" \
      "$(python3 -c "print(f'{$ip / $ia:.2f}x')")" "$sf" "$na" "$(python3 -c "print(f'{$na / $sf:.2f}x')")" \
      "$(python3 -c "print(f'{($na - $loop) / ($sf - $loop):.2f}x')")" "$np"
  done
fi

if part online; then
  # Online key conversion (issue 60): a table of ONLINE_ROWS (10M) rows with an integer serial key
  # and three tables that reference it (rows/2, /5, /10), converted by idgen.convert_online while
  # pgbench clients run an application's mix at a steady rate (lock_timeout = 200ms). Reported:
  # the conversion's time and each step's, its locks that block the application (total, longest,
  # attempts), and the application's latency (p50, p99, max) during the conversion against the
  # same load before it (tests/bench/online_latency.py).
  OROWS=${ONLINE_ROWS:-10000000}
  printf '\n## Online key conversion (%s rows, three referencing tables)\n\n' "$OROWS"
  t0=$SECONDS
  q $PORT "CREATE TABLE oc_acct (id serial PRIMARY KEY, name text NOT NULL, n int);
           CREATE TABLE oc_orders (id bigserial PRIMARY KEY, acct_id int NOT NULL REFERENCES oc_acct ON DELETE CASCADE, amount int);
           CREATE TABLE oc_notes (id bigserial PRIMARY KEY, acct_id int REFERENCES oc_acct, body text);
           CREATE TABLE oc_profile (acct_id int PRIMARY KEY REFERENCES oc_acct, bio text);
           INSERT INTO oc_acct (name, n) SELECT 'a' || g, g FROM generate_series(1, $OROWS) g;
           INSERT INTO oc_orders (acct_id, amount) SELECT 1 + (g * 7) % $OROWS, g FROM generate_series(1, $OROWS / 2) g;
           CREATE INDEX oc_orders_acct ON oc_orders (acct_id);
           INSERT INTO oc_notes (acct_id, body) SELECT 1 + (g * 13) % $OROWS, 'n' FROM generate_series(1, $OROWS / 5) g;
           INSERT INTO oc_profile SELECT g, 'p' FROM generate_series(1, $OROWS / 10) g;
           ANALYZE oc_acct, oc_orders, oc_notes, oc_profile" >/dev/null
  printf 'setup: %s s\n\n' $((SECONDS - t0))
  {
    echo "\\set k random(1, $OROWS)"
    echo "\\set r random(1, 1000)"
    echo "BEGIN;"
    echo "SELECT a.name, count(o.id) FROM oc_acct a LEFT JOIN oc_orders o ON o.acct_id = a.id WHERE a.id = :k GROUP BY a.name;"
    echo "UPDATE oc_orders SET amount = amount + 1 WHERE acct_id = :k;"
    echo "INSERT INTO oc_acct (name, n) VALUES ('new', :r) RETURNING id AS a \\gset"
    echo "INSERT INTO oc_orders (acct_id, amount) VALUES (:a, :r);"
    echo "COMMIT;"
  } >"$WORK/oc_app.sql"
  # oc_app NAME SECONDS: the load for that long, each transaction's latency logged (pgbench -l).
  oc_app() {
    (cd "$WORK" && PGOPTIONS="-c lock_timeout=200ms" "$PGBIN/pgbench" -h 127.0.0.1 -p $PORT -U postgres -n -c 4 -j 2 -R 100 \
      -T "$2" -l --log-prefix="oc_$1" -f "$WORK/oc_app.sql" postgres >"$WORK/oc_$1.out" 2>&1) ||
      echo "application run $1: pgbench exited with an error (see $WORK/oc_$1.out)"
  }
  rm -f "$WORK"/oc_before* "$WORK"/oc_during*
  # The baseline: the same load for ONLINE_BASELINE_SECONDS (60 s: 6,000 transactions, 60 of
  # them in the slowest 1 %, for a p99 that two runs agree on better than 20 s gave).
  oc_app before "${ONLINE_BASELINE_SECONDS:-60}"
  # The pace docs/adopting.md suggests for an application with a 200 ms lock_timeout on 2 cores:
  # batches of 1,000 rows with 20 ms between them (ONLINE_BATCH_ROWS, ONLINE_BATCH_PAUSE).
  q $PORT "SELECT count(*) FROM idgen.convert_online('oc_acct', 'id', onto => 'sequence', batch_rows => ${ONLINE_BATCH_ROWS:-1000}, batch_pause => '${ONLINE_BATCH_PAUSE:-20ms}')" >/dev/null 2>&1
  printf 'batches of %s rows, %s apart\n' "${ONLINE_BATCH_ROWS:-1000}" "${ONLINE_BATCH_PAUSE:-20ms}"
  i=0
  while [ "$(q $PORT "SELECT state IN ('done', 'failed', 'stopped') FROM idgen.online_conversions WHERE table_name = 'public.oc_acct'")" != t ]; do
    i=$((i + 1))
    oc_app "during$i" 10
    [ $i -lt 360 ] || { echo "the conversion did not end within an hour"; break; }
  done
  q $PORT "SELECT 'conversion: ' || state || ', ' || round(extract(epoch FROM updated_at - started_at)::numeric, 1) || ' s; locks that block the application held '
                  || round(lock_ms_total::numeric, 1) || ' ms in total, ' || round(lock_ms_max::numeric, 1) || ' ms at most, in ' || lock_attempts || ' attempts'
             FROM idgen.online_conversions WHERE table_name = 'public.oc_acct'"
  q $PORT "SELECT '  step ' || step || ' ' || kind || ' ' || s.relation::regclass || ': '
                  || round(extract(epoch FROM done_at - coalesce(lag(done_at) OVER (ORDER BY step), c.started_at))::numeric, 1) || ' s'
                  || coalesce(', locks ' || round(lock_ms::numeric, 1) || ' ms in ' || attempts || ' attempt(s)', '')
             FROM idgen_internal.online_conversion_steps s JOIN idgen_internal.online_conversions c ON c.id = s.conversion
            WHERE c.relation_name = 'public.oc_acct' ORDER BY step"
  python3 "$REPO/tests/bench/online_latency.py" "$WORK"
fi

if part baseline; then
  # This tree against the build of BASELINE (a git revision), per row, on PostgreSQL 15:
  # tests/bench/baseline.sh builds it into a copy of PostgreSQL 15; tests/bench/baseline.py.
  if [ -z "${BASELINE:-}" ] || [ "$PG" != 15 ]; then
    printf '\n## Baseline: skipped (BASELINE=<git revision>, on PostgreSQL 15)\n'
  else
    source "$REPO/tests/bench/baseline.sh"
    BP=$(port 5)
    BASE_BIN=$(baseline_build "$BASELINE")
    trap 'cluster_stop bench immediate; PGBIN=$BASE_BIN cluster_stop bench_base immediate 2>/dev/null' EXIT
    PGBIN=$BASE_BIN cluster_init bench_base $BP "${BENCH_CONF[@]}"
    PGBIN=$BASE_BIN cluster_start bench_base
    q $BP "CREATE EXTENSION pg_idgen" >/dev/null
    q $BP "$BENCH_PER_ROW" >/dev/null
    for port in $PORT $BP; do
      q $port "SELECT idgen.segment_create('bench') WHERE NOT EXISTS (SELECT FROM idgen.segments WHERE biz_type = 'bench')" >/dev/null
    done
    PGBIN=$PGBIN ROUNDS=${ROUNDS:-5} ROWS=$ROWS python3 "$REPO/tests/bench/baseline.py" $PORT $BP \
      "this tree ($(git -C "$REPO" rev-parse --short HEAD))" "$BASELINE"
    PGBIN=$BASE_BIN cluster_stop bench_base fast
  fi
fi
