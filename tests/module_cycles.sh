#!/usr/bin/env bash
# No import circle between the files of either crate (../shared/tools/module_cycles.py): imports
# point down, from the SQL surfaces to node/ and pg/, and to the core crate. A circle fails the
# test command and is printed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TOOL=../shared/tools/module_cycles.py
if [ ! -f "$TOOL" ]; then
  echo "  skipped: $TOOL is not beside this checkout (it comes with the project's shared/ folder)"
  exit 0
fi
bad=0
for dir in src crates/core/src; do
  if out=$(python3 "$TOOL" "$dir"); then
    echo "  ok: $dir: $(tail -1 <<<"$out")"
  else
    echo "  FAIL: import circles in $dir:"
    echo "$out" | sed 's/^/    /'
    bad=1
  fi
done
exit $bad
