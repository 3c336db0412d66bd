#!/usr/bin/env bash
# The Debian package (make package PG=N, tools/package.sh): built for this run's PostgreSQL, with
# PGDG's layout. On 15, where Debian's postgresql-15 is installed, it is installed as a user
# would (after removing the source install) from a signed apt repository of it (tools/apt_repo.sh,
# whose signature apt checks; a control changes the signed file and apt refuses it), the golden
# files run against it, and it is removed again; the source install is put back whatever happens.
# idgen-test: alone on 15 (there it removes the source install and installs the package in its place)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
quietly() { "$@" >/dev/null 2>&1; }
fails() { ! "$@"; }
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$REPO/Cargo.toml" | head -1)
arch=$(dpkg --print-architecture)
name=postgresql-$PG-pg-idgen
out=$(mktemp -d)
chmod 755 "$out"

deb=$(bash "$REPO/tools/package.sh" --pg-config "$PG_CONFIG" --out "$out")
check "make package names it ${name}_${version}_$arch.deb" eq "$(basename "$deb")" "${name}_${version}_$arch.deb"
files=$(dpkg-deb -c "$deb" | awk '{print $6}')
check "the library in PGDG's pkglibdir" grep -qx "./usr/lib/postgresql/$PG/lib/pg_idgen.so" <<<"$files"
check "the control file in PGDG's sharedir" grep -qx "./usr/share/postgresql/$PG/extension/pg_idgen.control" <<<"$files"
check "the install script of $version" grep -qx "./usr/share/postgresql/$PG/extension/pg_idgen--$version.sql" <<<"$files"
for up in "$REPO"/sql/pg_idgen--*--*.sql; do
  check "the upgrade script $(basename "$up")" grep -qx "./usr/share/postgresql/$PG/extension/$(basename "$up")" <<<"$files"
done
check "nothing outside /usr/lib/postgresql/$PG, /usr/share/postgresql/$PG and its doc" \
  not_grep -vE "^\./(usr/(lib|share)/postgresql/$PG/.*|usr/share/doc/$name/.*|usr/(.*/)?)$|^\./$" <<<"$files"
depends=$(dpkg-deb -f "$deb" Depends)
for dep in "postgresql-$PG" libc6 libgcc-s1 libpq5; do
  check "it depends on $dep, which the library needs ($depends)" grep -qE "(^|, )$dep( |,|$)" <<<"$depends"
done
check "the library is installed 0644, like Debian's own extension libraries" \
  grep -qE "^-rw-r--r-- .* \./usr/lib/postgresql/$PG/lib/pg_idgen\.so$" <<<"$(dpkg-deb -c "$deb")"
apt_install_missing lintian >/dev/null 2>&1 || true
if command -v lintian >/dev/null; then
  status=0
  lintian --fail-on error,warning --tag-display-limit 0 "$deb" >"$out/lintian.log" 2>&1 || status=$?
  sed 's/^/    lintian: /' "$out/lintian.log"
  check "lintian finds no error or warning" eq "$status" 0
else
  echo "  skipped: lintian could not be installed"
fi

if [ "$PG" != 15 ]; then
  echo "  (installed only on 15: no Debian postgresql-$PG on this machine; built and inspected above)"
  rm -rf "$out"
  finish
fi

libdir=$("$PG_CONFIG" --pkglibdir)
extdir=$("$PG_CONFIG" --sharedir)/extension
restore() {
  cluster_stop package immediate 2>/dev/null || true
  if dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed"; then
    $SUDO apt-get remove -y -qq "$name" >/dev/null 2>&1 || true
  fi
  install_extension >/dev/null 2>&1 || echo "  could not put the source install back" >&2
  rm -rf "$out"
}
trap restore EXIT

# A user who installed from source first removes that install, then installs the package.
$SUDO rm -f "$libdir/pg_idgen.so" "$extdir"/pg_idgen.control "$extdir"/pg_idgen--*.sql
check "the source install is gone" not_grep -q . <<<"$(ls "$libdir/pg_idgen.so" "$extdir"/pg_idgen* 2>/dev/null)"
# From a signed apt repository of it (make apt-repo, tools/apt_repo.sh), as its pg-idgen.sources
# says, with apt's own lists kept apart from the system's.
apt_install_missing dpkg-dev gnupg >/dev/null 2>&1 || true
repo=$(bash "$REPO/tools/apt_repo.sh" --out "$out/apt" "$deb" 2>"$out/apt_repo.log") || cat "$out/apt_repo.log"
check "make apt-repo's tool builds a signed repository of the package" test -s "$repo/dists/$(. /etc/os-release && echo "$VERSION_CODENAME")/InRelease"
aptdir=$out/aptstate
# apt_in DIR ARGS...: apt-get with the sources, lists and cache of DIR only.
apt_in() {
  local dir=$1
  shift
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -q -o APT::Sandbox::User=root -o Dir::Etc::SourceList=/dev/null \
    -o "Dir::Etc::SourceParts=$dir/sources.d" -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" "$@"
}
mkdir -p "$aptdir/sources.d"
sed "s|/usr/share/keyrings/|$repo/|" "$repo/pg-idgen.sources" >"$aptdir/sources.d/pg-idgen.sources"
check "apt update reads it and checks its signature with the keyring it ships" quietly apt_in "$aptdir" update
tampered=$out/apt_tampered
cp -r "$repo" "$tampered"
sed -i 's/^Label: pg_idgen$/Label: pg_idgeN/' "$tampered"/dists/*/InRelease
mkdir -p "$aptdir/t/sources.d"
sed "s|$repo|$tampered|g" "$aptdir/sources.d/pg-idgen.sources" >"$aptdir/t/sources.d/pg-idgen.sources"
check "control: a copy whose InRelease was changed after signing is refused" fails quietly apt_in "$aptdir/t" update
log "apt install $name (from the repository)"
status=0
apt_in "$aptdir" install -y -qq "$name" >/dev/null 2>"$out/apt.err" || status=$?
show_errors "$out/apt.err"
check "apt install $name from the repository succeeds" eq "$status" 0
check "dpkg lists $name $version as installed" eq "$(dpkg-query -W -f='${Status} ${Version}' "$name")" "install ok installed $version"
check "the package owns the library" grep -q "^$name: " <<<"$(dpkg -S "$libdir/pg_idgen.so" 2>&1)"

cluster_init package $PORT
cluster_start package
status=0
run_golden $PORT "$out/regress" >"$out/golden.log" 2>&1 || status=$?
check "the golden files pass against the package ($(grep -c '^ok\|\.\.\. ok' "$out/golden.log") ok)" eq "$status" 0
[ "$status" -eq 0 ] || { tail -20 "$out/golden.log"; head -60 "$out/regress/regression.diffs" 2>/dev/null; }
q $PORT "CREATE EXTENSION pg_idgen"
check "the extension in the package is $version" eq "$(q $PORT "SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'")" "$version"
check "and makes IDs" eq "$(q $PORT "SELECT count(DISTINCT snowflake_next()) FROM generate_series(1, 1000)")" 1000
cluster_stop package

$SUDO apt-get remove -y -qq "$name" >/dev/null 2>"$out/apt.err" || true
show_errors "$out/apt.err"
check "apt remove takes its files away" not_grep -q . <<<"$(ls "$libdir/pg_idgen.so" "$extdir"/pg_idgen* 2>/dev/null)"
finish
