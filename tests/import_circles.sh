#!/usr/bin/env bash
# No import circle between the files of either crate, and no import up a floor of the extension
# (tools/module_graph.py --floors): imports point down,
# from the SQL surfaces to node/ and pg/, and to the core crate. A circle fails the test command
# and is printed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if out=$(python3 tools/module_graph.py --floors src crates/core/src); then
  sed 's/^/  ok: /' <<<"$out"
else
  echo "  FAIL: import circles or imports up a floor:"
  sed 's/^/    /' <<<"$out"
  exit 1
fi
