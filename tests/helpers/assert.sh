#!/usr/bin/env bash
# Sourced by system tests: lib.sh plus assertions that print what they checked.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FAILS=0
check() { # check "what" TEST-COMMAND...
  local what=$1
  shift
  if "$@"; then echo "  ok: $what"; else echo "  FAIL: $what"; FAILS=$((FAILS + 1)); fi
}
eq() { [ "$1" = "$2" ] || { echo "    expected '$2', got '$1'" >&2; return 1; }; }
not_grep() { ! grep "$@" >/dev/null; }
ne() { [ "$1" != "$2" ] || { echo "    expected anything but '$2'" >&2; return 1; }; }
phase() { echo "  ($SECONDS s) $*"; } # phase "what": a heading in the output, with the seconds since the start
# show_errors FILE...: print (to stderr, indented) the start of any of FILES that is not empty, so
# that a failed "no error" check says which error it was.
show_errors() {
  local f
  for f in "$@"; do
    [ -s "$f" ] && { echo "    $f:"; head -c 1500 "$f" | sed 's/^/      /'; } >&2
  done
  return 0
}
# kill_mid_statement PORT SQL: runs SQL in a session of its own, kills that session's backend with
# SIGKILL two seconds in, and waits for the server to come back from the crash restart. Prints the
# pid it killed, nothing if it found no such backend (check that it is not empty).
kill_mid_statement() {
  local port=$1 sql=$2 victim
  psql -h 127.0.0.1 -p "$port" -U postgres -X -q -c "$sql" >/dev/null 2>&1 &
  sleep 2
  victim=$(q "$port" "SELECT pid FROM pg_stat_activity WHERE query = \$q\$$sql\$q\$ AND pid <> pg_backend_pid()")
  [ -z "$victim" ] || kill -9 "$victim"
  wait || true
  wait_ready "$port"
  echo "$victim"
}
# until_refused T0 PORT SQL: runs SQL on PORT every 50 ms (for at most about 10 s) until it fails.
# Prints two times in ms since T0 (date +%s%N): when the last statement that succeeded was
# started, and when the first that failed returned. Whatever the last one made, it made after the
# first time; the second includes the loop's own latency (a psql start, a connection), which a
# loaded machine stretches.
until_refused() {
  local t0=$1 port=$2 sql=$3 i started last_ok=-1
  for i in $(seq 1 200); do
    started=$(date +%s%N)
    q "$port" "$sql" >/dev/null 2>&1 || break
    last_ok=$(((started - t0) / 1000000))
    sleep 0.05
  done
  echo "$last_ok $((($(date +%s%N) - t0) / 1000000))"
}
# skip_test "why": this test cannot run here. It says why and exits 77, which the test command
# counts as skipped, never as passed. (A part left out of a test that runs says "  skipped: why"
# on a line of its own; the test command counts each such line as skipped too.)
skip_test() { echo "  skipped: $*"; exit 77; }
finish() {
  [ "$FAILS" -eq 0 ] && echo "  all checks passed" && exit 0
  echo "  $FAILS check(s) failed"
  exit 1
}
