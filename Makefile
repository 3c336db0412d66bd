# The two commands of the README, and the benchmark; `make` and `make install` build and install for
# PG_CONFIG as a PGXS extension's do (PGXN's client runs them). Each script checks first for a Rust new enough
# (tools/rust_toolchain.sh) and uses an installed one when the default is older.
#   make test         every supported PostgreSQL: the whole suite on 15, the version-sensitive
#                     parts on 16, 17, 18 and 19 (tests/all_versions.sh); one summary line at the end
#   make test PG=19   the whole suite on that PostgreSQL only (tests/all.sh)
#   make run PG=16    the demo on that PostgreSQL (15 by default)
#   make package PG=19  a Debian package for that PostgreSQL (15 by default), in target/debian
#   make apt-repo     a signed apt repository of the packages of 15 to 19 (PG=N: one), in target/apt
#   make pgxn         the PGXN distribution of this version (META.json), in target/pgxn
#   make image PG=18  the extension image for CloudNativePG (18 and later), in target/image
#   make release      every artifact of this version (packages, images, source, sums), in target/release
#   make upgrade-sql  the functions' SQL comments, then the upgrade script to this version, from
#                     sql/upgrade/ and the install script
.PHONY: all install run test bench package apt-repo image release upgrade-sql pgxn
all:   ## build pg_idgen for PG_CONFIG (PostgreSQL 15's by default) into target/build, as PGXN's client runs `make`
	bash tools/install.sh --out target/build
install: ## install what `make` built (or build first) into PG_CONFIG's PostgreSQL, as `make install` does for PGXN's client
	bash -c 'lib=$$("$${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}" --pkglibdir) && if [ -f "target/build$$lib/pg_idgen.so" ]; then bash tools/install.sh --from target/build; else bash tools/install.sh; fi'
run:   ## build, install, start a throwaway cluster and show pg_idgen in psql
	bash tests/demo.sh
test:  ## every test layer, ending with "summary: N passed, N failed"
	if [ -n "$(PG)" ]; then bash tests/all.sh; else bash tests/all_versions.sh; fi
bench: ## ratios against baselines measured in the same run
	bash tests/bench/bench.sh
package: ## postgresql-N-pg-idgen_<version>_<arch>.deb for PG=N (tools/package.sh)
	bash -c 'source tests/helpers/lib.sh && ensure_deps && bash tools/package.sh --pg-config "$$PG_CONFIG"'
apt-repo: ## a signed apt repository of postgresql-N-pg-idgen for every supported major (PG=N: that one), in target/apt (tools/apt_repo.sh)
	bash -c 'source tests/helpers/lib.sh && ensure_deps && apt_install_missing dpkg-dev gnupg && bash tools/apt_repo.sh --build'
pgxn: ## pg_idgen-<version>.zip for PGXN, with META.json, in target/pgxn (tools/pgxn.sh)
	bash tools/pgxn.sh
image: ## an OCI image of the extension's files for PG=N (18 or 19), for CloudNativePG (tools/image.sh)
	bash -c 'source tests/helpers/lib.sh && ensure_deps && apt_install_missing umoci && bash tools/image.sh --pg-config "$$PG_CONFIG"'
release: ## every artifact of this version into target/release/<version> (tools/release.sh)
	bash -c 'source tests/helpers/lib.sh && ensure_deps && apt_install_missing umoci && bash tools/release.sh'
upgrade-sql: ## functions' SQL comments from their doc comments (tools/sql_comments.py), then sql/pg_idgen--<last release>--<version>.sql from sql/upgrade/ and this build (tools/upgrade_sql.py)
	bash -c 'source tests/helpers/lib.sh && script="$$("$$PG_CONFIG" --sharedir)/extension/pg_idgen--$$(sed -n "s/^version = \"\(.*\)\"/\1/p" Cargo.toml | head -1).sql" && install_extension && python3 tools/sql_comments.py "$$script" --write && install_extension >/dev/null && python3 tools/upgrade_sql.py "$$script" --write && install_extension >/dev/null'
