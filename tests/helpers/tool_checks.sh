# shellcheck shell=bash
# The checks of the project's own tools that the test command runs first (import_circles.sh,
# layout_doc.sh, sql_comments.sh), sourced by them: a check's verdict, and its controls.

# tool_check CMD...: runs a check; each line of its output as "ok: ..." when it passes, else
# "FAIL: ..." with the rest indented; its status.
tool_check() {
  local out
  if out=$("$@"); then
    sed 's/^/  ok: /' <<<"$out"
  else
    echo "  FAIL: $out" | sed '2,$s/^/    /'
    return 1
  fi
}

# tool_control WHAT EXPECTED CMD...: a control, CMD run on a copy that the caller broke, must fail
# the check and name EXPECTED (a fixed string) in its output.
tool_control() {
  local what=$1 expected=$2 got
  shift 2
  if got=$("$@"); then
    echo "  FAIL: control: $what passed the check"
    return 1
  elif grep -qF -- "$expected" <<<"$got"; then
    echo "  ok: control: $what fails the check"
  else
    echo "  FAIL: control: $what failed, but not by naming '$expected':"
    sed 's/^/    /' <<<"$got"
    return 1
  fi
}
