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
# Writes DIR/pg_idgen-<version>-pg<N>/ (an OCI image layout; its one image is tagged
# <version>-pg<N>) and DIR/pg_idgen-<version>-pg<N>.oci.tar (the same as an archive: load it with
# `skopeo copy oci-archive:... docker://REGISTRY/pg_idgen:<version>-pg<N>`); DIR is target/image.
# Prints the archive's path.
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
name=pg_idgen-$version-pg$major
tag=$version-pg$major

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
install -d -m 755 "$rootfs/lib" "$rootfs/share" "$rootfs/share/extension"
find "$tree" -name 'pg_idgen.so' -exec install -m 644 {} "$rootfs/lib/" \;
find "$tree" -path '*/extension/pg_idgen*' -type f -exec install -m 644 {} "$rootfs/share/extension/" \;
[ -f "$rootfs/lib/pg_idgen.so" ] || { echo "$0: no pg_idgen.so in the build" >&2; exit 1; }
[ -f "$rootfs/share/extension/pg_idgen--$version.sql" ] || { echo "$0: no pg_idgen--$version.sql in the build" >&2; exit 1; }
# Upgrade scripts from every released version (cargo pgrx package copies only the install script).
install -m 644 sql/pg_idgen--*--*.sql "$rootfs/share/extension/"
strip --strip-unneeded "$rootfs/lib/pg_idgen.so"
umoci repack --image "$layout:$tag" "$bundle/b" >&2
created=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}" +%Y-%m-%dT%H:%M:%SZ)
umoci config --image "$layout:$tag" --os linux --architecture "$(dpkg --print-architecture)" --created "$created" \
  --config.label "org.opencontainers.image.title=pg_idgen" \
  --config.label "org.opencontainers.image.version=$version" \
  --config.label "org.opencontainers.image.description=pg_idgen $version for PostgreSQL $major: the extension's files for an image volume (CloudNativePG)" \
  --config.label "org.opencontainers.image.licenses=$(sed -n 's/^license = "\(.*\)"$/\1/p' Cargo.toml | head -1)" \
  --config.label "io.pg-idgen.postgresql.major=$major" \
  --manifest.annotation "org.opencontainers.image.version=$version" >&2
umoci gc --layout "$layout"
(cd "$layout" && tar --sort=name --owner=0 --group=0 --numeric-owner -cf "$layout.oci.tar" .)
echo "$layout.oci.tar"
