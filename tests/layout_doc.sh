#!/usr/bin/env bash
# CONTRIBUTING.md's table of source files is what the files say: one row per Rust source of both
# crates and per SQL source of the install script, made from its opening comment by
# tools/layout_doc.py, so that it cannot fall behind the tree: a file added, moved, renamed or
# redescribed without running the tool fails the test command, and is printed by its path.
# Controls, on a copy: a new file named like an existing one (src/backfill/shared.rs beside
# src/node/shared.rs), and a file whose opening comment changed, must each fail the check by path.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tests/helpers/tool_checks.sh
tool_check python3 tools/layout_doc.py --check || exit 1
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
control() { tool_control "$1" "$2" python3 "$copy/tools/layout_doc.py" --check "$copy"; }
fresh() {
  rm -rf "${copy:?}"/* && mkdir -p "$copy/crates/core" "$copy/sql" "$copy/tools"
  cp -r src "$copy/" && cp -r crates/core/src "$copy/crates/core/" && cp -r sql/install "$copy/sql/"
  cp CONTRIBUTING.md "$copy/" && cp tools/layout_doc.py tools/marked.py "$copy/tools/"
}
fresh && printf '//! Helpers the backfills share.\n' >"$copy/src/backfill/shared.rs"
control "a new file named like an existing one" "not in the table: src/backfill/shared.rs" || exit 1
fresh && sed -i '1s|^//! .*|//! Something else entirely.|' "$copy/src/node/take.rs"
control "a file described otherwise" "described otherwise in the file: src/node/take.rs" || exit 1
