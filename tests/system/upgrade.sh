#!/usr/bin/env bash
# Upgrades: install the released 0.1.0 (its install script is kept, frozen, in sql/released/),
# make data with it, ALTER EXTENSION pg_idgen UPDATE (through every release between), and check
# that
#   - the data is kept and IDs go on without a repeat (segments above max_id, Snowflake above);
#   - what 0.2.0 added works (leases, privileges);
#   - the upgraded extension is the same, object for object, as a fresh install of the new
#     version: members, function definitions, views, columns (with their comments), constraints,
#     indexes, comments, privileges and the tables pg_dump keeps.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
EXTDIR="$("$PG_CONFIG" --sharedir)/extension"
NEW=$(sed -n 's/^version = "\(.*\)"/\1/p' "$REPO/Cargo.toml" | head -1)
# A lease coordinator that makes Snowflake IDs too: its own worker id is set (worker_unset.sh)
cluster_init upgrade $PORT "idgen.worker_id = 1"
cluster_start upgrade
trap 'cluster_stop upgrade immediate' EXIT
# The released install scripts of older versions (the current version's comes from this build).
for f in "$REPO"/sql/released/pg_idgen--*.sql; do
  [ "$(basename "$f")" = "pg_idgen--$NEW.sql" ] || $SUDO install -m 644 "$f" "$EXTDIR/"
done

# The upgrade script to an unreleased version is made by tools/upgrade_sql.py from the part written
# by hand (sql/upgrade/) and what this build's install script has that the last release's has not;
# the one in sql/ must be what it makes. Controls: a statement missing from it, and a changed
# object the part by hand does not speak of.
if ! grep -q "sql/released/pg_idgen--$NEW.sql" "$REPO/sql/released.sha256"; then
  check "the upgrade script to $NEW is what sql/upgrade/ and this build make (make upgrade-sql)" \
    python3 "$REPO/tools/upgrade_sql.py" "$EXTDIR/pg_idgen--$NEW.sql" --check
  script=$(ls "$REPO"/sql/pg_idgen--*--"$NEW".sql)
  changes="$REPO/sql/upgrade/$(basename "$script" .sql | sed 's/^pg_idgen--//').sql"
  awk '/^-- @new objects$/ { copying = 1 } copying && /^CREATE/ && !dropped { dropped = 1; skip = 1 }
       skip { if (/;$/) skip = 0; next } { print }' "$script" >"$WORK/upgrade.short.sql"
  check "control: a script without one of the new objects fails the check" eq \
    "$(python3 "$REPO/tools/upgrade_sql.py" "$EXTDIR/pg_idgen--$NEW.sql" --check --script "$WORK/upgrade.short.sql" >/dev/null 2>&1; echo $?)" 1
  if directive=$(grep -m1 -E '^-- @(replace|changed) ' "$changes"); then
    grep -vxF -- "$directive" "$changes" >"$WORK/upgrade.changes.sql"
    object=$(echo "$directive" | sed -E 's/^-- @[a-z]+ //; s/:.*//')
    check "control: a changed object the part by hand does not speak of is refused ($object)" eq \
      "$(python3 "$REPO/tools/upgrade_sql.py" "$EXTDIR/pg_idgen--$NEW.sql" --check --changes "$WORK/upgrade.changes.sql" 2>&1 |
         grep -cxF "  $object changed: say @replace or @changed")" 1
  fi
fi

q $PORT "CREATE DATABASE old" && q $PORT "CREATE DATABASE fresh"
qdb $PORT old "CREATE EXTENSION pg_idgen VERSION '0.1.0'"
qdb $PORT old "SELECT idgen.segment_create('order', step => 100)" >/dev/null
qdb $PORT old "CREATE TABLE seg AS SELECT segment_next('order') AS id FROM generate_series(1, 250);
               CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int);
               INSERT INTO t (v) SELECT g FROM generate_series(1, 1000) g" >/dev/null
check "0.1.0 installed and used" eq "$(qdb $PORT old "SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'")|$(qdb $PORT old "SELECT count(*) FROM t")" "0.1.0|1000"

qdb $PORT old "ALTER EXTENSION pg_idgen UPDATE"
check "ALTER EXTENSION pg_idgen UPDATE reaches $NEW" eq "$(qdb $PORT old "SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'")" "$NEW"
check "segments: the type is kept and IDs go on above the old ones" eq \
  "$(qdb $PORT old "SELECT segment_next('order') > (SELECT max(id) FROM seg) AND (SELECT step FROM idgen.segments WHERE biz_type = 'order') = 100")" t
check "Snowflake: IDs go on above the old ones" eq "$(qdb $PORT old "INSERT INTO t (v) VALUES (0) RETURNING id > (SELECT max(id) FROM t WHERE v > 0)")" t
check "leases work after the upgrade" eq "$(qdb $PORT old "SELECT worker_id FROM idgen.worker_acquire('after-upgrade')")" 0
qdb $PORT old "CREATE ROLE upgrade_plain LOGIN" >/dev/null
check "privileges after the upgrade: a plain role cannot administer" eq \
  "$(psql -h 127.0.0.1 -p $PORT -U upgrade_plain -d old -X -q -A -t -c "SELECT idgen.segment_create('x')" 2>&1 | grep -c 'permission denied')" 1
check "privileges after the upgrade: a plain role still makes IDs" eq \
  "$(psql -h 127.0.0.1 -p $PORT -U upgrade_plain -d old -X -q -A -t -c "SELECT segment_next('order') > 0 AND snowflake_next() > 0")" t

qdb $PORT fresh "CREATE EXTENSION pg_idgen"
# Every list in a line is sorted by its content (an ACL's items come in the order of the GRANTs
# that made them, which an upgrade script need not repeat), so two lines differ only when the
# objects do.
describe() { # DB -> the extension's objects, one canonical line each
  qdb $PORT "$1" "
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen'),
m AS (SELECT classid, objid FROM pg_depend WHERE refobjid = (SELECT oid FROM ext) AND deptype = 'e')
SELECT 'member ' || pg_describe_object(classid, objid, 0) FROM m
UNION ALL
SELECT 'function ' || p.oid::regprocedure || ' '
       || md5(CASE WHEN p.prokind = 'a' THEN (SELECT a::text FROM pg_aggregate a WHERE a.aggfnoid = p.oid) ELSE pg_get_functiondef(p.oid) END) || ' acl=' || coalesce((SELECT string_agg(i::text, ' ' ORDER BY i::text) FROM unnest(p.proacl) i), '-')
       || ' comment=' || md5(coalesce(obj_description(p.oid, 'pg_proc'), '-'))
  FROM m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
UNION ALL
SELECT 'relation ' || c.oid::regclass || ' ' || c.relkind::text || ' acl=' || coalesce((SELECT string_agg(i::text, ' ' ORDER BY i::text) FROM unnest(c.relacl) i), '-')
       || ' comment=' || md5(coalesce(obj_description(c.oid, 'pg_class'), '-'))
       || ' view=' || coalesce(md5(pg_get_viewdef(c.oid)), '-')
       || ' columns=' || coalesce((SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod) || ':' || a.attnotnull
                                  || ':' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
                                  || ':' || md5(coalesce(col_description(a.attrelid, a.attnum), '-')), ',' ORDER BY a.attnum)
                                  FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                                  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '-')
       || ' constraints=' || coalesce((SELECT string_agg(pg_get_constraintdef(k.oid), ',' ORDER BY pg_get_constraintdef(k.oid))
                                  FROM pg_constraint k WHERE k.conrelid = c.oid), '-')
       || ' indexes=' || coalesce((SELECT string_agg(pg_get_indexdef(i.indexrelid), ',' ORDER BY pg_get_indexdef(i.indexrelid))
                                  FROM pg_index i WHERE i.indrelid = c.oid), '-')
       || ' triggers=' || coalesce((SELECT string_agg(pg_get_triggerdef(g.oid) || ' ' || g.tgenabled::text, ',' ORDER BY pg_get_triggerdef(g.oid))
                                  FROM pg_trigger g WHERE g.tgrelid = c.oid AND NOT g.tgisinternal), '-')
  FROM m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
UNION ALL
SELECT 'dumped ' || string_agg(x::regclass::text, ',' ORDER BY x::regclass::text)
  FROM pg_extension, unnest(extconfig) x WHERE extname = 'pg_idgen'
UNION ALL
SELECT 'schema ' || nspname || ' acl=' || coalesce((SELECT string_agg(i::text, ' ' ORDER BY i::text) FROM unnest(nspacl) i), '-') || ' comment=' || md5(coalesce(obj_description(oid, 'pg_namespace'), '-')) FROM pg_namespace WHERE nspname IN ('idgen', 'idgen_internal')
ORDER BY 1"
}
describe old >"$WORK/upgrade.old"
describe fresh >"$WORK/upgrade.fresh"
check "the upgraded extension equals a fresh install ($(wc -l <"$WORK/upgrade.fresh") lines compared)" \
  diff -u "$WORK/upgrade.fresh" "$WORK/upgrade.old"

# From the newest release before this build, with a lease held across the update.
PREV=$(sed -n 's|.*sql/released/pg_idgen--\(.*\)\.sql$|\1|p' "$REPO/sql/released.sha256" | grep -vx "$NEW" | sort -V | tail -1)
if [ "$PREV" != 0.1.0 ]; then
  q $PORT "CREATE DATABASE prev"
  qdb $PORT prev "CREATE EXTENSION pg_idgen VERSION '$PREV'"
  held=$(qdb $PORT prev "SELECT worker_id || '|' || lease FROM idgen.worker_acquire('held-across', '1 hour')")
  check "$PREV objects under the new library: IDs and snowflake_start_after work before the update" eq \
    "$(qdb $PORT prev "SELECT idgen.snowflake_start_after(now()) IS NOT NULL AND snowflake_next() > 0 AND msgid_next(1, 'x') IS NOT NULL")" t
  qdb $PORT prev "ALTER EXTENSION pg_idgen UPDATE"
  check "after the update to $NEW, idgen.node_origins names this system only" eq \
    "$(qdb $PORT prev "SELECT count(*), bool_and(system_identifier = idgen.node_system_identifier()) FROM idgen.node_origins")" "1|t"
  check "$PREV updates to $NEW" eq "$(qdb $PORT prev "SELECT extversion FROM pg_extension WHERE extname = 'pg_idgen'")" "$NEW"
  check "a lease held across the update is still held and renews" eq \
    "$(qdb $PORT prev "SELECT idgen.worker_heartbeat(${held%%|*}, 'held-across', NULL, ${held##*|}) > now()")" t
  check "a lease held across the update is not handed out again" ne \
    "$(qdb $PORT prev "SELECT worker_id FROM idgen.worker_acquire('another', '1 hour')")" "${held%%|*}"
  describe prev >"$WORK/upgrade.prev"
  check "$PREV updated equals a fresh install" diff -u "$WORK/upgrade.fresh" "$WORK/upgrade.prev"
fi
finish
