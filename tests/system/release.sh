#!/usr/bin/env bash
# make release (tools/release.sh): every artifact of a version, and the check that the version is
# the same everywhere it is written. Here for PostgreSQL 15 only (a package each major costs a
# release build; make release builds them all, 15 to 19, and the images of 18 and 19, which
# tests/system/image.sh tests):
#   - the package, the source tarball, the CHANGELOG section and SHA256SUMS, which verify;
#   - controls: a tree whose Cargo.toml says another version than CHANGELOG.md is refused, and so
#     is one whose CHANGELOG.md agrees but that has no upgrade script to that version.
# idgen-test: alone
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
[ "$PG" = 15 ] || skip_test "run on PostgreSQL 15 only (the release is of every major)"
NEW=$(sed -n 's/^version = "\(.*\)"/\1/p' "$REPO/Cargo.toml" | head -1)
out="$WORK/release"
rm -rf "$out"
phase "tools/release.sh --majors 15"
made=$(bash "$REPO/tools/release.sh" --majors 15 --out "$out" 2>"$WORK/release.log" | tail -1)
[ "$made" = "$out" ] || tail -20 "$WORK/release.log"
check "the package, the source (tarball, PGXN's zip), the CHANGELOG section and SHA256SUMS" eq \
  "$(cd "$out" 2>/dev/null && ls | tr '\n' ' ')" \
  "CHANGELOG-$NEW.md SHA256SUMS pg_idgen-$NEW.tar.gz pg_idgen-$NEW.zip postgresql-15-pg-idgen_${NEW}_$(dpkg --print-architecture).deb "
check "SHA256SUMS verifies" bash -c "cd '$out' && sha256sum --quiet -c SHA256SUMS"
check "the source tarball is the tree at HEAD, under pg_idgen-$NEW/" eq \
  "$(tar -xzOf "$out/pg_idgen-$NEW.tar.gz" "pg_idgen-$NEW/Cargo.toml" | sed -n 's/^version = "\(.*\)"/\1/p' | head -1)" "$NEW"
check "the CHANGELOG section is the version's" eq "$(head -1 "$out/CHANGELOG-$NEW.md" | cut -d' ' -f1-2)" "## $NEW"

tree="$WORK/release_tree"
rm -rf "$tree" && mkdir -p "$tree"
cp -r "$REPO/Cargo.toml" "$REPO/pg_idgen.control" "$REPO/CHANGELOG.md" "$REPO/META.json" "$REPO/sql" "$tree/"
check "this tree's versions agree" bash "$REPO/tools/release.sh" --root "$tree" --check
sed -i 's/"release_status": "[a-z]*"/"release_status": "unstable"/' "$tree/META.json"
check "control: META.json's release status is not the one CHANGELOG.md gives: refused" grep -q "META.json says" \
  <<<"$(bash "$REPO/tools/release.sh" --root "$tree" --check 2>&1)"
cp "$REPO/META.json" "$tree/"
sed -i "s/^version = \"$NEW\"/version = \"9.9.9\"/" "$tree/Cargo.toml"
check "control: Cargo.toml says 9.9.9, CHANGELOG.md $NEW: refused" grep -q "CHANGELOG.md's newest section is" \
  <<<"$(bash "$REPO/tools/release.sh" --root "$tree" --check 2>&1)"
sed -i "0,/^## /s/^## .*/## 9.9.9/" "$tree/CHANGELOG.md"
check "control: both say 9.9.9, but no upgrade script leads there: refused" grep -q "no upgrade script from the newest release" \
  <<<"$(bash "$REPO/tools/release.sh" --root "$tree" --check 2>&1)"
finish
