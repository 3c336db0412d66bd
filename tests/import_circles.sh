#!/usr/bin/env bash
# No import circle between the files of either crate (tools/module_graph.py): imports point down,
# from the SQL surfaces to node/ and pg/, and to the core crate. A circle fails the test command
# and is printed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if out=$(python3 tools/module_graph.py src crates/core/src); then
  sed 's/^/  ok: /' <<<"$out"
else
  echo "  FAIL: import circles:"
  sed 's/^/    /' <<<"$out"
  exit 1
fi
