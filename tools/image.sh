#!/usr/bin/env bash
# Builds pg_idgen's extension image for one PostgreSQL major (18 and later): a minimal OCI image
# holding only the extension's files, in the layout CloudNativePG's image volumes mount
# (docs/install.md, "CloudNativePG"):
#   /lib/pg_idgen.so
#   /share/extension/pg_idgen.control, pg_idgen--<version>.sql and every upgrade script
# No base image, no shell, nothing else; made with umoci (Debian's package), no container daemon.
#
#   tools/image.sh --pg-config PATH [--out DIR]    build against that PostgreSQL's headers
#   make image PG=N                                the same for PostgreSQL N (18 or 19)
#
# Writes DIR/pg_idgen-<version>-<N>-<distro>/ (an OCI image layout; its one image is tagged
# <version>-<N>-<distro>, the form of CloudNativePG's extension images: 0.2.5-18-bookworm, the
# distro being the one the library was built on) and DIR/pg_idgen-<version>-<N>-<distro>.oci.tar (the
# same as an archive: load it with `skopeo copy oci-archive:... docker://REGISTRY/pg_idgen:<tag>`);
# DIR is target/image. Prints the archive's path.
#
# Reproducible: the same commit built twice gives the same image digest and the same archive
# (tests/system/image.sh builds twice and compares). Every time in it is SOURCE_DATE_EPOCH (by
# default the commit's time): the files', the config's, the layer's history entry's. Labels: the OCI ones
# (version, revision = the commit, source = IDGEN_IMAGE_SOURCE or the clone's origin remote, when
# either is set) and CloudNativePG's io.cloudnativepg.image.base.*; the license is in /licenses.
# pgrx orders the install script it generates differently from one build to the next (the same
# statements; its dependency graph leaves ties), so the image of a released version carries that
# version's frozen script (sql/released/pg_idgen--<version>.sql) instead, and IDGEN_IMAGE_INSTALL_SQL=FILE
# gives another (the test gives both builds the first one's).
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

tree=$(mktemp -d)
bundle=$(mktemp -d)
trap 'rm -rf "$tree" "$bundle"' EXIT
cargo pgrx package --pg-config "$PG_CONFIG" --no-default-features --features "pg$major" --out-dir "$tree" >&2

mkdir -p "$out"
layout=$out/$name
rm -rf "$layout" "$layout.oci.tar"
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
# The empty image's filesystem, filled, and packed as its one layer.
umoci unpack --image "$layout:$tag" "$bundle/b" >&2
rootfs=$bundle/b/rootfs
install -d -m 755 "$rootfs/lib" "$rootfs/share" "$rootfs/share/extension" "$rootfs/licenses" "$rootfs/licenses/pg_idgen"
find "$tree" -name 'pg_idgen.so' -exec install -m 644 {} "$rootfs/lib/" \;
find "$tree" -path '*/extension/pg_idgen*' -type f -exec install -m 644 {} "$rootfs/share/extension/" \;
[ -f "$rootfs/lib/pg_idgen.so" ] || { echo "$0: no pg_idgen.so in the build" >&2; exit 1; }
[ -f "$rootfs/share/extension/pg_idgen--$version.sql" ] || { echo "$0: no pg_idgen--$version.sql in the build" >&2; exit 1; }
install_sql=${IDGEN_IMAGE_INSTALL_SQL:-}
[ -n "$install_sql" ] || [ ! -f "sql/released/pg_idgen--$version.sql" ] || install_sql=sql/released/pg_idgen--$version.sql
[ -z "$install_sql" ] || install -m 644 "$install_sql" "$rootfs/share/extension/pg_idgen--$version.sql"
# Upgrade scripts from every released version (cargo pgrx package copies only the install script).
install -m 644 sql/pg_idgen--*--*.sql "$rootfs/share/extension/"
install -m 644 LICENSE "$rootfs/licenses/pg_idgen/LICENSE"
strip --strip-unneeded "$rootfs/lib/pg_idgen.so"
find "$rootfs" -exec touch -h -d "@$epoch" {} +
umoci repack --history.created "$created" --history.created_by "tools/image.sh" \
  --history.comment "pg_idgen $version for PostgreSQL $major" --image "$layout:$tag" "$bundle/b" >&2
license=$(sed -n 's/^license = "\(.*\)"$/\1/p' Cargo.toml | head -1)
base=ghcr.io/cloudnative-pg/postgresql:$major-minimal-$distro
args=(--os linux --architecture "$(dpkg --print-architecture)" --created "$created" --no-history
  --config.user 65532:65532)
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
while IFS='=' read -r key value; do
  [ -n "$value" ] || continue
  args+=(--config.label "$key=$value" --manifest.annotation "$key=$value")
done <<<"$labels"
umoci config --image "$layout:$tag" "${args[@]}" >&2
umoci gc --layout "$layout"
(cd "$layout" && find . -exec touch -h -d "@$epoch" {} + &&
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -cf "$layout.oci.tar" .)
echo "$layout.oci.tar"
