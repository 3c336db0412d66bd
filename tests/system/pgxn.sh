#!/usr/bin/env bash
# The PGXN distribution (make pgxn, tools/pgxn.sh): META.json as PGXN's meta spec 1.0.0 asks, naming
# this version (a control: a copy with another version is refused), the zip of the committed tree
# under pg_idgen-<version>/, and PGXN's own client (pgxnclient, from Debian) installing from it as
# a user would (`pgxn install ./pg_idgen-<version>.zip`: it runs make and make install with
# PG_CONFIG), staged under a DESTDIR its make is given (so that the PostgreSQL the other tests use
# is not touched): the files a source install puts there, the library PostgreSQL's. On 15 only.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
[ "$PG" = 15 ] || skip_test "run on PostgreSQL 15 only"
fails() { ! "$@"; }
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$REPO/Cargo.toml" | head -1)
apt_install_missing pgxnclient unzip >/dev/null 2>&1 || skip_test "apt-get could not install pgxnclient"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check "META.json follows the spec and names $version (tools/pgxn.sh --check)" bash "$REPO/tools/pgxn.sh" --check
mkdir -p "$work/copy/tools"
cp "$REPO"/{META.json,Cargo.toml,pg_idgen.control,CHANGELOG.md,README.md} "$work/copy/"
cp "$REPO/tools/pgxn.sh" "$work/copy/tools/"
sed -i 's/"version": "[0-9.]*",/"version": "0.0.1",/' "$work/copy/META.json"
check "control: a META.json of another version is refused" fails bash "$work/copy/tools/pgxn.sh" --check 2>/dev/null

zip=$(bash "$REPO/tools/pgxn.sh" 2>"$work/pgxn.log" | tail -1)
check "make pgxn writes pg_idgen-$version.zip" test -f "$zip"
check "... the tree under pg_idgen-$version/, META.json at its top" grep -qx "pg_idgen-$version/META.json" \
  <<<"$(unzip -Z1 "$zip")"

# As a user installs it: pgxn install from the file, with the pg_config of the server; its make
# stages the install under $work/dest.
printf '#!/bin/sh\nexec make DESTDIR=%s "$@"\n' "$work/dest" >"$work/make" && chmod +x "$work/make"
status=0
(cd "$work" && pgxn install --yes --nosudo --make "$work/make" --pg_config "$PG_CONFIG" "$zip" >"$work/install.log" 2>&1) || status=$?
[ "$status" -eq 0 ] || tail -20 "$work/install.log"
check "pgxn install ./$(basename "$zip") builds (make) and installs (make install)" eq "$status" 0
lib=$work/dest$("$PG_CONFIG" --pkglibdir)
ext=$work/dest$("$PG_CONFIG" --sharedir)/extension
check "... the library, the control file, the install and every upgrade script, where pg_config says" eq \
  "$(cd "$work/dest" && find . -type f | sed 's|^\.||' | sort | tr '\n' ' ')" \
  "$( (echo "${lib#"$work/dest"}/pg_idgen.so"; echo "${ext#"$work/dest"}/pg_idgen.control"; echo "${ext#"$work/dest"}/pg_idgen--$version.sql"
      cd "$REPO/sql" && ls pg_idgen--*--*.sql | sed "s|^|${ext#"$work/dest"}/|") | sort | tr '\n' ' ')"
nm -D --defined-only "$lib/pg_idgen.so" | awk '{print $NF}' | sort -u >"$work/symbols"
missing=$(grep -o "'[a-z0-9_]*_wrapper'" "$ext/pg_idgen--$version.sql" | tr -d "'" | sort -u | comm -23 - "$work/symbols")
check "... a library for this PostgreSQL (its magic block), with every SQL function's symbol${missing:+ (missing: $(head -3 <<<"$missing" | tr '\n' ' '))}" eq \
  "$(grep -cx Pg_magic_func "$work/symbols")|$(grep -c . <<<"$missing" || true)" "1|0"
finish
