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
finish() {
  [ "$FAILS" -eq 0 ] && echo "  all checks passed" && exit 0
  echo "  $FAILS check(s) failed"
  exit 1
}
