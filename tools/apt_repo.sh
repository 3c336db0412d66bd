#!/usr/bin/env bash
# A signed apt repository of pg_idgen's Debian packages (tools/package.sh), for this machine's
# Debian release, as a directory to serve over HTTP (or to use as file:):
#
#   tools/apt_repo.sh [--out DIR] DEB...     the repository of those packages, in DIR (target/apt)
#   tools/apt_repo.sh [--out DIR] --build    the packages of every supported major (PG=N: that one)
#                                            built first (tools/package.sh), into target/debian
#   make apt-repo [PG=N]                     the same as --build
#
# DIR/pool/main/*.deb, DIR/dists/<codename>/main/binary-<arch>/Packages(.gz), DIR/dists/<codename>/
# Release with its signatures (InRelease, Release.gpg), and DIR/pg-idgen-archive-keyring.gpg (the
# public key) and DIR/pg-idgen.sources (a deb822 source naming DIR; edit its URIs to where DIR is
# served). A repository built again keeps the packages of the other majors already in it.
# Signed with the key IDGEN_APT_KEY (an ID in IDGEN_APT_GNUPGHOME, default ~/.gnupg) when given;
# otherwise with a key of its own, made once and kept in DIR.key beside DIR, never in what is
# served (for a repository of one machine or a test: publish one signed with a key you keep). A user installs with:
#   install -m 644 pg-idgen-archive-keyring.gpg /usr/share/keyrings/
#   install -m 644 pg-idgen.sources /etc/apt/sources.list.d/
#   apt update && apt install postgresql-18-pg-idgen
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$PWD/target/apt
debs=()
build=
while (($#)); do
  case $1 in
    --out) out=$2; shift ;;
    --build) build=1 ;;
    -*) echo "usage: $0 [--out DIR] DEB... | --build" >&2; exit 2 ;;
    *) debs+=("$1") ;;
  esac
  shift
done
if [ -n "$build" ]; then
  for m in ${PG:-15 16 17 18 19}; do
    echo "apt-repo: PostgreSQL $m: the Debian package" >&2
    debs+=("$(PG=$m bash -c 'source tests/helpers/lib.sh >/dev/null && bash tools/package.sh --pg-config "$PG_CONFIG"' | tail -1)")
  done
fi
((${#debs[@]})) || { echo "$0: no package given (make apt-repo builds them)" >&2; exit 2; }
for d in dpkg-scanpackages gpg; do
  command -v "$d" >/dev/null || { echo "$0: $d is not installed (apt install dpkg-dev gnupg)" >&2; exit 1; }
done
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}")
arch=$(dpkg --print-architecture)
mkdir -p "$out/pool/main" "$out/dists/$codename/main/binary-$arch"
out=$(cd "$out" && pwd)
for d in "${debs[@]}"; do
  [ "$(dpkg-deb -f "$d" Architecture)" = "$arch" ] || { echo "$0: $d is not for $arch" >&2; exit 1; }
  install -m 644 "$d" "$out/pool/main/"
done

# The index: every package in the pool, its path relative to DIR.
(cd "$out" && dpkg-scanpackages --multiversion pool/main /dev/null 2>/dev/null) >"$out/dists/$codename/main/binary-$arch/Packages"
gzip -9nkf "$out/dists/$codename/main/binary-$arch/Packages"
release=$out/dists/$codename/Release
{
  echo "Origin: pg_idgen"
  echo "Label: pg_idgen"
  echo "Suite: $codename"
  echo "Codename: $codename"
  echo "Architectures: $arch"
  echo "Components: main"
  echo "Description: pg_idgen for the PostgreSQL packages of Debian and PGDG"
  echo "Date: $(LC_ALL=C date -u -R)"
  echo "SHA256:"
  for f in main/binary-$arch/Packages main/binary-$arch/Packages.gz; do
    printf ' %s %16d %s\n' "$(sha256sum "$out/dists/$codename/$f" | cut -d' ' -f1)" "$(stat -c %s "$out/dists/$codename/$f")" "$f"
  done
} >"$release"

# The key: the caller's, or this repository's own.
if [ -n "${IDGEN_APT_KEY:-}" ]; then
  export GNUPGHOME=${IDGEN_APT_GNUPGHOME:-$HOME/.gnupg}
  key=$IDGEN_APT_KEY
else
  export GNUPGHOME=$out.key
  if [ ! -f "$GNUPGHOME/key-id" ]; then
    mkdir -p -m 700 "$GNUPGHOME"
    gpg --batch --quiet --passphrase '' --quick-gen-key "pg_idgen apt repository (local) <pg_idgen@localhost>" ed25519 sign never
    gpg --batch --list-keys --with-colons | awk -F: '$1 == "fpr" {print $10; exit}' >"$GNUPGHOME/key-id"
    echo "$0: made a signing key of this repository's own in $GNUPGHOME (set IDGEN_APT_KEY to sign with yours)" >&2
  fi
  key=$(cat "$GNUPGHOME/key-id")
fi
rm -f "$out/dists/$codename/InRelease" "$out/dists/$codename/Release.gpg"
gpg --batch --yes --local-user "$key" --clearsign -o "$out/dists/$codename/InRelease" "$release"
gpg --batch --yes --local-user "$key" --armor --detach-sign -o "$out/dists/$codename/Release.gpg" "$release"
gpg --batch --yes --export "$key" >"$out/pg-idgen-archive-keyring.gpg"
cat >"$out/pg-idgen.sources" <<EOF
Types: deb
URIs: file:$out
Suites: $codename
Components: main
Signed-By: /usr/share/keyrings/pg-idgen-archive-keyring.gpg
EOF
echo "$out"
