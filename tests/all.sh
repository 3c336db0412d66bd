#!/usr/bin/env bash
# The test command: every layer, then one summary line.
#   1. formatting and lints          (cargo fmt --check, cargo clippy; on PostgreSQL 15 only)
#   2. the core crate's tests        (cargo test -p pg_idgen_core; on PostgreSQL 15 only)
#   3. golden SQL tests              (pg_regress against a cluster started here, counted check by
#                                     check; what the extension's SQL does is tested here, not in
#                                     #[pg_test]s, whose build cost more than the rest of a layer)
#   4. system tests                  (tests/system/*.sh: many sessions, clock steps, kill -9, ...)
# PG=16, 17 or 18 runs it against that PostgreSQL (tests/helpers/pg_versions.sh); SYSTEM_TESTS="a b" runs
# only those system tests (tests/system/a.sh, b.sh). IDGEN_PART=build runs 1 to 3 (building and
# installing pg_idgen on the way), IDGEN_PART=system only 4, against what the build part installed:
# tests/all_versions.sh runs one major's system tests while it builds the next.
passed=0
failed=0
skipped=0
failures=()
skips=()
# Setup (Debian packages, cargo-pgrx, fetching or building this PostgreSQL, building pg_idgen)
# runs under `set -e`: a step that fails stops the run. The closing lines still come, naming it,
# so the summary never goes missing and CI's tail says what broke.
stage="setup: PostgreSQL ${PG:-15} (tests/helpers/pg_versions.sh)"
closed=
close_run() {
  local status=$?
  [ -z "$closed" ] || return 0
  echo
  echo "--- $stage (exit $status): stopped the run; its output is above"
  failures+=("$stage")
  (IFS=';' && echo "failed: ${failures[*]}")
  echo "summary: $passed passed, $((failed + 1)) failed, $skipped skipped"
}
trap close_run EXIT
part=${IDGEN_PART:-all}
case $part in all | build | system) ;; *) stage="IDGEN_PART=$part: it is all, build or system"; exit 2 ;; esac
# Builds outside the clone (use_shared_target_root in tools/rust_toolchain.sh), before lib.sh
# picks this major's target directory.
source "$(dirname "${BASH_SOURCE[0]}")/../tools/rust_toolchain.sh"
use_shared_target_root
source "$(dirname "${BASH_SOURCE[0]}")/helpers/lib.sh"
cd "$REPO"

record() { # record NAME STATUS: 0 passed, 77 skipped (its reason in SKIP_REASON), else failed
  case $2 in
    0) passed=$((passed + 1)) ;;
    77) skipped=$((skipped + 1)); skips+=("$1${SKIP_REASON:+ ($SKIP_REASON)}") ;;
    *) failed=$((failed + 1)); failures+=("$1") ;;
  esac
}

stage="setup: installing what is missing (ensure_deps)"
ensure_deps

# took NAME START: keeps how long a step of the build part took (since SECONDS was START), for the
# line of times that ends the build part: where a run's time goes.
step_times=()
took() { step_times+=("$1 $((SECONDS - $2)) s"); }

step() { # step NAME COMMAND...: runs it, records pass or fail, goes on either way
  local name=$1 start=$SECONDS
  shift
  log "$name"
  stage="$name"
  if "$@"; then record "$name" 0; else record "$name" 1; fi
  took "$name" "$start"
}

# cargo_tests NAME COMMAND...: a cargo test run, counted test by test from its "test result" lines.
cargo_tests() {
  local name=$1 out status cp cf start=$SECONDS
  shift
  log "$name"
  out=$(mktemp)
  set +e
  "$@" 2>&1 | tee "$out"
  status=${PIPESTATUS[0]}
  set -e
  read -r cp cf < <(sed -n 's/.*test result: [a-zA-Z]*\. \([0-9]*\) passed; \([0-9]*\) failed.*/\1 \2/p' "$out" |
    awk '{p += $1; f += $2} END {print p + 0, f + 0}')
  passed=$((passed + cp))
  failed=$((failed + cf))
  while read -r t; do failures+=("$name: $t"); done < <(sed -n 's/^test \(.*\) \.\.\. FAILED$/\1/p' "$out")
  if [ "$status" -ne 0 ] && [ "$cf" -eq 0 ]; then record "$name (exit $status)" 1; fi
  rm -f "$out"
  took "$name" "$start"
}

$SUDO mkdir -p "$WORK" && $SUDO chown postgres "$WORK"
if [ "$part" != system ]; then
if [ "$PG" = 15 ]; then
  step "cargo fmt --check" cargo fmt --all -- --check
  step "cargo clippy" cargo clippy --all-targets --features "$PG_FEATURES" --no-default-features -- -D warnings
  step "cargo clippy (core crate)" cargo clippy -p pg_idgen_core --all-targets -- -D warnings
  step "released SQL scripts unchanged" bash tests/check_released.sh
  step "no import circle between files" bash tests/import_circles.sh
  step "CONTRIBUTING.md's file table is what the files say" bash tests/layout_doc.sh
  step "relative links of the Markdown files resolve" python3 tools/check_links.py
  # The core crate needs no PostgreSQL: its unit tests, and the models in a release build.
  cargo_tests "core crate: unit tests and models" cargo test -p pg_idgen_core --release -- --include-ignored
fi

stage="setup: building and installing pg_idgen for PostgreSQL $PG"
start=$SECONDS
install_extension
took "building and installing" "$start"
if [ "$PG" = 15 ]; then
  install_sql="$("$PG_CONFIG" --sharedir)/extension/pg_idgen--$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1).sql"
  step "each function's SQL comment is its doc comment" bash tests/sql_comments.sh "$install_sql"
  step "the install script in one order, whatever order pgrx wrote" bash tests/canonical_sql.sh "$install_sql"
fi

start=$SECONDS
log "pg_regress golden tests"
stage="pg_regress golden tests"
REGRESS_PORT=$(port 0)
cluster_init regress $REGRESS_PORT
cluster_start regress
set +e
run_golden $REGRESS_PORT
status=$?
set -e
# Counted check by check ("-- check:" lines of the golden files; tests/helpers/regress_checks.py):
# a difference fails the checks whose part of the output it touches.
[ $status -eq 0 ] || head -100 tests/pg_regress/regression.diffs 2>/dev/null
{ read -r cp cf; while read -r t; do failures+=("pg_regress: $t"); done; } \
  < <(python3 tests/helpers/regress_checks.py tests/pg_regress "$status" || echo "0 1")
passed=$((passed + cp))
failed=$((failed + cf))
cluster_stop regress
took "pg_regress golden tests" "$start"
log "the build part's steps took: $(printf '%s, ' "${step_times[@]}" | sed 's/, $//')"
fi

# The system tests run side by side, IDGEN_TEST_LANES (3) at a time: each has its ports (port in
# tests/helpers/lib.sh) and clusters of its own, and most of their time is waiting (clocks,
# timeouts, restarts). The lanes are lock files in IDGEN_LANES_DIR, which tests/all_versions.sh
# gives the system tests of every major, run at once: 3 in all, not 3 per major. A test whose file
# has a line "# idgen-test: alone" (it changes the installation the major's other tests load), or
# "# idgen-test: alone on N" (only on major N), runs with no other test of its major. The longest
# first, by the times of the last run ($WORK/system_test_seconds), so that the lanes end together.
# Each test's output is kept and shown whole when it ends, so that the end of the run (all CI
# shows of a long log) can repeat what a failed one said.
logs=$(mktemp -d)
if [ "$part" = build ]; then
  system_tests=
elif [ -n "${SYSTEM_TESTS:-}" ]; then
  system_tests=$(for n in $SYSTEM_TESTS; do echo "tests/system/$n.sh"; done)
else
  system_tests=$(ls tests/system/*.sh)
fi
lanes=${IDGEN_TEST_LANES:-3}
case $lanes in [1-9] | [1-9][0-9]) ;; *) stage="IDGEN_TEST_LANES=$lanes: a number of lanes, 1 to 99"; exit 2 ;; esac
if [ -z "${IDGEN_LANES_DIR:-}" ]; then
  IDGEN_LANES_DIR=$logs/lanes
  mkdir -p "$IDGEN_LANES_DIR"
fi
times_file="$WORK/system_test_seconds"
# by_time: the tests, the longest of the last run first (unknown ones first of all).
by_time() {
  local t name secs
  for t in $system_tests; do
    name=$(basename "$t")
    secs=$(awk -v n="$name" '$1 == n {s = $2} END {print s + 0}' "$times_file" 2>/dev/null || echo 0)
    [ "$secs" != 0 ] || secs=100000
    echo "$secs $t"
  done | sort -rn -k1,1 | awk '{print $2}'
}
# run_system_test FILE: runs it into $logs/NAME, then writes NAME.status and NAME.secs. A test that
# has not ended after IDGEN_TEST_TIMEOUT seconds (20 minutes; the longest takes under 6 on a warm
# machine) is stopped (TERM to its process group, KILL a minute later) and fails with what it printed
# so far: a test that hangs names itself instead of holding the run past CI's 90 minutes.
test_timeout=${IDGEN_TEST_TIMEOUT:-1200}
timed_out() { [ "$1" = 124 ] || [ "$1" = 137 ]; } # timed_out STATUS: timeout's exit after TERM, KILL
# take_lane: waits for one of the lanes to be free and holds it (an flock on fd 9) until the shell
# that called it ends; run_system_test runs in a shell of its own. Every holder ends within its
# test's limit, so a wait past 3 hours (beyond CI's 90 minutes) is a fault of the run: it says so.
take_lane() {
  local i waited=0
  while :; do
    for ((i = 0; i < lanes; i++)); do
      exec 9>>"$IDGEN_LANES_DIR/$i"
      if flock -n 9; then return 0; fi
      exec 9>&-
    done
    if ((waited >= 10800)); then
      echo "  FAIL: no test lane of $IDGEN_LANES_DIR came free in $waited s" >&2
      return 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
}
run_system_test() {
  local name start status=0
  name=$(basename "$1")
  if ! take_lane 2>"$logs/$name"; then
    echo 0 >"$logs/$name.secs"
    echo 1 >"$logs/$name.status"
    return
  fi
  start=$SECONDS
  # The test and what it starts (servers among them) never hold the lane's lock (9>&-).
  timeout --kill-after=60 "$test_timeout" bash "$1" >"$logs/$name" 2>&1 9>&- || status=$?
  if timed_out "$status"; then
    echo "  FAIL: $name had not ended after $test_timeout s (tests/all.sh stopped it, exit $status); its last lines are above" >>"$logs/$name"
  fi
  echo $((SECONDS - start)) >"$logs/$name.secs"
  echo "$status" >"$logs/$name.status"
  # The clusters of a test that passed (or could not run) go; a failed test's stay for a look.
  # One whose server still runs (its postmaster.pid there) stays too.
  local made="$WORK/clusters_of_${name%.sh}" dir
  if [ "$status" = 0 ] || [ "$status" = 77 ]; then
    while read -r dir; do
      case $dir in "$WORK"/?*) ;; *) continue ;; esac
      [ -e "$dir/postmaster.pid" ] || $SUDO rm -rf "$dir"
    done < <(sort -u "$made" 2>/dev/null)
  fi
  $SUDO rm -f "$made"
}
# finish_system_test NAME: shows its output and records it.
finish_system_test() {
  local name=$1 status secs
  status=$(cat "$logs/$name.status")
  secs=$(cat "$logs/$name.secs")
  log "system test $name ($secs s, exit $status)"
  cat "$logs/$name"
  echo "$name $secs" >>"$logs/seconds"
  # A test that cannot run here exits 77 after a line "  skipped: why"; one that ran, but left a
  # part out, says "  skipped: ..." for that part and counts as passed, its part as skipped.
  SKIP_REASON=$(sed -n 's/^  skipped: //p' "$logs/$name" | head -1)
  record "system test $name" "$status"
  if [ "$status" = 0 ]; then
    while read -r why; do
      [ -n "$why" ] && skipped=$((skipped + 1)) && skips+=("part of $name ($why)")
    done < <(sed -n 's/^  skipped: //p' "$logs/$name")
  fi
  if [ "$status" != 0 ] && [ "$status" != 77 ]; then
    { echo "--- $name (exit $status): its failed checks, or its last lines"
      if ! timed_out "$status" && grep -q 'FAIL:' "$logs/$name"; then
        grep -A4 'FAIL:' "$logs/$name" | head -40
      else tail -15 "$logs/$name"; fi; } >>"$logs/failed"
  fi
}
declare -A running=() # pid -> test name
# wait_one: waits for one running test to end and finishes it.
wait_one() {
  local pid
  wait -n -p pid "${!running[@]}" || true
  finish_system_test "${running[$pid]}"
  unset "running[$pid]"
}
stage="system tests"
set +e
# is_alone FILE: it says "# idgen-test: alone", or "# idgen-test: alone on N" and this is major N.
is_alone() {
  local line
  line=$(grep -m1 '^# idgen-test: alone' "$1") || return 1
  [[ $line =~ ^#\ idgen-test:\ alone\ on\ ([0-9]+) ]] || return 0
  [ "${BASH_REMATCH[1]}" = "$PG" ]
}
alone=()
for t in $(by_time); do
  if is_alone "$t"; then alone+=("$t"); continue; fi
  while ((${#running[@]} >= lanes)); do wait_one; done
  run_system_test "$t" &
  running[$!]=$(basename "$t")
done
while ((${#running[@]})); do wait_one; done
for t in "${alone[@]}"; do
  (run_system_test "$t")
  finish_system_test "$(basename "$t")"
done
set -e
# This run's times, kept for the next run's order (those of tests this run did not run stay).
if [ -s "$logs/seconds" ]; then
  [ -f "$times_file" ] || $SUDO touch "$times_file"
  awk 'NR == FNR {new[$1] = 1; print; next} !($1 in new)' "$logs/seconds" "$times_file" >"$logs/seconds.all"
  $SUDO cp "$logs/seconds.all" "$times_file"
fi

echo
if [ -s "$logs/failed" ]; then cat "$logs/failed"; fi
rm -rf "$logs"
closed=1
if ((${#skips[@]})); then (IFS=';' && echo "skipped: ${skips[*]}"); fi
if ((${#failures[@]})); then (IFS=';' && echo "failed: ${failures[*]}"); fi
echo "summary: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
