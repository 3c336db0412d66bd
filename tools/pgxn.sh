#!/usr/bin/env bash
# The PGXN distribution of this version: target/pgxn/pg_idgen-<version>.zip, the committed tree
# (git archive HEAD) under pg_idgen-<version>/, with META.json (PGXN's meta spec 1.0.0) at its top.
# PGXN's client (`pgxn install pg_idgen`, or `pgxn install ./pg_idgen-<version>.zip`) unpacks it and
# runs `make` and `make install` with PG_CONFIG, which build and install as a PGXS extension's do
# (Makefile: tools/install.sh --out / --from). Prints the zip's path.
#
#   tools/pgxn.sh            check META.json, then write the zip
#   tools/pgxn.sh --check    check META.json only: the spec's required keys and forms, and that it
#                            names the version of Cargo.toml (the control file's), with the release
#                            status CHANGELOG.md gives (stable once released, testing before)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python3 - <<'PY'
import json, re, sys

meta = json.load(open("META.json"))
version = re.search(r'^version = "(.*)"$', open("Cargo.toml").read(), re.M).group(1)
control = re.search(r"^default_version = '(.*)'$", open("pg_idgen.control").read(), re.M)
heading = next(l for l in open("CHANGELOG.md") if l.startswith("## "))
semver = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")
licenses = {"agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd", "gfdl_1_2",
            "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit", "mozilla_1_0", "mozilla_1_1",
            "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay", "sun", "zlib", "open_source",
            "restricted", "unrestricted", "unknown"}
problems = []
for key in ("name", "abstract", "version", "maintainer", "license", "provides", "meta-spec"):
    if key not in meta:
        problems.append(f"no {key} (required by the spec)")
if not re.fullmatch(r"[^\s/\\:]{2,}", meta.get("name", "")):
    problems.append(f"name {meta.get('name')!r}: two or more characters, no space, slash, backslash or colon")
if not semver.match(meta.get("version", "")):
    problems.append(f"version {meta.get('version')!r} is not a semantic version")
if meta.get("version") != version:
    problems.append(f"version {meta.get('version')} is not Cargo.toml's {version}")
if not control or control.group(1) not in (version, "@CARGO_VERSION@"):
    problems.append(f"the control file's default_version is neither {version} nor Cargo.toml's (@CARGO_VERSION@)")
if meta.get("license") not in licenses:
    problems.append(f"license {meta.get('license')!r} is none of the spec's names")
if meta.get("meta-spec", {}).get("version") != "1.0.0":
    problems.append("meta-spec.version is not 1.0.0")
maintainer = meta.get("maintainer")
if not maintainer or not all(isinstance(m, str) and m for m in (maintainer if isinstance(maintainer, list) else [maintainer])):
    problems.append("maintainer: a string or a list of strings")
for ext, p in meta.get("provides", {}).items():
    if not semver.match(p.get("version", "")):
        problems.append(f"provides.{ext}.version is not a semantic version")
    if p.get("version") != version:
        problems.append(f"provides.{ext}.version is not {version}")
    for f in ("file", "docfile"):
        if f in p:
            try:
                open(p[f]).close()
            except OSError:
                problems.append(f"provides.{ext}.{f}: no file {p[f]}")
want = "stable" if heading.strip() == f"## {version}" else "testing"
if meta.get("release_status") != want:
    problems.append(f"release_status is {meta.get('release_status')!r}; CHANGELOG.md's \"{heading.strip()}\" makes it {want!r}")
for p in problems:
    print(f"META.json: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
[ "${1:-}" = --check ] && exit 0
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
mkdir -p target/pgxn
zip=$PWD/target/pgxn/pg_idgen-$version.zip
git diff --quiet HEAD -- META.json || echo "$0: META.json has changes not committed; the zip holds the committed one" >&2
git archive --format=zip --prefix="pg_idgen-$version/" -o "$zip" HEAD
echo "$zip"
