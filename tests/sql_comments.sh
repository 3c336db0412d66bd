#!/usr/bin/env bash
# Each Rust function's SQL comment is the first paragraph of its doc comment, one text written
# once (tools/sql_comments.py): sql/install/finalize.sql's part between the markers is what the
# doc comments of the install script's functions say. Usage: tests/sql_comments.sh INSTALL_SQL,
# the install script the build just made. Control, on a copy: a function whose doc comment says
# otherwise than its SQL comment (segment_next's first line changed) must fail the check by name.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
install_sql=$1
source tests/helpers/tool_checks.sh
tool_check python3 tools/sql_comments.py "$install_sql" --check || exit 1
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
mkdir -p "$copy/sql" && cp -r src "$copy/" && cp -r sql/install "$copy/sql/"
# The first line of segment_next's doc comment, said otherwise.
python3 - "$copy/src/segment/next.rs" <<'PY'
import sys
path = sys.argv[1]
lines = open(path).read().split("\n")
k = next(i for i, l in enumerate(lines) if l.startswith("fn segment_next("))
while not lines[k - 1].startswith("///"):
    k -= 1
while lines[k - 1].startswith("///"):
    k -= 1
lines[k] = "/// Something else entirely."
open(path, "w").write("\n".join(lines))
PY
tool_control "a doc comment that says otherwise than the SQL comment" \
  "its doc comment says otherwise: segment_next(text)" \
  python3 tools/sql_comments.py "$install_sql" --root "$copy" --check || exit 1
