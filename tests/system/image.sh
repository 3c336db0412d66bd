#!/usr/bin/env bash
# The extension image (make image PG=N, tools/image.sh; PostgreSQL 18 and later) used as
# CloudNativePG uses it: its layers unpacked, as a container runtime mounts an image volume, into
# a directory standing for /extensions/pg-idgen (the volume docs/install.md's Cluster names), and a PostgreSQL that has no pg_idgen of its own
# (a copy of this one without its files) finding everything there through extension_control_path
# and dynamic_library_path, the settings CloudNativePG writes:
#   - the image holds the library, the control file, the install and upgrade scripts and the
#     license, nothing else, in one layer, labelled with the version, the PostgreSQL major, the
#     commit and CloudNativePG's labels, tagged <version>-<major>-<distro>;
#   - built twice, the same digest and the same archive (reproducible);
#   - control: the same server without the paths does not start, with PostgreSQL's message;
#   - with them: the library is preloaded from the mount; CREATE EXTENSION; Snowflake IDs,
#     UUIDv7s, TypeIDs, segments through the allocator worker; a restart, the IDs going on;
#   - an update: a database made with the previous version's files (its install script beside
#     the image's, standing for the previous image), then the new image alone: ALTER EXTENSION
#     pg_idgen UPDATE.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
fails() { ! "$@"; }
[ "$PG" -ge 18 ] || skip_test "PostgreSQL $PG has no extension_control_path (18 and later)"
apt_install_missing umoci
NEW=$(sed -n 's/^version = "\(.*\)"/\1/p' "$REPO/Cargo.toml" | head -1)
out="$WORK/image_build"
rm -rf "$out"
phase "make image (tools/image.sh) for PostgreSQL $PG"
archive=$(bash "$REPO/tools/image.sh" --pg-config "$PG_CONFIG" --out "$out" 2>"$WORK/image_build.log" | tail -1)
[ -f "$archive" ] || { tail -20 "$WORK/image_build.log"; check "the image was built" false; finish; }
distro=$(. /etc/os-release && echo "$VERSION_CODENAME")
check "an OCI archive and layout, tagged as CloudNativePG's extension images are: $(basename "$archive")" \
  grep -q "\"org.opencontainers.image.ref.name\":\"$NEW-$PG-$distro\"" "$out/pg_idgen-$NEW-$PG-$distro/index.json"

# Reproducible: the same commit built again (another output directory, the same install script:
# pgrx orders the one it generates differently from build to build, tools/image.sh) gives the
# same image, to the digest and the archive's bytes.
first_sql="$WORK/image_first.sql"
python3 - "$archive" "$first_sql" "pg_idgen--$NEW.sql" <<'PY'
import io, json, sys, tarfile
archive, dest, name = sys.argv[1:4]
with tarfile.open(archive) as oci:
    blob = lambda d: oci.extractfile("./blobs/sha256/" + d.split(":")[1]).read()
    manifest = json.loads(blob(json.loads(oci.extractfile("./index.json").read())["manifests"][0]["digest"]))
    with tarfile.open(fileobj=io.BytesIO(blob(manifest["layers"][0]["digest"]))) as t:
        open(dest, "wb").write(t.extractfile("share/extension/" + name).read())
PY
rm -rf "$out.again"
again=$(IDGEN_IMAGE_INSTALL_SQL=$first_sql bash "$REPO/tools/image.sh" --pg-config "$PG_CONFIG" --out "$out.again" 2>>"$WORK/image_build.log" | tail -1)
digest() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$(dirname "$1")/$(basename "$1" .oci.tar)/index.json"; }
check "built twice: the same image digest ($(digest "$archive" | cut -c1-19))" eq "$(digest "$again")" "$(digest "$archive")"
check "... and the same archive, byte for byte" cmp -s "$archive" "$again"

# The Cluster of docs/install.md: its extension's name is the image volume's (CloudNativePG mounts
# it at /extensions/<name>), and CloudNativePG 1.27.0 to 1.27.2 and 1.28.0 accept only a DNS label
# there (^[a-z0-9]([-a-z0-9]*[a-z0-9])?$; an underscore from 1.27.3 and 1.28.1).
volume=$(python3 - "$REPO/docs/install.md" <<'PY'
import re, sys, yaml
for block in re.findall(r"```yaml\n(.*?)```", open(sys.argv[1]).read(), re.S):
    doc = yaml.safe_load(block)
    if doc.get("kind") == "Cluster":
        print(doc["spec"]["postgresql"]["extensions"][0]["name"])
PY
)
check "docs/install.md's Cluster names the volume as every CloudNativePG from 1.27.0 accepts ('$volume')" \
  grep -qE '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' <<<"$volume"
check "control: the name with an underscore is refused by that pattern" fails grep -qE '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' <<<"pg_idgen"

# The layers, applied in order into the mount, as a runtime does (from the archive, by hand).
mnt="$WORK/image_mnt/${volume:-unnamed}"
rm -rf "$WORK/image_mnt" && mkdir -p "$mnt"
listing=$(python3 - "$archive" "$mnt" <<'PY'
import io, json, sys, tarfile
archive, mnt = sys.argv[1], sys.argv[2]
with tarfile.open(archive) as oci:
    blob = lambda d: oci.extractfile("./blobs/sha256/" + d.split(":")[1]).read()
    index = json.loads(oci.extractfile("./index.json").read())
    manifest = json.loads(blob(index["manifests"][0]["digest"]))
    config = json.loads(blob(manifest["config"]["digest"]))
    names = []
    for layer in manifest["layers"]:
        with tarfile.open(fileobj=io.BytesIO(blob(layer["digest"]))) as t:
            names += [m.name for m in t.getmembers() if m.isfile()]
            t.extractall(mnt, filter="data")
    labels = config["config"]["Labels"]
    print(len(manifest["layers"]), labels["org.opencontainers.image.version"], labels["io.pg-idgen.postgresql.major"],
          labels.get("io.cloudnativepg.image.base.pgmajor"), labels.get("io.cloudnativepg.image.base.os"),
          labels.get("org.opencontainers.image.revision"), config["config"].get("User"),
          " ".join(sorted(names)))
PY
)
read -r layers label_version label_major cnpg_major cnpg_os revision user files <<<"$listing"
expected="lib/pg_idgen.so licenses/pg_idgen/LICENSE $(cd "$REPO/sql" && ls pg_idgen--*--*.sql | sed 's|^|share/extension/|' | tr '\n' ' ')share/extension/pg_idgen--$NEW.sql share/extension/pg_idgen.control"
check "one layer, labelled $NEW and PostgreSQL $PG" eq "$layers $label_version $label_major" "1 $NEW $PG"
check "CloudNativePG's labels (PostgreSQL $PG on $distro), the commit, a user without rights" eq \
  "$cnpg_major $cnpg_os $revision $user" "$PG $distro $(git -C "$REPO" rev-parse HEAD) 65532:65532"
check "the library, the control file, the install and upgrade scripts, the license, nothing else" eq \
  "$files" "$(tr ' ' '\n' <<<"$expected" | grep -v '^$' | sort | tr '\n' ' ' | sed 's/ $//')"
$SUDO chown -R postgres "$WORK/image_mnt"

# A PostgreSQL with no pg_idgen of its own: a copy of this one without pg_idgen's files.
# (Its whole tree: a wheel's binaries find their own libpq beside it, through a relative RPATH.)
own_libs=$(ldd "$PGBIN/postgres" "$PGBIN/initdb" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' | grep -vE '^/(usr/)?lib(64)?/' || true)
# shellcheck disable=SC2086 # one path per word
root=$(python3 -c 'import os, sys; print(os.path.commonpath([os.path.realpath(p) for p in sys.argv[1:]]))' "$("$PG_CONFIG" --bindir)" "$("$PG_CONFIG" --pkglibdir)" "$("$PG_CONFIG" --sharedir)" $own_libs)
bare="$WORK/image_pg"
rm -rf "$bare" && mkdir -p "$bare"
cp -a "$root/." "$bare/"
rel() { python3 -c 'import os, sys; print(os.path.relpath(os.path.realpath(sys.argv[1]), sys.argv[2]))' "$1" "$root"; }
rm -f "$bare/$(rel "$("$PG_CONFIG" --pkglibdir)")/pg_idgen.so" "$bare/$(rel "$("$PG_CONFIG" --sharedir)")/extension/pg_idgen"*
PGBIN="$bare/$(rel "$PGBIN")"
check "the copy has no pg_idgen" eq "$(find "$bare" -name 'pg_idgen*' | wc -l)" 0

cluster_init cnpg $PORT "idgen.worker_id = 1"
trap 'cluster_stop cnpg immediate' EXIT
check "control: without the paths the server does not start (shared_preload_libraries = 'pg_idgen')" eq \
  "$(cluster_start cnpg >/dev/null 2>&1; echo $?)" 1
check "  and PostgreSQL says why" grep -q 'could not access file "pg_idgen": No such file or directory' "$(cluster_dir cnpg)/server.log"

cluster_conf cnpg "extension_control_path = '\$system:$mnt/share'"
cluster_conf cnpg "dynamic_library_path = '\$libdir:$mnt/lib'"
cluster_start cnpg
pm=$(head -1 "$(cluster_dir cnpg)/postmaster.pid")
check "with CloudNativePG's paths it starts, the library preloaded from the mount" grep -q "$mnt/lib/pg_idgen.so" "/proc/$pm/maps"
q $PORT "CREATE EXTENSION pg_idgen" >/dev/null
q $PORT "CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), u uuid DEFAULT uuidv7_next(), tid text DEFAULT typeid_next('row'), v int);
         INSERT INTO t (v) SELECT g FROM generate_series(1, 1000) g;
         SELECT idgen.segment_create('order', step => 100)" >/dev/null
check "IDs, UUIDv7s and TypeIDs from the image's library" eq \
  "$(q $PORT "SELECT count(DISTINCT id) || '|' || count(DISTINCT u) || '|' || count(DISTINCT tid) FROM t")" "1000|1000|1000"
check "segment IDs through the allocator worker" eq "$(q $PORT "SELECT segment_next('order') > 0")" t
before=$(q $PORT "SELECT max(id) FROM t")
cluster_stop cnpg
cluster_start cnpg
check "after a restart: IDs go on above the earlier ones" eq "$(q $PORT "INSERT INTO t (v) VALUES (0) RETURNING id > $before")" t

phase "an update: the previous version's files, then the new image alone"
prev=$(sed -n 's|.*sql/released/pg_idgen--\(.*\)\.sql$|\1|p' "$REPO/sql/released.sha256" | grep -vx "$NEW" | sort -V | tail -1)
prev_mnt="$WORK/image_mnt/previous"
mkdir -p "$prev_mnt/extension"
cp "$mnt/share/extension/"* "$REPO/sql/released/pg_idgen--$prev.sql" "$prev_mnt/extension/"
$SUDO chown -R postgres "$prev_mnt"
cluster_conf cnpg "extension_control_path = '\$system:$prev_mnt'"
cluster_stop cnpg && cluster_start cnpg
q $PORT "CREATE DATABASE upd" >/dev/null
qdb $PORT upd "CREATE EXTENSION pg_idgen VERSION '$prev'; CREATE TABLE t AS SELECT snowflake_next() AS id FROM generate_series(1, 100)" >/dev/null
cluster_conf cnpg "extension_control_path = '\$system:$mnt/share'"
cluster_stop cnpg && cluster_start cnpg
qdb $PORT upd "ALTER EXTENSION pg_idgen UPDATE" >/dev/null
check "$prev, made with the previous files, updates to $NEW with the image's scripts" eq \
  "$(qdb $PORT upd "SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'")|$(qdb $PORT upd "SELECT snowflake_next() > max(id) FROM t")" "$NEW|t"
finish
