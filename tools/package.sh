#!/usr/bin/env bash
# Builds a Debian package of pg_idgen for one PostgreSQL major, in the layout PGDG's extension
# packages use, so that it installs next to a distribution's PostgreSQL:
#   /usr/lib/postgresql/N/lib/pg_idgen.so
#   /usr/share/postgresql/N/extension/pg_idgen.control, pg_idgen--*.sql (install and upgrades)
#
#   tools/package.sh --pg-config PATH [--out DIR]    build against that PostgreSQL's headers
#   make package PG=N                               the same for PostgreSQL N (15 to 19),
#                                                   fetched as the tests do (tests/helpers/pg_versions.sh)
#
# Writes DIR/postgresql-N-pg-idgen_<version>_<arch>.deb (DIR: target/debian) and prints its path.
# Install it with `apt install ./postgresql-N-pg-idgen_<version>_<arch>.deb`, then preload it
# (shared_preload_libraries = 'pg_idgen') and restart the server.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tools/rust_toolchain.sh
use_new_enough_rust
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
out=$PWD/target/debian
source tools/build_args.sh
case $major in
  15 | 16 | 17 | 18 | 19) ;;
  *) echo "$0: PostgreSQL ${major:-?} is not supported (15 to 19 are)" >&2; exit 2 ;;
esac
arch=$(dpkg --print-architecture)
name=postgresql-$major-pg-idgen

tree=$(mktemp -d)
root=$(mktemp -d)
trap 'rm -rf "$tree" "$root"' EXIT
cargo pgrx package --pg-config "$PG_CONFIG" --no-default-features --features "pg$major" --out-dir "$tree" >&2

# Whatever prefix the build's pg_config has (a wheel's, a source build's), the package uses
# PGDG's paths for major N.
libdir=$root/usr/lib/postgresql/$major/lib
extdir=$root/usr/share/postgresql/$major/extension
mkdir -p "$libdir" "$extdir"
# 0644, like the extension libraries of Debian's own postgresql-N packages: dlopen needs no x bit.
find "$tree" -name 'pg_idgen.so' -exec install -m 644 {} "$libdir/" \;
find "$tree" -path '*/extension/pg_idgen*' -type f -exec install -m 644 {} "$extdir/" \;
[ -f "$libdir/pg_idgen.so" ] || { echo "$0: no pg_idgen.so in the build" >&2; exit 1; }
[ -f "$extdir/pg_idgen--$version.sql" ] || { echo "$0: no pg_idgen--$version.sql in the build" >&2; exit 1; }
# Upgrade scripts from every released version (cargo pgrx package copies only the install script).
cp sql/pg_idgen--*--*.sql "$extdir/"
chmod 644 "$extdir"/*
strip --strip-unneeded "$libdir/pg_idgen.so"

# What the library links (libc6, libgcc-s1, libpq5), with the versions its symbols need:
# dpkg-shlibdeps reads a control file, so it runs in a scratch tree that has one.
mkdir -p "$tree/debian"
printf 'Source: pg-idgen\n\nPackage: %s\nArchitecture: any\n' "$name" >"$tree/debian/control"
shlibs=$(cd "$tree" && dpkg-shlibdeps -O -e "$libdir/pg_idgen.so" 2>"$tree/shlibdeps.err") || {
  echo "$0: dpkg-shlibdeps failed:" >&2
  cat "$tree/shlibdeps.err" >&2
  exit 1
}
shlibs=${shlibs#shlibs:Depends=}
maintainer="${DEBFULLNAME:-pg_idgen developers} <${DEBEMAIL:-pg-idgen@users.noreply.example.org}>"
# The changelog's date: the commit's (reproducible), or now outside a git checkout.
when=$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
# The years of the project's history (lintian wants a year in the copyright notice).
first=$(git log --format=%ad --date=format:%Y 2>/dev/null | tail -1)
last=$(date -d "$when" +%Y)
years=${first:-$last}
[ "$years" = "$last" ] || years="$years-$last"
doc=$root/usr/share/doc/$name
mkdir -p "$root/DEBIAN" "$doc"
install -m 644 README.md CHANGELOG.md "$doc/"
# The manual the README links to, beside it, so that its links work where the package puts it.
mkdir -p "$doc/docs"
install -m 644 docs/*.md docs/*.svg "$doc/docs/"
cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: pg_idgen
Comment: pg_idgen $version, built for PostgreSQL $major ($("$PG_CONFIG" --version)).

Files: *
Copyright: $years the pg_idgen developers
License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
EOF
cat >"$doc/changelog" <<EOF
$name ($version) unstable; urgency=medium

  * pg_idgen $version for PostgreSQL $major.

 -- $maintainer  $when
EOF
gzip -9n "$doc/changelog"
find "$doc" -type f -exec chmod 644 {} +
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
cat >"$root/DEBIAN/control" <<EOF
Package: $name
Version: $version
Architecture: $arch
Maintainer: $maintainer
Depends: postgresql-$major, $shlibs
Section: database
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Description: distributed unique IDs for PostgreSQL $major
 pg_idgen makes PostgreSQL the distributed ID service of its users: 64-bit,
 time-ordered Snowflake IDs with configurable layouts from one shared-memory
 generator per node, Leaf/Tinyid segment IDs per business type, 80-bit message
 IDs, UUIDv7 and ULIDs, decoding and order-preserving text forms, and
 worker-id leases.
 .
 Preload it (shared_preload_libraries = 'pg_idgen'), restart, then
 CREATE EXTENSION pg_idgen.
EOF
mkdir -p "$out"
deb=$out/${name}_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
echo "$deb"
