#!/usr/bin/env bash
# TypeIDs against another implementation of the TypeID specification: typeid-python from PyPI
# (pinned; installed once into a venv in /var/tmp/pg_idgen_clients/typeid).
#   - theirs to ours: TypeIDs the library made (its own UUIDv7s, several prefixes, the nil and
#     the largest UUID) decode here to the UUID and prefix the library says;
#   - ours to theirs: typeid_next() and typeid_from_uuid() decode there to the UUID and prefix
#     typeid_to_uuid() and typeid_prefix() say here, and the library writes them back the same.
# (The specification's own valid and invalid examples: tests/pg_regress/sql/typeid.sql.)
# Skipped, saying why, when PyPI cannot be reached.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
VENV=/var/tmp/pg_idgen_clients/typeid
PKG="typeid-python==0.3.11"
if ! "$VENV/bin/python" -c "import typeid" 2>/dev/null; then
  rm -rf "$VENV"
  if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "$PKG"; } >"$WORK/pip_typeid.log" 2>&1; then
    rm -rf "$VENV"
    skip_test "pip could not install $PKG from PyPI ($(tail -1 "$WORK/pip_typeid.log"))"
  fi
fi
echo "  $("$VENV/bin/pip" show typeid-python 2>/dev/null | sed -n 's/^Version: /typeid-python /p')"
cluster_init typeid $PORT
cluster_start typeid
trap 'cluster_stop typeid immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen" >/dev/null

# Theirs, as "typeid<TAB>prefix<TAB>uuid" lines.
"$VENV/bin/python" - >"$WORK/typeid_theirs.tsv" <<'PY'
import uuid
from typeid import TypeID, from_uuid
rows = []
for prefix in ["user", "api_key", "a", "", "z" * 63]:
    for _ in range(200):
        t = TypeID(prefix=prefix or None)
        rows.append((str(t), prefix, str(t.uuid)))
for u in ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"]:
    t = from_uuid(suffix=uuid.UUID(u), prefix="edge")
    rows.append((str(t), "edge", u))
for r in rows:
    print("\t".join(r))
PY
n=$(wc -l <"$WORK/typeid_theirs.tsv")
q $PORT "CREATE TABLE theirs (typeid text, prefix text, id uuid)" >/dev/null
psql -h 127.0.0.1 -p $PORT -U postgres -X -q -c "\\copy theirs FROM '$WORK/typeid_theirs.tsv'"
check "typeid-python's $n TypeIDs (5 prefixes, the nil and largest UUID) decode here to its UUIDs and prefixes" eq \
  "$(q $PORT "SELECT count(*) FILTER (WHERE typeid_to_uuid(typeid) = id AND typeid_to_uuid(typeid, prefix) = id
                                        AND typeid_prefix(typeid) = prefix AND typeid_from_uuid(prefix, id) = typeid)
              FROM theirs")" "$n"

# Ours, read there.
q $PORT "SELECT t, typeid_prefix(t), typeid_to_uuid(t) FROM (
           SELECT typeid_next(p) AS t FROM unnest(ARRAY['user', 'api_key', '', repeat('z', 63)]) p, generate_series(1, 200)
           UNION ALL SELECT typeid_from_uuid('edge', u) FROM unnest(ARRAY['00000000-0000-0000-0000-000000000000',
             'ffffffff-ffff-ffff-ffff-ffffffffffff', gen_random_uuid()::text]::uuid[]) u) x" |
  tr '|' '\t' >"$WORK/typeid_ours.tsv"
m=$(wc -l <"$WORK/typeid_ours.tsv")
read_there=$("$VENV/bin/python" - "$WORK/typeid_ours.tsv" <<'PY'
import sys
from typeid import TypeID
ok = 0
for line in open(sys.argv[1]):
    text, prefix, u = line.rstrip("\n").split("\t")
    t = TypeID.from_string(text)
    if (t.prefix or "") == prefix and str(t.uuid) == u and str(t) == text:
        ok += 1
print(ok)
PY
)
check "our $m TypeIDs (typeid_next with 4 prefixes, typeid_from_uuid of edge UUIDs) decode there to the same UUIDs and prefixes" eq \
  "$read_there" "$m"
finish
