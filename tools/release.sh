#!/usr/bin/env bash
# Every artifact of a version in one command (make release), into target/release/<version>/:
#   postgresql-N-pg-idgen_<version>_<arch>.deb   for each supported major (tools/package.sh)
#   pg_idgen-<version>-N-<distro>.oci.tar        the extension image, 18 and later (tools/image.sh)
#   pg_idgen-<version>.tar.gz                    the source of HEAD (git archive)
#   pg_idgen-<version>.zip                       the same for PGXN, with META.json (tools/pgxn.sh)
#   CHANGELOG-<version>.md                       the version's section of CHANGELOG.md
#   SHA256SUMS                                   of all of them (sha256sum -c SHA256SUMS)
# First it checks that the version is the same everywhere it is written, and refuses otherwise:
# Cargo.toml (which the control file's default_version and the install script's name come from),
# the newest section of CHANGELOG.md, an upgrade script to it from the newest release
# (sql/pg_idgen--<previous>--<version>.sql), sql/released/ (a released version's install
# script, if there is one, is the one this build makes) and META.json (its version, and "stable"
# once CHANGELOG.md says released); after the build, each package's control file and each image's
# label.
#
#   tools/release.sh [--majors "15 16 17 18 19"] [--out DIR] [--check]    (--check: the versions only)
#   tools/release.sh --root DIR --check                                  (another tree's files)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
root=$PWD
majors="15 16 17 18 19"
out=""
check_only=""
while (($#)); do
  case $1 in
    --majors) majors=$2; shift ;;
    --out) out=$2; shift ;;
    --root) root=$2; shift ;;
    --check) check_only=1 ;;
    *) echo "usage: $0 [--majors \"15 ...\"] [--out DIR] [--check] [--root DIR]" >&2; exit 2 ;;
  esac
  shift
done
refuse() { echo "release: refused: $*" >&2; exit 1; }

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)
[ -n "$version" ] || refuse "no version in Cargo.toml"
grep -q "^default_version = '@CARGO_VERSION@'$" "$root/pg_idgen.control" ||
  refuse "pg_idgen.control's default_version is not @CARGO_VERSION@ (Cargo.toml's version, $version)"
heading=$(grep -m1 '^## ' "$root/CHANGELOG.md" || true)
changelog_version=$(sed -n 's/^## \([0-9][0-9.]*\)\( (unreleased)\)\{0,1\}$/\1/p' <<<"$heading")
[ "$changelog_version" = "$version" ] ||
  refuse "CHANGELOG.md's newest section is \"${heading:-none}\", not $version (Cargo.toml)"
released=$(sed -n 's|.*sql/released/pg_idgen--\(.*\)\.sql$|\1|p' "$root/sql/released.sha256" | sort -V)
previous=$(grep -vx "$version" <<<"$released" | tail -1)
[ -f "$root/sql/pg_idgen--$previous--$version.sql" ] ||
  refuse "no upgrade script from the newest release, $previous, to $version (sql/pg_idgen--$previous--$version.sql)"
newest=$(tail -1 <<<"$released")
if [ "$(printf '%s\n%s\n' "$newest" "$version" | sort -V | tail -1)" != "$version" ]; then
  refuse "$version is older than the newest release, $newest"
fi
state="a pre-release: CHANGELOG.md says unreleased"
[ "$heading" = "## $version" ] && state="released"
meta=$(python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print(m["version"], m["provides"]["pg_idgen"]["version"], m["release_status"])' "$root/META.json" 2>/dev/null) ||
  refuse "no META.json (PGXN's) with a version, pg_idgen's in provides and a release_status"
want_status=testing
[ "$state" = released ] && want_status=stable
[ "$meta" = "$version $version $want_status" ] ||
  refuse "META.json says \"$meta\" (version, provides, release_status), not \"$version $version $want_status\""
echo "release: $version ($state); Cargo.toml, the control file, CHANGELOG.md, META.json and the SQL scripts agree"
[ -z "$check_only" ] || exit 0
[ "$root" = "$repo" ] || refuse "--root is for --check only"

out=${out:-$repo/target/release/$version}
rm -rf "$out"
mkdir -p "$out"
for m in $majors; do
  echo "release: PostgreSQL $m: the Debian package" >&2
  PG=$m bash -c 'source tests/helpers/lib.sh >/dev/null && bash tools/package.sh --pg-config "$PG_CONFIG" --out "$1"' _ "$out" >/dev/null
  if [ "$m" -ge 18 ]; then
    echo "release: PostgreSQL $m: the extension image" >&2
    archive=$(PG=$m bash -c 'source tests/helpers/lib.sh >/dev/null && bash tools/image.sh --pg-config "$PG_CONFIG" --out "$1"' _ "$out/image" | tail -1)
    mv "$archive" "$out/"
  fi
done
rm -rf "$out/image"
git -C "$repo" archive --format=tar --prefix="pg_idgen-$version/" HEAD | gzip -n >"$out/pg_idgen-$version.tar.gz"
mv "$(bash tools/pgxn.sh | tail -1)" "$out/"
[ -z "$(git -C "$repo" status --porcelain)" ] ||
  echo "release: note: the work tree has changes that are not committed; the source tarball is HEAD's" >&2
awk -v v="$version" '/^## / { if (on) exit; on = (index($0, "## " v) == 1) } on' "$repo/CHANGELOG.md" >"$out/CHANGELOG-$version.md"

# What was built says the same version.
for deb in "$out"/*.deb; do
  control=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - --wildcards '*/extension/pg_idgen.control')
  grep -q "^default_version = '$version'$" <<<"$control" || refuse "$(basename "$deb"): its control file is not version $version"
  [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || refuse "$(basename "$deb"): package version $(dpkg-deb -f "$deb" Version)"
done
for img in "$out"/*.oci.tar; do
  [ -e "$img" ] || continue
  label=$(python3 - "$img" <<'PY'
import json, sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    blob = lambda d: json.loads(t.extractfile("./blobs/sha256/" + d.split(":")[1]).read())
    index = blob(json.loads(t.extractfile("./index.json").read())["manifests"][0]["digest"])
    # Every architecture's image (tools/image.sh tags an image index).
    print(" ".join(sorted({blob(blob(m["digest"])["config"]["digest"])["config"]["Labels"]["org.opencontainers.image.version"]
                           for m in index["manifests"]})))
PY
  )
  [ "$label" = "$version" ] || refuse "$(basename "$img"): labelled $label"
done
shopt -s nullglob
(cd "$out" && sha256sum -- *.deb *.oci.tar *.tar.gz *.zip CHANGELOG-"$version".md >SHA256SUMS)
echo "release: $(wc -l <"$out/SHA256SUMS") artifacts in $out" >&2
echo "$out"
