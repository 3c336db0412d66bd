#!/usr/bin/env bash
# The documentation is tested like code (CONTRIBUTING.md, "Documentation"):
#   - every ```sql block of the README and of docs/ runs, page by page and in order, in a fresh
#     database of a real server, as a new user pasting them into psql would run them; where a page
#     shows a block's output, psql's output is compared with it, and a WARNING the page does not
#     show fails it (tools/doctest.py); then all of them once more, in order, in one database
#     after the README's quick start (--one-database: no page takes a name another took);
#   - docs/reference.md is what the installed catalog says of every function, view and table
#     (tools/sql_reference.py --check);
#   - controls: each check is run once more on a copy with one thing changed (an output, a
#     function's volatility), and must fail there.
# (The relative links of every Markdown file are checked without a server, by
# tools/check_links.py, a step of the test command on PostgreSQL 15.)
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
P=$(port 0)
fails() { ! "$@" >/dev/null; }
trap 'cluster_stop docs immediate; cluster_stop docs_one immediate' EXIT
cd "$REPO"
# (docs/backfill.md's backfills count in its own database, as its settings block says for a node.)
cluster_init docs $P "idgen.worker_id = 1" "idgen.backfill_worker_id = 1023" "idgen.backfill_database = 'doctest_docs_backfill'"
cluster_start docs
pages=(README.md docs/*.md CONTRIBUTING.md)
check "every SQL example runs, with the output each page shows (${#pages[@]} pages)" \
  python3 tools/doctest.py --port $P "${pages[@]}"
# A reader who follows the README's quick start and then every page in one database meets no
# name an earlier page took (a server of its own: its backfill counters are in that database).
P1=$(port 1)
cluster_init docs_one $P1 "idgen.worker_id = 1" "idgen.backfill_worker_id = 1023" "idgen.backfill_database = 'doctest_one'"
cluster_start docs_one
check "... and all of them in order in one database, after the README's quick start" \
  python3 tools/doctest.py --port $P1 --one-database doctest_one "${pages[@]}"
cluster_stop docs_one
qdb $P postgres "CREATE DATABASE reference" && qdb $P reference "CREATE EXTENSION pg_idgen"
check "docs/reference.md is the installed catalog, every function's SQLSTATEs written" \
  python3 tools/sql_reference.py --port $P --dbname reference --check

phase "controls: the same checks on copies with one thing changed must fail"
tmp=$(mktemp -d)
mkdir -p "$tmp/docs"
# The quick start's decoded tweet, with another worker id shown.
sed 's/|            10 |         7 |        0/|            10 |         8 |        0/' README.md >"$tmp/README.md"
check "control: the README's copy shows another output" fails cmp -s README.md "$tmp/README.md"
check "control: doctest fails on it" fails python3 tools/doctest.py --port $P "$tmp/README.md"
# snowflake_next() said to be IMMUTABLE.
awk '/^### snowflake_next$/ {f = 1} f && /^VOLATILE/ {sub(/^VOLATILE/, "IMMUTABLE"); f = 0} {print}' \
  docs/reference.md >"$tmp/docs/reference.md"
check "control: a reference with a wrong volatility is refused" \
  fails python3 tools/sql_reference.py --port $P --dbname reference --check --file "$tmp/docs/reference.md"
# A block that prints a WARNING its page does not show (an ID decoded from the far future).
printf '# A page\n\n```sql\nSELECT count(*) FROM id_decode(9000000000000000000);\n```\n\n```text\n count\n-------\n     1\n(1 row)\n```\n' >"$tmp/docs/warns.md"
check "control: doctest fails on a page whose block prints a WARNING it does not show" \
  fails python3 tools/doctest.py --port $P "$tmp/docs/warns.md"
rm -rf "$tmp"
finish
