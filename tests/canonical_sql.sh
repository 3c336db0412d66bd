#!/usr/bin/env bash
# The install script in one order (tools/canonical_sql.py, which tools/image.sh applies, so that
# two builds of a commit make one image): another order of its blocks that the dependencies allow
# comes back to the same script. Usage: tests/canonical_sql.sh INSTALL_SQL, the install script the
# build just made. Control, on a copy: the finalize block (sql/install/finalize.sql, which grants
# on everything) moved up to the first place must fail the check by naming the block it needs.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
install_sql=$1
source tests/helpers/tool_checks.sh
canon() { python3 tools/canonical_sql.py "$@" 2>&1; }
tool_check canon "$install_sql" --check || exit 1
copy=$(mktemp)
trap 'rm -f "$copy"' EXIT
python3 - "$install_sql" "$copy" <<'PY'
import sys
sys.path.insert(0, "tools")
from canonical_sql import blocks
parts = blocks(open(sys.argv[1]).read())
final = next(p for p in parts if "GRANT USAGE ON SCHEMA idgen, idgen_internal TO PUBLIC;" in p)
parts.remove(final)
open(sys.argv[2], "w").write("".join([parts[0], final] + parts[1:]))
PY
tool_control "the finalize block first" "which it needs" canon "$copy" --check || exit 1
