#!/usr/bin/env bash
# `make test`: every supported PostgreSQL in one run, ending with one summary line for all of them:
#   15: the whole test command (tests/all.sh), but the two tests across majors (below);
#   16, 17, 18 and 19: the pg_regress golden files, and the system tests of what
#     differs most between versions: clock steps and crashes (Snowflake IDs and UUIDv7s), backfills (a
#     backend's process number, arrays), a free created_at (the planner's trees; PostgreSQL 17's
#     uuid_extract_timestamp, 18's virtual columns), standbys and failover, synchronous
#     replication, restarts, the mark file and its renewal while idle, point-in-time recovery, the WAL resource manager, a
#     node replaced from a backup (its clock behind), and the Debian package for that version
#     (built and inspected; installed on 15 only); on 16 and 17 also the read horizon under
#     Citus's two-phase commit (Citus 13.2 supports 15 to 17), on 18 and 19 the read horizon
#     (writers, readers, a standby, a subscriber), pg_idgen found through
#     extension_control_path and dynamic_library_path, and its extension image (make image: amd64
#     and arm64) as CloudNativePG mounts it, arm64's under qemu-user emulation.
# Each major runs in two parts (IDGEN_PART in tests/all.sh): its build part (setup, the checks of
# the source, building and installing pg_idgen, the golden files), then its system tests, which
# start as soon as its build part ends and run while the next majors build and test: the builds,
# one after the other, keep both cores busy, and the system tests mostly wait (servers starting,
# clocks, timeouts). They share nothing: each major has its own PostgreSQL tree, cargo target
# directory, ports and $WORK (tests/helpers/lib.sh), and the system tests of all majors take
# their turns from one set of IDGEN_TEST_LANES lanes (tests/all.sh). The two tests across majors
# (pg_upgrade.sh and logical_replication.sh, PostgreSQL 18 with 19) run with 19's, when both are
# built. A build part that stops at its setup (a PostgreSQL not fetched, pg_idgen not built)
# leaves its system tests out, as one failure: they would test another build. A build part's
# output comes as it runs; the system tests', whole, at the end, major by major; each version's
# times are printed with its summary.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ACROSS_MAJORS="pg_upgrade logical_replication"
VERSION_TESTS="clock_and_crash uuidv7 backfill created_at online_conversion_cases standby_promotion sync_standby restart mark_unwritable pitr unload package replacement idle_reservation"
passed=0
failed=0
skipped=0
lines=()
skips=()    # each version's "skipped:" line, repeated at the end
failures=() # each failed version's "failed:" line and failed checks, repeated at the end: CI shows
            # only the end of a long log
# A Rust new enough, checked once before anything (tools/rust_toolchain.sh); each layer would
# otherwise stop on it in turn.
source tools/rust_toolchain.sh
# Every major's builds under one root outside the clone (tools/rust_toolchain.sh). Every clone
# builds into the same files there, but cargo keeps the builds of each other version of a
# dependency, toolchain or set of flags it has seen: past IDGEN_TARGET_MAX_GB (30) the root is
# emptied first, and the run says so (its builds then start from nothing).
use_shared_target_root
target_gb=$(du -s -BG "$IDGEN_TARGET_ROOT" 2>/dev/null | sed -n 's/^\([0-9]*\)G.*/\1/p')
if [ "${target_gb:-0}" -gt "${IDGEN_TARGET_MAX_GB:-30}" ]; then
  echo "==> $IDGEN_TARGET_ROOT holds ${target_gb} GB, more than ${IDGEN_TARGET_MAX_GB:-30}: emptied; every build starts from nothing"
  rm -rf "$IDGEN_TARGET_ROOT"
fi
if ! use_new_enough_rust; then
  echo "--- setup: a Rust new enough (exit 1): see above"
  echo "summary: 0 passed, 1 failed, 0 skipped"
  exit 1
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
declare -A build_secs=() build_line=()

# count V PART: adds the summary of that part's output ($logs/V.PART) to the totals, and leaves
# that summary in $counted (not printed: a $(count ...) would add to a subshell's totals).
counted=
count() {
  local v=$1 out="$logs/$1.$2" line p f s
  line=$(grep '^summary: ' "$out" | tail -1)
  read -r p f s < <(sed -n 's/^summary: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' <<<"$line")
  if [ -z "${p:-}" ]; then p=0 f=1 s=0; line="no summary line (the run stopped early)"; fi
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
  if [ "$s" != 0 ]; then skips+=("PostgreSQL $v ($2): $(sed -n 's/^skipped: //p' "$out" | tail -1)"); fi
  if [ "$f" != 0 ]; then
    failures+=("--- PostgreSQL $v ($2)" "$(sed -n '/^--- .*(exit [0-9]*)\|^failed: /,$p' "$out" | grep -v '^summary: ' | tail -60)")
  fi
  counted=$line
}

# system_tests V: that major's system tests into $logs/V.system, and the time they took.
system_tests() {
  local v=$1 start=$SECONDS tests
  if [ "$v" = 15 ]; then
    tests=$(cd tests/system && ls -- *.sh | sed 's/\.sh$//' | grep -vxF -f <(tr ' ' '\n' <<<"$ACROSS_MAJORS"))
  else
    tests=$VERSION_TESTS
    [ "$v" -gt 17 ] || tests="$tests citus_horizon"
    [ "$v" -lt 18 ] || tests="$tests extension_path read_horizon image"
    [ "$v" != 19 ] || tests="$tests $ACROSS_MAJORS"
  fi
  PG=$v IDGEN_PART=system SYSTEM_TESTS="$(echo $tests)" bash tests/all.sh >"$logs/$v.system" 2>&1
  echo $((SECONDS - start)) >"$logs/$v.system.secs"
}

# One set of lanes for the system tests of every major (tests/all.sh).
export IDGEN_LANES_DIR=$logs/lanes
mkdir -p "$IDGEN_LANES_DIR"
declare -A system_pid=()
for v in 15 16 17 18 19; do
  start=$SECONDS
  PG=$v IDGEN_PART=build bash tests/all.sh 2>&1 | tee "$logs/$v.build"
  build_secs[$v]=$((SECONDS - start))
  count "$v" build
  build_line[$v]=$counted
  if grep -q '^--- setup: .*stopped the run' "$logs/$v.build"; then
    echo "--- PostgreSQL $v: its system tests were not run: its build part stopped at its setup (above)"
    failed=$((failed + 1))
    failures+=("--- PostgreSQL $v: system tests not run (the build part stopped at its setup)")
    lines+=("PostgreSQL $v: build part (${build_secs[$v]} s): ${build_line[$v]}; system tests not run")
    continue
  fi
  system_tests "$v" &
  system_pid[$v]=$!
done
for v in 15 16 17 18 19; do
  [ -n "${system_pid[$v]:-}" ] || continue
  wait "${system_pid[$v]}"
  cat "$logs/$v.system"
  count "$v" system
  lines+=("PostgreSQL $v: build part (${build_secs[$v]} s): ${build_line[$v]}; system tests ($(cat "$logs/$v.system.secs") s): $counted")
done
echo
if ((${#failures[@]})); then printf '%s\n' "${failures[@]}"; fi
if ((${#skips[@]})); then printf 'skipped on %s\n' "${skips[@]}"; fi
printf '%s\n' "${lines[@]}"
echo "run: $SECONDS s"
echo "summary: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
