#!/usr/bin/env bash
# The Rust a build uses (tools/rust_toolchain.sh): pg_idgen needs Cargo.toml's rust-version (1.96,
# for pgrx 0.19.3). On a machine whose default toolchain is older, the scripts use an installed
# toolchain that is new enough, or stop before anything long starts, saying what to install.
# Machines are stood in for by a fake `rustc` and `rustup` on PATH that report the toolchains a
# scenario has; a fake `cargo` (and `apt-get`, `pip3`, `curl`) records that it was started.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
need=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' "$REPO/Cargo.toml")
check "Cargo.toml says which Rust it needs ($need)" grep -qE '^[0-9]+\.[0-9]+' <<<"$need"

fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
mkdir "$fake/bin"
# rustup toolchain list prints the toolchains of $FAKE_TOOLCHAINS ("name=version ..."), the first
# as the default; `rustup run NAME rustc --version` and rustc (with RUSTUP_TOOLCHAIN) say theirs.
cat >"$fake/bin/rustup" <<'SH'
#!/usr/bin/env bash
if [ "$1 $2" = "toolchain list" ]; then
  first=1
  for t in $FAKE_TOOLCHAINS; do echo "${t%%=*}$( ((first)) && echo ' (default)')"; first=0; done
elif [ "$1" = run ]; then RUSTUP_TOOLCHAIN=$2 rustc --version
fi
SH
cat >"$fake/bin/rustc" <<'SH'
#!/usr/bin/env bash
want=${RUSTUP_TOOLCHAIN:-}
set -- $FAKE_TOOLCHAINS
[ -n "$want" ] || want=${1%%=*}
for t; do [ "${t%%=*}" = "$want" ] && { echo "rustc ${t#*=} (fake 2026-01-01)"; exit 0; }; done
echo "error: toolchain '$want' is not installed" >&2; exit 1
SH
for tool in cargo apt-get pip3 curl; do
  printf '#!/usr/bin/env bash\necho "%s $*" >>"%s/started"\nexit 1\n' "$tool" "$fake" >"$fake/bin/$tool"
done
chmod +x "$fake/bin/"*

# choose TOOLCHAINS: what tools/rust_toolchain.sh picks on such a machine (its stdout, stderr).
choose() {
  env -u RUSTUP_TOOLCHAIN -u IDGEN_RUST_CHOSEN FAKE_TOOLCHAINS="$1" PATH="$fake/bin:$PATH" \
    bash "$REPO/tools/rust_toolchain.sh" 2>"$fake/err"
}
check "a new enough default is used as it is" eq "$(choose "stable=1.98.0 nightly=1.99.0")" "rustc 1.98.0"
check "an older default: the installed nightly that is new enough" \
  eq "$(choose "stable=1.95.0 nightly=1.97.0")" "rustc 1.97.0 (nightly)"
check "  and it says so, naming both" grep -q "rustc 1.95.0 is older than the $need.*using the installed toolchain nightly (rustc 1.97.0)" "$fake/err"
check "a versioned or stable toolchain before a nightly" \
  eq "$(choose "stable=1.95.0 nightly=1.99.0 1.96.0=1.96.0")" "rustc 1.96.0 (1.96.0)"
check "the newest of its kind" eq "$(choose "old=1.90.0 a=1.96.1 b=1.97.2 beta=1.98.0")" "rustc 1.97.2 (b)"
check "none new enough: no choice" eq "$(choose "stable=1.95.0 nightly=1.94.0")" ""
check "  and what to install" grep -q "rustup update stable" "$fake/err"
out=$(env -u IDGEN_RUST_CHOSEN RUSTUP_TOOLCHAIN=stable FAKE_TOOLCHAINS="stable=1.95.0 nightly=1.97.0" \
  PATH="$fake/bin:$PATH" bash "$REPO/tools/rust_toolchain.sh" 2>"$fake/err" || true)
check "a RUSTUP_TOOLCHAIN set to an older one is not overridden" eq "$out" ""
check "  the message says to unset it" grep -q "Unset RUSTUP_TOOLCHAIN" "$fake/err"

# `make run` on a machine with only Rust 1.95: stops at once, before fetching or building.
start=$(date +%s%N)
status=0
(cd "$REPO" && env -u IDGEN_RUST_CHOSEN -u RUSTUP_TOOLCHAIN FAKE_TOOLCHAINS="stable=1.95.0" PATH="$fake/bin:$PATH" \
  PG=17 PG_VERSIONS_DIR="$fake/versions" make run) >"$fake/run.out" 2>&1 || status=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "make run (PG=17) with only Rust 1.95 fails" ne "$status" 0
check "  at once (${ms} ms): before any step of the run (each begins with \"==> \")" not_grep -q "^==> " "$fake/run.out"
check "  naming what to install" grep -q "rustup update stable" "$fake/run.out"
check "  having started no cargo, apt-get, pip3 or curl" test ! -e "$fake/started"
check "  nor a PostgreSQL build" test ! -e "$fake/versions"

# This machine: what the builds of this run use is new enough.
mine=$(env -u IDGEN_RUST_CHOSEN bash "$REPO/tools/rust_toolchain.sh" 2>/dev/null | sed -n 's/^rustc \([0-9.]*\).*/\1/p')
check "this machine's builds use rustc ${mine:-?} (>= $need)" version_at_least "${mine:-0}" "$need"
exit $((FAILS > 0))
