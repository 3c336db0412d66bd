#!/usr/bin/env bash
# Monitoring with the real programs from Debian (monitoring/, docs/monitoring.md):
#   - a member of pg_monitor reads every status view, and not the lease numbers;
#   - prometheus-postgres-exporter with monitoring/postgres_exporter.yaml and
#     prometheus-sql-exporter with monitoring/sql_exporter.yml, both as that role: N IDs made ->
#     the counter up by exactly N; a segment type drained -> its IDs left fall by what was taken;
#     a lease released on a coordinator -> the counts per state change; refusals counted by reason;
#   - promtool check rules and test rules (monitoring/alerts_test.yml);
#   - CloudNativePG (monitoring/cloudnative-pg.yaml): its queries run as its exporter runs them
#     (read-only, its search_path, on standbys too), and every alert test again from its metric
#     names through monitoring/cloudnative-pg_rules.yml (and fails without one of the rules);
#   - Prometheus itself on both exporters with monitoring/alerts.yml: libfaketime moves a node's
#     clock back past idgen.max_drift -> IdgenGenerationRefused (clock_behind) and
#     IdgenDriftNearMaxDrift fire, and clear once the clock is back; a coordinator stopped ->
#     IdgenLeaseNearExpiry, then IdgenLeaseLost fire, and clear once it is back.
# (Controls, run by hand: with the threshold of IdgenDriftNearMaxDrift at 0.9 instead of 0.8,
# promtool test rules fails; with the GRANTs to pg_monitor taken out of the install script, the
# first checks fail with "permission denied for view segment_status".)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
NODE=$(port 0) COORD=$(port 1) LNODE=$(port 2) PGX1=$(port 3) PGX2=$(port 4) SQLX=$(port 5) PROM=$(port 6) PGX3=$(port 7)
OUT="$WORK/monitoring"
CLOCK="$OUT/clock.faketime"
rm -rf "$OUT" && mkdir -p "$OUT" && chmod 777 "$WORK" "$OUT"
if ! apt_install_missing prometheus prometheus-postgres-exporter prometheus-sql-exporter curl >"$OUT/apt.log" 2>&1; then
  skip_test "apt-get could not install prometheus, prometheus-postgres-exporter and prometheus-sql-exporter ($(tail -1 "$OUT/apt.log"))"
fi
pids=()
alive() { local p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
cleanup() {
  local p i
  # Gone before a next run binds the same ports: TERM, up to 10 s, then KILL.
  # (set -e is on: a process already gone must not end the cleanup.)
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for i in $(seq 1 20); do alive || break; sleep 0.5; done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  cluster_stop mon_node immediate
  cluster_stop mon_coord immediate
  cluster_stop mon_lnode immediate
}
trap cleanup EXIT
echo "+0" >"$CLOCK" && chmod 666 "$CLOCK"
for port in $PGX1 $PGX2 $PGX3 $SQLX $PROM; do
  if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
    echo "  FAIL: port $port is in use (a program of an earlier run?)"
    exit 1
  fi
done

cluster_init mon_node $NODE "idgen.worker_id = 1" "idgen.max_drift = '5s'" "idgen.max_wait = '100ms'"
cluster_start_faketime mon_node "$CLOCK"
cluster_init mon_coord $COORD "idgen.worker_id = 2" "idgen.worker_lease_grace = '1s'"
cluster_start mon_coord
cluster_init mon_lnode $LNODE "idgen.worker_id_source = lease" "idgen.worker_lease_ttl = '12s'" \
  "idgen.worker_lease_conninfo = 'host=127.0.0.1 port=$COORD dbname=postgres user=postgres'"
cluster_start mon_lnode
for p in $NODE $COORD $LNODE; do
  q $p "CREATE EXTENSION pg_idgen; CREATE ROLE idgen_monitor LOGIN IN ROLE pg_monitor" >/dev/null
done
quietly() { "$@" >/dev/null; }
fails() { ! "$@"; }
mon() { psql -h 127.0.0.1 -p "$1" -U idgen_monitor -d postgres -X -q -A -t -v ON_ERROR_STOP=1 -c "$2"; }

phase "a member of pg_monitor reads every status view, without the lease numbers"
q $NODE "SELECT idgen.segment_create('order', step => 1000)" >/dev/null
views="idgen.layouts idgen.status idgen.streams idgen.refusals idgen.worker_status idgen.segment_status
  idgen.segment_allocators idgen.read_horizon_holders idgen.public_keys"
for v in $views; do
  check "pg_monitor reads $v" quietly mon $NODE "SELECT count(*) FROM $v"
done
check "pg_monitor reads idgen.worker_leases without its lease numbers" quietly mon $COORD \
  "SELECT count(*) FROM (SELECT worker_id, code, state, host, pid, ttl, acquired_at, heartbeat_at, expires_at, released_at, last_ts, next_start_after FROM idgen.worker_leases) l"
out=$(mon $COORD "SELECT lease FROM idgen.worker_leases" 2>&1 || true)
check "... and not the lease numbers (a holder's proof)" grep -q "permission denied" <<<"$out"
out=$(mon $NODE "SELECT lease FROM idgen.worker_status" 2>&1)
check "idgen.worker_status shows pg_monitor no lease number" eq "$(tr -d '\n' <<<"$out")" ""
check "idgen.refusals lists every stream and reason, zero at the start" eq \
  "$(mon $NODE "SELECT count(*), sum(refusals) FROM idgen.refusals")" "42|0"

phase "the exporters, as idgen_monitor"
start_pgx() { # start_pgx PGPORT LISTENPORT
  DATA_SOURCE_NAME="postgresql://idgen_monitor@127.0.0.1:$1/postgres?sslmode=disable" \
    prometheus-postgres-exporter --extend.query-path="$REPO/monitoring/postgres_exporter.yaml" \
    --disable-default-metrics --disable-settings-metrics --web.listen-address="127.0.0.1:$2" \
    >"$OUT/pgx.$2.log" 2>&1 &
  pids+=($!)
}
start_pgx $NODE $PGX1
start_pgx $LNODE $PGX2
sed -e "s|postgres://idgen_monitor@127.0.0.1:5432/postgres|postgres://idgen_monitor@127.0.0.1:$NODE/postgres|" \
  -e "s|interval: 15s|interval: 1s|" "$REPO/monitoring/sql_exporter.yml" >"$OUT/sql_exporter.yml"
prometheus-sql-exporter -config.file "$OUT/sql_exporter.yml" -web.listen-address "127.0.0.1:$SQLX" \
  >"$OUT/sqlx.log" 2>&1 &
pids+=($!)
# metric PORT 'NAME{LABELS}' (labels as the exposition writes them, in part): the value, or nothing.
metric() {
  curl -s "http://127.0.0.1:$1/metrics" | grep -F "$2" | grep -v '^#' | head -1 | awk '{print $NF}'
}
num() { python3 -c "import sys; print(int(float(sys.argv[1])))" "$1"; }
wait_metric() { # wait_metric PORT PATTERN: up to 20 s for the metric to appear
  local i
  for i in $(seq 1 40); do [ -n "$(metric "$1" "$2")" ] && return 0; sleep 0.5; done
  return 1
}
check "postgres_exporter serves pg_idgen's metrics" wait_metric $PGX1 'pg_idgen_stream_ids_issued_total{'
check "sql_exporter serves them too" wait_metric $SQLX 'sql_idgen_stream{col="ids_issued_total"'
show_errors "$OUT/pgx.$PGX1.log"
sfm() { curl -s "http://127.0.0.1:$PGX1/metrics" | grep '^pg_idgen_stream_ids_issued_total{' | grep 'stream="snowflake"' | awk '{print $NF}'; }
before=$(num "$(sfm)")
q $NODE "SELECT count(snowflake_next()) FROM generate_series(1, 1000)" >/dev/null
after=$(num "$(sfm)")
check "1000 Snowflake IDs made: the counter is up by exactly 1000 ($before -> $after)" eq "$((after - before))" 1000
sqlm() { curl -s "http://127.0.0.1:$SQLX/metrics" | grep '^sql_idgen_stream{' | grep 'col="ids_issued_total"' | grep 'stream="snowflake"' | awk '{print $NF}'; }
sleep 2
check "sql_exporter agrees ($(sqlm))" eq "$(num "$(sqlm)")" "$after"

left() { curl -s "http://127.0.0.1:$PGX1/metrics" | grep '^pg_idgen_segment_ids_left{' | grep 'biz_type="order"' | awk '{print $NF}'; }
q $NODE "SELECT segment_next('order')" >/dev/null
l1=$(num "$(left)")
q $NODE "SELECT count(segment_next('order')) FROM generate_series(1, 10)" >/dev/null
l2=$(num "$(left)")
check "10 segment IDs taken: IDs left fall by 10 ($l1 -> $l2)" eq "$((l1 - l2))" 10

# Prometheus's conventions (counters end in _total, Unix times in _timestamp_seconds): clean.
curl -s "http://127.0.0.1:$PGX1/metrics" | grep -E '^(# (HELP|TYPE) )?pg_idgen_' >"$OUT/pg_idgen_metrics.txt"
check "promtool check metrics: pg_idgen's metrics follow the conventions" eq \
  "$(promtool check metrics <"$OUT/pg_idgen_metrics.txt" 2>&1)" ""
check "... (it sees them: $(grep -c '^# TYPE' "$OUT/pg_idgen_metrics.txt") metrics)" test "$(grep -c '^# TYPE' "$OUT/pg_idgen_metrics.txt")" -gt 30
printf '# HELP pg_idgen_x_ids a counter without _total\n# TYPE pg_idgen_x_ids counter\npg_idgen_x_ids 1\n' >"$OUT/bad_metrics.txt"
check "control: promtool check metrics finds a counter without _total" ne "$(promtool check metrics <"$OUT/bad_metrics.txt" 2>&1)" ""
check "the recording rules and the CloudNativePG ConfigMap are what tools/monitoring_rules.py writes" python3 "$REPO/tools/monitoring_rules.py" --check

start_pgx $COORD $PGX3
pids_coord=$!
held() { curl -s "http://127.0.0.1:$PGX3/metrics" | grep '^pg_idgen_coordinator_leases{' | grep "state=\"$1\"" | awk '{print $NF}'; }
wait_metric $PGX3 'pg_idgen_coordinator_leases{' || true
r0=$(num "$(held released)")
lease=$(q $COORD "SELECT worker_id || ',' || lease FROM idgen.worker_acquire('app-1', '1 min')")
h1=$(num "$(held held)")
q $COORD "SELECT idgen.worker_release(${lease%,*}, 'app-1', now(), ${lease#*,})" >/dev/null
r1=$(num "$(held released)")
check "a lease released on the coordinator: released leases up by one ($r0 -> $r1; $h1 held before)" eq "$((r1 - r0))" 1
kill "$pids_coord" 2>/dev/null || true

# A refusal counted by reason: the node's clock 30 s back, past idgen.max_drift (5 s).
ref() { curl -s "http://127.0.0.1:$PGX1/metrics" | grep '^pg_idgen_refusals_total{' | grep 'reason="clock_behind"' | grep 'stream="snowflake"' | awk '{print $NF}'; }
check "no clock_behind refusal yet" eq "$(num "$(ref)")" 0

phase "promtool"
check "promtool check rules" quietly promtool check rules "$REPO/monitoring/alerts.yml" "$REPO/monitoring/sql_exporter_rules.yml"
check "promtool test rules" quietly promtool test rules "$REPO/monitoring/alerts_test.yml"

phase "CloudNativePG: the ConfigMap's queries as its exporter runs them, and the alerts from its names"
cnpg=$(python3 "$REPO/tests/system/cnpg_queries.py" "$REPO/monitoring/cloudnative-pg.yaml" $NODE idgen_monitor postgres)
check "each query of monitoring/cloudnative-pg.yaml runs read-only with CloudNativePG's search_path, as a member of pg_monitor, on every instance, and returns the columns its metrics name" \
  eq "$(grep '^problem:' <<<"$cnpg")" ""
check "... the names CloudNativePG gives them ($(grep -vc '^problem:' <<<"$cnpg")) are those cloudnative-pg_rules.yml records" eq \
  "$(grep -v '^problem:' <<<"$cnpg" | sort)" "$(grep -o 'expr: cnpg_.*' "$REPO/monitoring/cloudnative-pg_rules.yml" | cut -c7- | sort)"
check "promtool check rules: cloudnative-pg_rules.yml" quietly promtool check rules "$REPO/monitoring/cloudnative-pg_rules.yml"
# alerts_test.yml with its input series under CloudNativePG's names (cnpg_pg_idgen_...), the
# recording rules evaluated before the alerts (a Prometheus server sees a recorded value one
# evaluation later): every alert fires and clears as before.
cnpg_test() { # cnpg_test RULES: alerts_test.yml so, into $OUT/alerts_test_cnpg.yml
  sed -e '/series:/s/pg_idgen_/cnpg_pg_idgen_/' \
    -e "s|^  - alerts.yml\$|  - $1\n  - $REPO/monitoring/alerts.yml\ngroup_eval_order: [pg_idgen_cloudnative_pg, pg_idgen]|" \
    "$REPO/monitoring/alerts_test.yml" >"$OUT/alerts_test_cnpg.yml"
}
cnpg_test "$REPO/monitoring/cloudnative-pg_rules.yml"
check "(the copy reads only CloudNativePG's names)" eq "$(grep -- '- series:' "$OUT/alerts_test_cnpg.yml" | grep -vc "series: 'cnpg_pg_idgen_")" 0
check "promtool test rules: every alert from CloudNativePG's names, through cloudnative-pg_rules.yml" \
  quietly promtool test rules "$OUT/alerts_test_cnpg.yml"
grep -v -e 'record: pg_idgen_stream_drift_seconds$' -e 'expr: cnpg_pg_idgen_stream_drift_seconds$' \
  "$REPO/monitoring/cloudnative-pg_rules.yml" >"$OUT/cnpg_rules_short.yml"
cnpg_test "$OUT/cnpg_rules_short.yml"
check "control: without the rule for the drift, promtool test rules fails" fails quietly promtool test rules "$OUT/alerts_test_cnpg.yml" 2>/dev/null

phase "Prometheus on the exporters, with the alerts"
# The alerts as shipped, but for IdgenReadHorizonHeld's threshold: 10 s instead of 300 (the
# operator's to set, docs/monitoring.md).
sed 's/(pg_idgen_read_horizon_age_seconds) > 300$/(pg_idgen_read_horizon_age_seconds) > 10/' \
  "$REPO/monitoring/alerts.yml" >"$OUT/alerts.yml"
check "the copy differs from the shipped alerts in that threshold only" eq \
  "$(diff "$REPO/monitoring/alerts.yml" "$OUT/alerts.yml" | grep -c '^[<>]')" 2
cat >"$OUT/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $OUT/alerts.yml
  - $REPO/monitoring/sql_exporter_rules.yml
scrape_configs:
  - job_name: pg_idgen
    static_configs:
      - targets: ['127.0.0.1:$PGX1']
        labels: {node: clock}
      - targets: ['127.0.0.1:$PGX2']
        labels: {node: lease}
  - job_name: pg_idgen_sql
    static_configs:
      - targets: ['127.0.0.1:$SQLX']
EOF
check "promtool check config" quietly promtool check config "$OUT/prometheus.yml"
prometheus --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$OUT/tsdb" \
  --web.listen-address="127.0.0.1:$PROM" >"$OUT/prometheus.log" 2>&1 &
pids+=($!)
# alert NAME [LABEL=VALUE]: the state of the alert in Prometheus now (firing, pending or none).
alert() {
  curl -s "http://127.0.0.1:$PROM/api/v1/alerts" | python3 -c '
import json, sys
name, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
alerts = json.load(sys.stdin)["data"]["alerts"]
states = [a["state"] for a in alerts if a["labels"].get("alertname") == name
          and all(a["labels"].get(k) == v for k, v in want.items())]
print("firing" if "firing" in states else (states[0] if states else "none"))' "$@"
}
until_alert() { # until_alert STATE SECONDS NAME [LABEL=VALUE]...
  local state=$1 secs=$2 i
  shift 2
  for i in $(seq 1 "$((secs * 2))"); do [ "$(alert "$@")" = "$state" ] && return 0; sleep 0.5; done
  echo "    $* is $(alert "$@") after $secs s" >&2
  return 1
}
wait_ready_prom() { local i; for i in $(seq 1 60); do curl -sf "http://127.0.0.1:$PROM/-/ready" >/dev/null && return 0; sleep 0.5; done; return 1; }
check "Prometheus is up" wait_ready_prom
check "no alert fires on healthy nodes" until_alert none 10 IdgenGenerationRefused
sleep 5
check "... none at all (the lease node's lease is granted)" eq "$(curl -s "http://127.0.0.1:$PROM/api/v1/alerts" | python3 -c 'import json,sys; print(len([a for a in json.load(sys.stdin)["data"]["alerts"] if a["state"] == "firing"]))')" 0

phase "segment waits and the read horizon, with their alerts"
# Waits for a range: a new type's first range is no wait the alert counts; a cache that runs dry is.
waited() { curl -s "http://127.0.0.1:$PGX1/metrics" | grep '^pg_idgen_segment_refills_waited_total{' | grep "biz_type=\"$1\"" | awk '{print $NF}'; }
q $NODE "SELECT idgen.segment_create('fresh', step => 1000); SELECT idgen.segment_create('starved', step => 10)" >/dev/null
sleep 2 # Prometheus scrapes both at 0 first
q $NODE "SELECT segment_next('fresh')" >/dev/null
check "a new type's first range: refills_waited_total stays 0" eq "$(num "$(waited fresh)")" 0
q $NODE "SELECT count(segment_next('starved')) FROM generate_series(1, 2000)" >/dev/null
check "a type whose ranges are used up faster than they come: refills_waited_total counts the waits ($(waited starved))" \
  test "$(num "$(waited starved)")" -gt 0

# The read horizon held by a session idle in a transaction after taking an ID.
horizon() { curl -s "http://127.0.0.1:$PGX1/metrics" | grep "^pg_idgen_read_horizon_$1{" | grep 'stream="snowflake"' | awk '{print $NF}'; }
check "no transaction holds the read horizon: 0 holders, age 0" eq "$(num "$(horizon holders)") $(num "$(horizon age_seconds)")" "0 0"
psql -h 127.0.0.1 -p $NODE -U postgres -X -q -c "BEGIN" -c "SELECT snowflake_next()" -c "SELECT pg_sleep(40)" >/dev/null 2>&1 &
pids+=($!)
holder=$!
sleep 3
check "a session in a transaction after taking an ID: 1 holder, an age of seconds ($(horizon age_seconds))" eq \
  "$(num "$(horizon holders)") $(python3 -c "import sys; print(float(sys.argv[1]) >= 2)" "$(horizon age_seconds)")" "1 True"

check "IdgenSegmentWaits fires for the type that waited" until_alert firing 30 IdgenSegmentWaits biz_type=starved
check "... and not for the new type" eq "$(alert IdgenSegmentWaits biz_type=fresh)" none
check "IdgenReadHorizonHeld fires (its threshold set to 10 s here, as an operator sets it)" until_alert firing 40 IdgenReadHorizonHeld stream=snowflake
kill "$holder" 2>/dev/null || true
# (pg_terminate_backend waits up to 10 s for the backend to be gone; the exporter's answer can
# still be its last one for a moment, so it is read until it says 0, for at most 10 s.)
q $NODE "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(40)'" >/dev/null
holders_gone() { local i; for i in $(seq 1 20); do [ "$(num "$(horizon holders)")" = 0 ] && return 0; sleep 0.5; done; num "$(horizon holders)"; return 1; }
check "the holder gone: 0 holders (within 10 s)" holders_gone
check "... and IdgenReadHorizonHeld clears" until_alert none 30 IdgenReadHorizonHeld stream=snowflake

phase "fault: libfaketime moves the node's clock 30 s back, past idgen.max_drift (5 s)"
q $NODE "SELECT snowflake_next()" >/dev/null
echo "-30s" >"$CLOCK"
sleep 1
for i in 1 2 3; do q $NODE "SELECT snowflake_next()" >/dev/null 2>&1 && echo "    an ID was made with the clock 30 s back" >&2; done
check "3 IDs refused: the clock_behind counter is 3" eq "$(num "$(ref)")" 3
check "IdgenGenerationRefused fires for snowflake, clock_behind" until_alert firing 30 IdgenGenerationRefused stream=snowflake reason=clock_behind
check "IdgenDriftNearMaxDrift fires for the snowflake stream" until_alert firing 30 IdgenDriftNearMaxDrift stream=snowflake
curl -s "http://127.0.0.1:$PGX1/metrics" | grep -E '^pg_idgen_(refusals_total\{.*clock_behind.*snowflake|stream_drift_seconds\{.*snowflake|node_max_drift)' >"$OUT/scrape_excerpt.txt"
curl -s "http://127.0.0.1:$PROM/api/v1/alerts" >"$OUT/alerts_firing.json"
echo "+0" >"$CLOCK"
sleep 1
check "the clock back: IDs are made again" quietly q $NODE "SELECT snowflake_next()"
check "IdgenDriftNearMaxDrift clears" until_alert none 30 IdgenDriftNearMaxDrift stream=snowflake
check "IdgenGenerationRefused clears a minute after the last refusal" until_alert none 100 IdgenGenerationRefused stream=snowflake reason=clock_behind

phase "fault: the lease node's coordinator stopped"
check "the lease node leases" eq "$(q $LNODE "SELECT state FROM idgen.worker_status")" leased
cluster_stop mon_coord fast
check "IdgenLeaseNearExpiry fires" until_alert firing 30 IdgenLeaseNearExpiry node=lease
check "IdgenLeaseLost fires once the lease has lapsed for 30 s" until_alert firing 60 IdgenLeaseLost node=lease
out=$(q $LNODE "SELECT snowflake_next()" 2>&1 || true)
check "Snowflake IDs are refused there" grep -q "lease of worker id .* has lapsed" <<<"$out"
check "... and counted as lease_lapsed" eq \
  "$(q $LNODE "SELECT refusals FROM idgen.refusals WHERE stream = 'snowflake' AND reason = 'lease_lapsed'")" 1
cluster_start mon_coord
check "the coordinator back: IdgenLeaseLost clears" until_alert none 60 IdgenLeaseLost node=lease
check "... and IdgenLeaseNearExpiry" until_alert none 30 IdgenLeaseNearExpiry node=lease
echo "  scrape excerpt (postgres_exporter, clock 30 s back):"
sed 's/^/    /' "$OUT/scrape_excerpt.txt"
finish
