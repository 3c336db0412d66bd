#!/usr/bin/env bash
# No import circle between the files of either crate, no import up a floor of the extension, none
# from one SQL surface to another, and none of a file of node/ that is not one of its doors
# (tools/module_graph.py --floors): imports point down, from the SQL surfaces to the allocator,
# node/ and pg/, and to the core crate. A circle fails the test command and is printed. Controls,
# on a copy of src/: an import from one surface to another (msgid.rs naming uuidv7.rs), one up a
# floor (the allocator naming segment/) and one through a side door (snowflake.rs naming
# node/horizon.rs) must each fail the check, by name.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tests/helpers/tool_checks.sh
tool_check python3 tools/module_graph.py --floors src crates/core/src || exit 1
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
control() { # control WHAT FILE LINE EXPECTED: FILE given LINE must fail the check with EXPECTED
  rm -rf "$copy/src" && cp -r src "$copy/src" && echo "$3" >>"$copy/src/$2"
  tool_control "$1" "$4" python3 tools/module_graph.py --floors "$copy/src"
}
control "an import between SQL surfaces" msgid.rs "use crate::uuidv7::uuidv7_next_batch;" \
  "msgid.rs (msgid) -> uuidv7.rs (uuidv7)" || exit 1
control "an import up a floor" allocator/mod.rs "use crate::segment::init as _;" \
  "allocator/mod.rs (node/ and allocator/) -> segment/mod.rs (SQL surfaces)" || exit 1
control "an import through a side door of node/" snowflake.rs "use crate::node::horizon::holders as _;" \
  "snowflake.rs -> node/horizon.rs (not a door of node/)" || exit 1
