#!/usr/bin/env bash
# Import circles between files (../shared/tools/module_cycles.py): none in the core crate, and in
# the pgrx layer none but the one known circle below, which may only shrink. A new circle, or a
# file joining the known one, fails the test command; when the known circle is gone, empty
# KNOWN and this checks for none at all.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TOOL=../shared/tools/module_cycles.py
if [ ! -f "$TOOL" ]; then
  echo "  skipped: $TOOL is not beside this checkout (it comes with the project's shared/ folder)"
  exit 0
fi
# The circle through shared memory that issue 16 is to untie (shmem.rs knows every feature).
KNOWN="src/lease/mod.rs src/msgid.rs src/segment/allocator.rs src/segment/cache.rs src/segment/mod.rs
src/segment/sql.rs src/shmem.rs src/snowflake.rs src/wal.rs"
bad=0
if ! out=$(python3 "$TOOL" crates/core/src); then
  echo "  FAIL: an import circle in the core crate:"; echo "$out"; bad=1
fi
out=$(python3 "$TOOL" src)
# Each circle's files: the lines "  FILE -> ..." under "circle N: ...".
circles=$(awk '/^circle /{if (c) print c; c=""; next} /^  .* -> /{c = c " " $1} END {if (c) print c}' <<<"$out")
known=$(tr ' \n' '\n\n' <<<"$KNOWN" | sed '/^$/d' | sort | tr '\n' ' ')
while read -r files; do
  [ -n "$files" ] || continue
  have=$(tr ' ' '\n' <<<"$files" | sed '/^$/d' | sort)
  extra=$(comm -23 <(echo "$have") <(tr ' ' '\n' <<<"$known" | sed '/^$/d'))
  if [ -n "$extra" ]; then
    echo "  FAIL: an import circle beyond the known one, through: $(echo $extra)"; bad=1
  fi
done <<<"$circles"
[ "$bad" -eq 0 ] && echo "  ok: no import circle but the known one ($(wc -w <<<"$KNOWN") files; $(grep -c '^circle' <<<"$out") circle(s) now)"
exit $bad
