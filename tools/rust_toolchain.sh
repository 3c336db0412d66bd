#!/usr/bin/env bash
# Sourced by every script that builds (tests/helpers/lib.sh, tools/install.sh, tools/package.sh): a Rust
# new enough for pg_idgen, chosen before any long step starts.
#
# pg_idgen needs the Rust of Cargo.toml's `rust-version` (1.96: pgrx 0.19.3 needs it). When the
# toolchain that `cargo` runs by default is older, the newest installed rustup toolchain that is
# new enough is used instead (a stable or versioned one before a beta, a beta before a nightly),
# through RUSTUP_TOOLCHAIN, which every cargo and rustc started from here then follows; the choice
# is said once. With none, the run stops at once, saying what to install. Nothing is pinned in the
# repository: a newer default toolchain is simply used.
#
#   use_new_enough_rust       returns 0 (RUSTUP_TOOLCHAIN exported if needed) or 1 (said why)
#   use_target_dir_for MAJOR  builds for that PostgreSQL in target/pgMAJOR (CARGO_TARGET_DIR)
#   use_shared_target_root    the test command's target directories, outside the clone
#   bash tools/rust_toolchain.sh    prints the choice (what a build started here would use)

# rustc_version [TOOLCHAIN]: X.Y.Z of rustc (of that rustup toolchain), or nothing.
rustc_version() {
  if [ -n "${1:-}" ]; then rustup run "$1" rustc --version 2>/dev/null; else rustc --version 2>/dev/null; fi |
    sed -n 's/^rustc \([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p'
}

# version_at_least A B: A >= B (dotted versions).
version_at_least() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]; }

use_new_enough_rust() {
  local repo need have t v rank best="" best_v="" best_rank=9
  [ -z "${IDGEN_RUST_CHOSEN:-}" ] || return 0
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  need=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -1)
  have=$(rustc_version)
  if [ -n "$have" ] && version_at_least "$have" "$need"; then
    export IDGEN_RUST_CHOSEN="rustc $have"
    return 0
  fi
  if [ -z "${RUSTUP_TOOLCHAIN:-}" ] && command -v rustup >/dev/null; then
    while read -r t _; do
      v=$(rustc_version "$t")
      [ -n "$v" ] && version_at_least "$v" "$need" || continue
      case $t in nightly*) rank=3 ;; beta*) rank=2 ;; *) rank=1 ;; esac
      if ((rank < best_rank)) || { ((rank == best_rank)) && ! version_at_least "$best_v" "$v"; }; then
        best=$t best_v=$v best_rank=$rank
      fi
    done < <(rustup toolchain list 2>/dev/null)
  fi
  if [ -n "$best" ]; then
    export RUSTUP_TOOLCHAIN=$best IDGEN_RUST_CHOSEN="rustc $best_v ($best)"
    echo "==> Rust: the default toolchain's rustc ${have:-(none)} is older than the $need pg_idgen needs;" \
      "using the installed toolchain $best (rustc $best_v)" >&2
    return 0
  fi
  {
    if [ -n "${RUSTUP_TOOLCHAIN:-}" ]; then
      echo "pg_idgen needs Rust $need or newer (pgrx 0.19.3 does); RUSTUP_TOOLCHAIN=$RUSTUP_TOOLCHAIN is rustc ${have:-(none)}."
      echo "Unset RUSTUP_TOOLCHAIN, or set it to a toolchain of Rust $need or newer."
    else
      echo "pg_idgen needs Rust $need or newer (pgrx 0.19.3 does); this machine has rustc ${have:-(none)} and no"
      echo "newer toolchain installed. Install one, then run this again:"
      echo "    rustup update stable        (or: rustup toolchain install $need)"
      command -v rustup >/dev/null || echo "    (rustup itself: https://rustup.rs)"
    fi
  } >&2
  return 1
}

# use_target_dir_for MAJOR: cargo builds for PostgreSQL MAJOR in a target directory of their own,
# target/pgMAJOR (under IDGEN_TARGET_ROOT when set), exported as CARGO_TARGET_DIR. The library is
# one file whatever major it was built for, so in one directory a build for another major replaced
# it and the next build for this one started over; apart, a second build of a major is a no-op
# (the test layers, the system tests that install two majors, the package and the image).
use_target_dir_for() {
  local repo
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  export CARGO_TARGET_DIR="${IDGEN_TARGET_ROOT:-$repo/target}/pg$1"
}

# use_shared_target_root: the test command's builds (tests/all.sh, tests/all_versions.sh) under
# IDGEN_TARGET_ROOT, by default ~/.cache/pg_idgen/target: outside the clone, shared by the clones
# of this user, so that a fresh clone (CI's) compiles pg_idgen's own two crates and not again the
# hundreds of dependencies an earlier run compiled. Other commands keep building under the
# clone's target/.
#
# Cargo takes a package's build for fresh when none of its files is newer than the build, and it
# tells the clones' own crates apart by their paths inside the clone, not by the clone's: a clone
# whose files are older than another clone's build (checked out earlier, or changed with an old
# time) would be given that build and test it. So the first call of a run makes every file of
# this clone newer than any build there (IDGEN_CLONE_TOUCHED tells the nested ones): its own crates
# are compiled again, once. (Control: a clone whose change was older than another clone's build
# got "Finished" with no compile; touched, it was compiled and its error shown.)
use_shared_target_root() {
  export IDGEN_TARGET_ROOT=${IDGEN_TARGET_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/pg_idgen/target}
  if [ -z "${IDGEN_CLONE_TOUCHED:-}" ]; then
    local repo
    repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    find "$repo" \( -path "$repo/target" -o -path "$repo/.git" \) -prune -o -type f -exec touch -c {} +
    export IDGEN_CLONE_TOUCHED=1
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  use_new_enough_rust && echo "$IDGEN_RUST_CHOSEN"
fi
