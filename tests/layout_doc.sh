#!/usr/bin/env bash
# CONTRIBUTING.md's "Layout of the repository" names every Rust source file of both crates and every
# SQL source of the install script, so that it cannot fall behind the tree: a file added, moved or
# renamed without a word there fails the test command, and is printed. (Unit tests, mod.rs and
# lib.rs are named by their folder.)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
section=$(sed -n '/^## Layout of the repository/,/^## /p' CONTRIBUTING.md)
[ -n "$section" ] || { echo "  FAIL: CONTRIBUTING.md has no section \"Layout of the repository\""; exit 1; }
missing=()
while read -r f; do
  name=$(basename "$f")
  case $name in mod.rs | lib.rs | tests.rs) continue ;; esac
  grep -qF -e "\`$name\`" -e "/$name\`" <<<"$section" || missing+=("$f")
done < <(find src crates/core/src sql/install -type f \( -name '*.rs' -o -name '*.sql' \) | grep -v '/tests/' | sort)
if [ ${#missing[@]} -gt 0 ]; then
  echo "  FAIL: CONTRIBUTING.md's layout section does not name ${#missing[@]} file(s):"
  printf '    %s\n' "${missing[@]}"
  exit 1
fi
echo "  ok: CONTRIBUTING.md's layout section names every source file ($(find src crates/core/src sql/install -type f \( -name '*.rs' -o -name '*.sql' \) | wc -l) files)"
