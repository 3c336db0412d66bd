#!/usr/bin/env bash
# Released SQL scripts are never edited. sql/released.sha256 lists, with its hash, the install
# script of every released version (kept frozen in sql/released/, for the upgrade test) and every
# released upgrade script sql/pg_idgen--A--B.sql. This check fails when
#   - a listed file no longer matches its hash (someone edited a released script);
#   - a line of the manifest was changed or removed (lines are only ever added);
#   - the version being built (Cargo.toml) is not released and no chain of upgrade scripts leads
#     to it from the newest released version.
# Releasing version X: freeze `cargo pgrx schema` output as sql/released/pg_idgen--X.sql and add
# its hash and the upgrade script's hash to the manifest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MANIFEST=sql/released.sha256
bad=0
fail() { echo "  FAIL: $*"; bad=$((bad + 1)); }

if sha256sum --check --quiet "$MANIFEST"; then
  echo "  ok: $(wc -l <"$MANIFEST") released scripts unchanged"
else
  fail "a released script was edited; write a new upgrade script instead"
fi

if git rev-parse --git-dir >/dev/null 2>&1; then
  for c in $(git log --format=%H -- "$MANIFEST"); do
    n=$(git show "$c:$MANIFEST" 2>/dev/null | wc -l)
    if ! git show "$c:$MANIFEST" 2>/dev/null | cmp -s - <(head -n "$n" "$MANIFEST"); then
      fail "a line of $MANIFEST committed in ${c:0:10} was changed or removed"
    fi
  done
  echo "  ok: $MANIFEST only grew over $(git log --format=%H -- "$MANIFEST" | wc -l) commits"
fi

# Released versions, oldest first, and the version being built.
released=$(sed -n 's|.*sql/released/pg_idgen--\(.*\)\.sql$|\1|p' "$MANIFEST" | sort -V)
newest=$(echo "$released" | tail -1)
current=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
for v in $released; do
  for s in sql/pg_idgen--*--"$v".sql; do
    [ -e "$s" ] || continue
    grep -q " $s\$" "$MANIFEST" || fail "$s upgrades to released $v but is not in $MANIFEST"
  done
done
if ! echo "$released" | grep -qx "$current"; then
  v=$newest
  while [ "$v" != "$current" ]; do
    next=$(ls sql/pg_idgen--"$v"--*.sql 2>/dev/null | sed 's|.*--||; s|\.sql$||' | sort -V | tail -1)
    [ -n "$next" ] || { fail "no upgrade script from $v on the way from released $newest to $current"; break; }
    v=$next
  done
  [ "$v" = "$current" ] && echo "  ok: upgrade scripts lead from released $newest to $current"
fi
[ "$bad" -eq 0 ]
