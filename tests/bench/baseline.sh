# Sourced by bench.sh for the part "baseline": this tree's pg_idgen beside the build of another
# revision (BASELINE=<git revision>), on PostgreSQL 15, per-row figures in interleaved rounds
# (tests/bench/baseline.py). For a change that must not make the hot path slower: a new pgrx, a
# move of code.
#
# The other revision is taken with `git archive` (no worktree, the repository is untouched) into
# /var/tmp/pg_idgen_baseline/<commit>, and built with the cargo-pgrx of the pgrx version its
# Cargo.lock names (this tree's when it is that version, else installed once under
# /var/tmp/cargo-pgrx-<version>) and the same Rust as this
# tree (so that the compiler is not what differs). Both libraries cannot be installed in one
# PostgreSQL, so the baseline gets a copy of Debian's PostgreSQL 15 (its binaries find their
# files relative to themselves) under /var/tmp/pg_idgen_baseline/pg15, and a cluster of its own.
# Everything is kept for the next run.

# baseline_build REV: builds and installs REV's pg_idgen into the copy; prints the copy's bindir.
baseline_build() {
  local rev=$1 commit base src pgrx_v root pg home config
  commit=$(git -C "$REPO" rev-parse --verify "$rev^{commit}") || return
  base=/var/tmp/pg_idgen_baseline
  src="$base/$commit"
  if [ ! -f "$src/Cargo.toml" ]; then
    mkdir -p "$src.tmp" && git -C "$REPO" archive "$commit" | tar -x -C "$src.tmp" && mv "$src.tmp" "$src" || return
  fi
  pgrx_v=$(awk '/^name = "pgrx"$/ {getline; gsub(/"/, "", $3); print $3; exit}' "$src/Cargo.lock")
  [ -n "$pgrx_v" ] || { echo "baseline: no pgrx in $rev's Cargo.lock" >&2; return 1; }
  root=/var/tmp/cargo-pgrx-$pgrx_v
  if cargo pgrx --version 2>/dev/null | grep -q " $pgrx_v\$"; then
    root=$(dirname "$(dirname "$(command -v cargo-pgrx)")") # the one this tree uses is that version
  elif ! "$root/bin/cargo-pgrx" pgrx --version 2>/dev/null | grep -q " $pgrx_v\$"; then
    log "baseline: installing cargo-pgrx $pgrx_v into $root (once)"
    cargo install cargo-pgrx --version "$pgrx_v" --locked --root "$root" >&2 || return
  fi
  pg="$base/pg15"
  if [ ! -x "$pg/usr/lib/postgresql/15/bin/pg_config" ]; then
    log "baseline: a copy of PostgreSQL 15 in $pg (once)"
    mkdir -p "$pg.tmp/usr/lib/postgresql" "$pg.tmp/usr/share/postgresql" "$pg.tmp/usr/include"
    cp -a /usr/lib/postgresql/15 "$pg.tmp/usr/lib/postgresql/" &&
      cp -a /usr/share/postgresql/15 "$pg.tmp/usr/share/postgresql/" &&
      cp -a /usr/include/postgresql "$pg.tmp/usr/include/" || return
    rm -f "$pg.tmp/usr/lib/postgresql/15/lib/pg_idgen.so" "$pg.tmp/usr/share/postgresql/15/extension/pg_idgen"*
    chmod -R a+rX "$pg.tmp" && rm -rf "$pg" && mv "$pg.tmp" "$pg"
  fi
  config="$pg/usr/lib/postgresql/15/bin/pg_config"
  home="$base/pgrx-home-$pgrx_v"
  mkdir -p "$home" && printf '[configs]\npg15 = "%s"\n' "$config" >"$home/config.toml"
  log "baseline: building $rev ($commit, pgrx $pgrx_v) for the copy"
  (cd "$src" && PATH="$root/bin:$PATH" PGRX_HOME=$home CARGO_TARGET_DIR="$base/target-$pgrx_v" \
    cargo pgrx package --pg-config "$config" --no-default-features --features pg15 --out-dir "$base/tree-$commit" >&2) || return
  bash "$REPO/tools/install.sh" --pg-config "$config" --from "$base/tree-$commit" >&2 || return
  rm -rf "$base/tree-$commit"
  "$config" --bindir
}
