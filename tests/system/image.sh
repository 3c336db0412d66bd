#!/usr/bin/env bash
# The extension image (make image PG=N, tools/image.sh; PostgreSQL 18 and later) used as
# CloudNativePG uses it: an image index with an amd64 and an arm64 image; the image of each
# architecture unpacked, as a container runtime mounts an image volume, into a directory standing
# for /extensions/pg-idgen (the volume docs/install.md's Cluster names), and Debian's own build of
# this PostgreSQL for that architecture (the one its library was built against: tests/helpers/
# pg_versions.sh, debian_pg_config), without any pg_idgen of its own, finding everything there
# through extension_control_path and dynamic_library_path, the settings CloudNativePG writes:
#   - the index is tagged <version>-<major>-<distro> and names linux/amd64 and linux/arm64/v8;
#     skopeo copies it whole (--all, as docs/install.md says) to another layout, digest unchanged;
#   - each image holds the library (of its architecture: the ELF machine), the control file, the
#     install and upgrade scripts and the license, nothing else, in one layer, labelled with the
#     version, the PostgreSQL major, the commit and CloudNativePG's labels;
#   - built twice, the same digest and the same archive (reproducible);
#   - amd64, natively: control: the server without the paths does not start, with PostgreSQL's
#     message; with them: the library is preloaded from the mount; CREATE EXTENSION; Snowflake IDs,
#     UUIDv7s, TypeIDs, segments through the allocator worker; a restart, the IDs going on; an
#     update: a database made with the previous version's files (its install script beside the
#     image's, standing for the previous image), then the new image alone: ALTER EXTENSION UPDATE;
#   - arm64, under user-mode emulation (qemu-user-static): Debian's arm64 server, initdb and all,
#     with the arm64 image mounted the same way: the library preloaded from the mount, Snowflake
#     IDs, UUIDv7s, TypeIDs and segments; control: the amd64 library in its place is refused.
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

# Reproducible: the same commit built again (another output directory; pgrx generates the install
# script again, in another order, which tools/canonical_sql.py puts back in its one order) gives
# the same image, to the digest and the archive's bytes.
oci() { python3 "$REPO/tests/system/image_oci.py" "$@"; }
check "an image index of two images: linux/amd64 and linux/arm64/v8" eq \
  "$(oci "$archive" platforms | cut -d' ' -f1 | tr '\n' ' ')" "linux/amd64 linux/arm64/v8 "
rm -rf "$out.again"
again=$(bash "$REPO/tools/image.sh" --pg-config "$PG_CONFIG" --out "$out.again" 2>>"$WORK/image_build.log" | tail -1)
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

# The Cluster and Database of docs/install.md against CloudNativePG's own schema: the one that
# npm's @kubernetes-models/cloudnative-pg 2.0.0 compiles from CloudNativePG's API types (a recent
# release; the package does not say which, and takes the underscore, as 1.27.3 and 1.28.1 do).
# No registry here serves the CRDs of each release (they are on GitHub and in the Go module proxy),
# so the releases before that pattern are checked by the pattern above. Once, on 18.
if [ "$PG" = 18 ]; then
  command -v node >/dev/null && command -v npm >/dev/null || apt_install_missing nodejs npm
  models="$PG_VERSIONS_DIR/npm-cnpg-models-2.0.0"
  if [ ! -d "$models/node_modules/@kubernetes-models/cloudnative-pg" ]; then
    $SUDO rm -rf "$models.tmp" && $SUDO mkdir -p "$models.tmp" && echo '{"private": true}' | $SUDO tee "$models.tmp/package.json" >/dev/null
    (cd "$models.tmp" && $SUDO npm install --no-audit --no-fund --loglevel=error @kubernetes-models/cloudnative-pg@2.0.0 >&2 2> >(grep -v EBADENGINE >&2)) &&
      $SUDO rm -rf "$models" && $SUDO mv "$models.tmp" "$models"
  fi
  manifests=$(python3 - "$REPO/docs/install.md" <<'PY'
import copy, json, re, sys, yaml
docs = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", open(sys.argv[1]).read(), re.S)]
docs = [d for d in docs if isinstance(d, dict) and d.get("apiVersion") == "postgresql.cnpg.io/v1"]
# Controls: the Cluster with a name the pattern refuses, and with a number as a string.
for name, change in (("bad-name", lambda s: s["postgresql"]["extensions"][0].update(name="Pg_idgen")),
                     ("bad-instances", lambda s: s.update(instances="3"))):
    bad = copy.deepcopy(next(d for d in docs if d["kind"] == "Cluster"))
    bad["metadata"]["name"] = name
    change(bad["spec"])
    docs.append(bad)
print(json.dumps(docs))
PY
  )
  verdicts=$(node "$REPO/tests/system/cnpg_manifests.mjs" "$models" <<<"$manifests" 2>&1)
  check "docs/install.md's Cluster and Database are valid against CloudNativePG's schema (npm @kubernetes-models/cloudnative-pg 2.0.0)" eq \
    "$(grep -E '^valid' <<<"$verdicts" | tr '\n' ' ')" "valid Cluster orders-db valid Database orders-db-app "
  check "control: the schema refuses the Cluster with 'Pg_idgen' as the volume's name, and with instances \"3\"" eq \
    "$(grep -cE '^invalid Cluster bad-(name: .*must match pattern|instances: .*must be integer)' <<<"$verdicts")" 2
fi

if command -v skopeo >/dev/null || apt_install_missing skopeo; then
  rm -rf "$WORK/image_copy"
  skopeo copy -q --all "oci-archive:$archive:$NEW-$PG-$distro" "oci:$WORK/image_copy:$NEW-$PG-$distro" >/dev/null 2>&1 || true
  check "skopeo copies the index whole (--all), to the same digest" eq \
    "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$WORK/image_copy/index.json" 2>/dev/null)" \
    "$(digest "$archive")"
fi

# Each image's layers, applied in order into a mount of its own, as a runtime does (by hand).
expected="lib/pg_idgen.so licenses/pg_idgen/LICENSE $(cd "$REPO/sql" && ls pg_idgen--*--*.sql | sed 's|^|share/extension/|' | tr '\n' ' ')share/extension/pg_idgen--$NEW.sql share/extension/pg_idgen.control"
expected=$(tr ' ' '\n' <<<"$expected" | grep -v '^$' | sort | tr '\n' ' ' | sed 's/ $//')
rm -rf "$WORK/image_mnt"
for arch in amd64 arm64; do
  m="$WORK/image_mnt/$arch/${volume:-unnamed}"
  mkdir -p "$m"
  read -r layers label_version label_major cnpg_major cnpg_os revision user config_arch machine files <<<"$(oci "$archive" unpack "$arch" "$m")"
  want_machine=$([ "$arch" = amd64 ] && echo x86-64 || echo aarch64)
  check "$arch: one layer, labelled $NEW and PostgreSQL $PG, its library an $want_machine one" eq \
    "$layers $label_version $label_major $config_arch $machine" "1 $NEW $PG $arch $want_machine"
  check "$arch: CloudNativePG's labels (PostgreSQL $PG on $distro), the commit, a user without rights" eq \
    "$cnpg_major $cnpg_os $revision $user" "$PG $distro $(git -C "$REPO" rev-parse HEAD) 65532:65532"
  check "$arch: the library, the control file, the install and upgrade scripts, the license, nothing else" eq \
    "$files" "$expected"
done
mnt="$WORK/image_mnt/amd64/${volume:-unnamed}"
$SUDO chown -R postgres "$WORK/image_mnt"

# Debian's build of this PostgreSQL for amd64, the one the library was built against, with no
# pg_idgen of its own: a copy without pg_idgen's files (for 19 it is the one the tests use).
DEBIAN_PG_CONFIG=$(debian_pg_config "$PG" amd64)
PGBIN=$("$DEBIAN_PG_CONFIG" --bindir)
own_libs=$(ldd "$PGBIN/postgres" "$PGBIN/initdb" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' | grep -vE '^/(usr/)?lib(64)?/' || true)
# shellcheck disable=SC2086 # one path per word
root=$(python3 -c 'import os, sys; print(os.path.commonpath([os.path.realpath(p) for p in sys.argv[1:]]))' "$PGBIN" "$("$DEBIAN_PG_CONFIG" --pkglibdir)" "$("$DEBIAN_PG_CONFIG" --sharedir)" $own_libs)
bare="$WORK/image_pg"
rm -rf "$bare" && mkdir -p "$bare"
cp -a "$root/." "$bare/"
rel() { python3 -c 'import os, sys; print(os.path.relpath(os.path.realpath(sys.argv[1]), sys.argv[2]))' "$1" "$root"; }
rm -f "$bare/$(rel "$("$DEBIAN_PG_CONFIG" --pkglibdir)")/pg_idgen.so" "$bare/$(rel "$("$DEBIAN_PG_CONFIG" --sharedir)")/extension/pg_idgen"*
PGBIN="$bare/$(rel "$PGBIN")"
check "Debian's PostgreSQL $PG ($("$PGBIN/postgres" --version | sed 's/^postgres (PostgreSQL) //')), copied without any pg_idgen" eq "$(find "$bare" -name 'pg_idgen*' | wc -l)" 0

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
phase "arm64: Debian's arm64 PostgreSQL $PG under user-mode emulation (qemu-user-static), the arm64 image mounted"
cluster_stop cnpg
trap - EXIT
ARM_PG_CONFIG=$(debian_pg_config "$PG" arm64)
PGBIN=$(dirname "$ARM_PG_CONFIG") # scripts that start each arm64 executable under qemu-aarch64-static
arm_mnt="$WORK/image_mnt/arm64/${volume:-unnamed}"
check "the server is an arm64 one: $("$PGBIN/postgres" --version | sed 's/^postgres (PostgreSQL) //')" eq \
  "$(file -bL "$("$ARM_PG_CONFIG" --bindir)/postgres.real" | grep -o 'ARM aarch64')" "ARM aarch64"
PORT2=$(port 1)
cluster_init cnpg_arm "$PORT2" "idgen.worker_id = 2" "extension_control_path = '\$system:$arm_mnt/share'" \
  "dynamic_library_path = '\$libdir:$arm_mnt/lib'"
trap 'cluster_stop cnpg_arm immediate' EXIT
cluster_start cnpg_arm
pm=$(head -1 "$(cluster_dir cnpg_arm)/postmaster.pid")
check "it starts, the arm64 library preloaded from the mount" grep -q "$arm_mnt/lib/pg_idgen.so" "/proc/$pm/maps"
check "  and it runs as aarch64" eq "$(q "$PORT2" "SELECT version() LIKE '%aarch64%'")" t
q "$PORT2" "CREATE EXTENSION pg_idgen" >/dev/null
q "$PORT2" "CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), u uuid DEFAULT uuidv7_next(), tid text DEFAULT typeid_next('row'), v int);
         INSERT INTO t (v) SELECT g FROM generate_series(1, 1000) g;
         SELECT idgen.segment_create('order', step => 100)" >/dev/null
check "arm64: IDs, UUIDv7s and TypeIDs from the image's library, the IDs of worker 2" eq \
  "$(q "$PORT2" "SELECT count(DISTINCT t.id) || '|' || count(DISTINCT u) || '|' || count(DISTINCT tid) || '|' || min(d.worker_id) || max(d.worker_id) FROM t, id_decode(t.id) d")" "1000|1000|1000|22"
check "arm64: segment IDs through the allocator worker" eq "$(q "$PORT2" "SELECT segment_next('order') > 0")" t
cluster_stop cnpg_arm
cluster_conf cnpg_arm "dynamic_library_path = '\$libdir:$mnt/lib'"
check "control: the amd64 library in the arm64 server's path: it does not start" eq \
  "$(cluster_start cnpg_arm >/dev/null 2>&1; echo $?)" 1
check "  and PostgreSQL says why" grep -q "could not load library \"$mnt/lib/pg_idgen.so\"" "$(cluster_dir cnpg_arm)/server.log"
trap - EXIT
finish
