#!/usr/bin/env bash
# Builds pg_idgen's extension image for one PostgreSQL major (18 and later): a minimal OCI image
# holding only the extension's files, in the layout CloudNativePG's image volumes mount
# (docs/install.md, "CloudNativePG"):
#   /lib/pg_idgen.so
#   /share/extension/pg_idgen.control, pg_idgen--<version>.sql and every upgrade script
#   /licenses/pg_idgen/LICENSE
# No base image, no shell, nothing else; made with umoci (Debian's package), no container daemon.
#
#   tools/image.sh --pg-config PATH [--out DIR]    the image of that PostgreSQL's major
#   make image PG=N                                the same for PostgreSQL N (18 or 19)
#
# For amd64 and arm64 (IDGEN_IMAGE_ARCHES, "amd64 arm64" by default): an image index naming one
# image for each. Each architecture's library is built against the headers of Debian's own build
# of that PostgreSQL for that architecture (debian_pg_config, tests/helpers/pg_versions.sh: Debian
# unstable's packages, experimental's for a major unstable does not have yet), the packaging the
# PGDG builds in CloudNativePG's images share, not against the PostgreSQL the tests build with;
# arm64's cross-built (Rust's aarch64-unknown-linux-gnu target, Debian's gcc-aarch64-linux-gnu to
# link, libc6-dev-arm64-cross: glibc 2.36, bookworm's, so that it loads on bookworm and trixie).
# The SQL scripts are the same for every architecture (the first build's, or the frozen ones).
#
# Writes DIR/pg_idgen-<version>-<N>-<distro>/ (an OCI image layout; its image index is tagged
# <version>-<N>-<distro>, the form of CloudNativePG's extension images: 0.2.5-18-bookworm, the
# distro being the one the library was built on) and DIR/pg_idgen-<version>-<N>-<distro>.oci.tar (the
# same as an archive: push it with `skopeo copy --all oci-archive:... docker://REGISTRY/pg_idgen:<tag>`);
# DIR is target/image. Prints the archive's path.
#
# Reproducible: the same commit built twice gives the same image digest and the same archive
# (tests/system/image.sh builds twice and compares). Every time in it is SOURCE_DATE_EPOCH (by
# default the commit's time): the files', the config's, the layer's history entry's. Labels: the OCI ones
# (version, revision = the commit, source = IDGEN_IMAGE_SOURCE or the clone's origin remote, when
# either is set) and CloudNativePG's io.cloudnativepg.image.base.*, on each image and on the index;
# the license is in /licenses.
# pgrx orders the install script it generates differently from one build to the next (the same
# blocks; its dependency graph leaves ties, numbered in a HashMap's order): the image carries that
# script put in one order of the same dependencies by tools/canonical_sql.py, the same from every
# build of a commit. The image of a released version carries that version's frozen script
# (sql/released/pg_idgen--<version>.sql) instead, and IDGEN_IMAGE_INSTALL_SQL=FILE gives another.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tools/rust_toolchain.sh
use_new_enough_rust
PG_CONFIG=${PG_CONFIG:-}
out=$PWD/target/image
source tools/build_args.sh
case $major in
  18 | 19) ;;
  15 | 16 | 17)
    echo "$0: PostgreSQL $major has no extension_control_path, which image volumes need (18 and later)" >&2
    exit 2 ;;
  *) echo "$0: PostgreSQL ${major:-?} is not supported (18 and 19 take images)" >&2; exit 2 ;;
esac
command -v umoci >/dev/null || { echo "$0: umoci is not installed (apt install umoci)" >&2; exit 1; }
distro=$(. /etc/os-release && echo "${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}")
tag=$version-$major-$distro
name=pg_idgen-$tag
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
revision=$(git rev-parse HEAD 2>/dev/null || true)
source_url=${IDGEN_IMAGE_SOURCE:-$(git config --get remote.origin.url 2>/dev/null || true)}
case $source_url in /* | file:*) source_url= ;; esac # a local clone names no public source

source tests/helpers/pg_versions.sh
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
arches=${IDGEN_IMAGE_ARCHES:-amd64 arm64}
tree=$(mktemp -d)
bundle=$(mktemp -d)
trap 'rm -rf "$tree" "$bundle"' EXIT
host_arch=$(dpkg --print-architecture)

# add_rust_target TARGET: Rust's standard library for TARGET, for the toolchain in use (rustup).
add_rust_target() {
  rustup target list --installed | grep -qx "$1" && return
  echo "==> adding Rust's $1 target (rustup)" >&2
  rustup target add "$1" >&2
}

# triplet ARCH: the GNU triplet of a Debian architecture (Rust's target is <arch>-unknown-linux-gnu).
triplet() {
  case $1 in
    amd64) echo x86_64-linux-gnu ;;
    arm64) echo aarch64-linux-gnu ;;
    *) echo "$0: IDGEN_IMAGE_ARCHES: amd64 or arm64, not '$1'" >&2; exit 2 ;;
  esac
}

# build ARCH: that architecture's files of the extension in $tree/ARCH (cargo pgrx package).
build() {
  local arch=$1 pgc triplet rust_target target_dir cross=()
  triplet=$(triplet "$arch") || exit 2
  rust_target=${triplet%%-*}-unknown-linux-gnu
  pgc=$(debian_pg_config "$major" "$arch")
  # Its own target directory, unless that PostgreSQL is the one given (19: Debian's already).
  target_dir=$CARGO_TARGET_DIR
  [ "$(realpath "$pgc")" = "$(realpath "$PG_CONFIG")" ] || target_dir=$CARGO_TARGET_DIR/image-$arch
  if [ "$arch" != "$host_arch" ]; then
    apt_install_missing "gcc-$triplet" "libc6-dev-$arch-cross"
    command -v rustup >/dev/null && with_lock /var/tmp/pg_idgen_rustup.lock add_rust_target "$rust_target"
    cross=(--target "$rust_target")
    local t=${rust_target//-/_}
    export "CARGO_TARGET_${t^^}_LINKER=$triplet-gcc" "CC_$t=$triplet-gcc"
  fi
  echo "==> $arch: the library, against $("$pgc" --version) ($pgc)" >&2
  PGRX_PG_CONFIG_PATH=$pgc CARGO_TARGET_DIR=$target_dir cargo pgrx package --pg-config "$pgc" "${cross[@]}" \
    --no-default-features --features "pg$major" --out-dir "$tree/$arch" >&2
}
for arch in $arches; do build "$arch"; done

mkdir -p "$out"
layout=$out/$name
rm -rf "$layout" "$layout.oci.tar"
umoci init --layout "$layout"
license=$(sed -n 's/^license = "\(.*\)"$/\1/p' Cargo.toml | head -1)
base=ghcr.io/cloudnative-pg/postgresql:$major-minimal-$distro
# key=value, one a line; an empty value (no source known) is left out.
labels="org.opencontainers.image.title=pg_idgen $version $major $distro
org.opencontainers.image.version=$version
org.opencontainers.image.description=pg_idgen $version for PostgreSQL $major on $distro: the extension's files for an image volume (CloudNativePG)
org.opencontainers.image.licenses=$license
org.opencontainers.image.created=$created
org.opencontainers.image.revision=$revision
org.opencontainers.image.source=$source_url
org.opencontainers.image.base.name=scratch
io.cloudnativepg.image.base.name=$base
io.cloudnativepg.image.base.pgmajor=$major
io.cloudnativepg.image.base.os=$distro
io.pg-idgen.postgresql.major=$major"
install_sql=${IDGEN_IMAGE_INSTALL_SQL:-}
[ -n "$install_sql" ] || [ ! -f "sql/released/pg_idgen--$version.sql" ] || install_sql=sql/released/pg_idgen--$version.sql
# The image of each architecture, tagged <tag>-<arch> until the index takes their place.
for arch in $arches; do
  umoci new --image "$layout:$tag-$arch"
  # The empty image's filesystem, filled, and packed as its one layer.
  rm -rf "$bundle/b"
  umoci unpack --image "$layout:$tag-$arch" "$bundle/b" >&2
  rootfs=$bundle/b/rootfs
  install -d -m 755 "$rootfs/lib" "$rootfs/share" "$rootfs/share/extension" "$rootfs/licenses" "$rootfs/licenses/pg_idgen"
  find "$tree/$arch" -name 'pg_idgen.so' -exec install -m 644 {} "$rootfs/lib/" \;
  find "$tree/$arch" -path '*/extension/pg_idgen*' -type f -exec install -m 644 {} "$rootfs/share/extension/" \;
  [ -f "$rootfs/lib/pg_idgen.so" ] || { echo "$0: no pg_idgen.so in the $arch build" >&2; exit 1; }
  [ -f "$rootfs/share/extension/pg_idgen--$version.sql" ] || { echo "$0: no pg_idgen--$version.sql in the build" >&2; exit 1; }
  # One install script for every architecture: the first build's, in its one order, unless one
  # is given.
  [ -n "$install_sql" ] || { install_sql=$tree/install.sql && python3 tools/canonical_sql.py "$rootfs/share/extension/pg_idgen--$version.sql" --out "$install_sql"; }
  install -m 644 "$install_sql" "$rootfs/share/extension/pg_idgen--$version.sql"
  # Upgrade scripts from every released version (cargo pgrx package copies only the install script).
  install -m 644 sql/pg_idgen--*--*.sql "$rootfs/share/extension/"
  install -m 644 LICENSE "$rootfs/licenses/pg_idgen/LICENSE"
  "$([ "$arch" = "$host_arch" ] && echo strip || echo "$(triplet "$arch")-strip")" --strip-unneeded "$rootfs/lib/pg_idgen.so"
  find "$rootfs" -exec touch -h -d "@$epoch" {} +
  umoci repack --history.created "$created" --history.created_by "tools/image.sh" \
    --history.comment "pg_idgen $version for PostgreSQL $major ($arch)" --image "$layout:$tag-$arch" "$bundle/b" >&2
  args=(--os linux --architecture "$arch" --created "$created" --no-history --config.user 65532:65532)
  while IFS='=' read -r key value; do
    [ -n "$value" ] || continue
    args+=(--config.label "$key=$value" --manifest.annotation "$key=$value")
  done <<<"$labels"
  umoci config --image "$layout:$tag-$arch" "${args[@]}" >&2
done
umoci gc --layout "$layout"
# The image index, the one thing tagged: each architecture's image with its platform, and the
# labels as its annotations (what a registry shows for the tag).
IMAGE_LABELS=$labels python3 - "$layout" "$tag" "$arches" <<'PY'
import hashlib, json, os, sys
layout, tag, arches = sys.argv[1], sys.argv[2], sys.argv[3].split()
labels = dict(line.split("=", 1) for line in os.environ["IMAGE_LABELS"].splitlines() if line.split("=", 1)[1])
index_path = os.path.join(layout, "index.json")
tagged = {m["annotations"]["org.opencontainers.image.ref.name"]: m for m in json.load(open(index_path))["manifests"]}
def platform(arch):
    return {"architecture": arch, "os": "linux", **({"variant": "v8"} if arch == "arm64" else {})}
manifests = [{"mediaType": tagged[f"{tag}-{a}"]["mediaType"], "digest": tagged[f"{tag}-{a}"]["digest"],
              "size": tagged[f"{tag}-{a}"]["size"], "platform": platform(a)} for a in arches]
def blob(doc):
    data = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
    digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(layout, "blobs", "sha256", digest), "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + digest, "size": len(data)}
mt = "application/vnd.oci.image.index.v1+json"
image_index = blob({"schemaVersion": 2, "mediaType": mt, "manifests": manifests, "annotations": labels})
top = {"schemaVersion": 2, "mediaType": mt, "manifests": [
    {"mediaType": mt, **image_index, "annotations": {"org.opencontainers.image.ref.name": tag}}]}
with open(index_path, "w") as f:
    f.write(json.dumps(top, separators=(",", ":"), sort_keys=True))
PY
(cd "$layout" && find . -exec touch -h -d "@$epoch" {} + &&
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -cf "$layout.oci.tar" .)
echo "$layout.oci.tar"
