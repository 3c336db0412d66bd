#!/usr/bin/env python3
"""docs/reference.md from the installed catalog: every function, view and table of pg_idgen.

    tools/sql_reference.py --port P [--write | --check] [--file docs/reference.md]

Signatures, results, volatility, parallel safety, SECURITY DEFINER, who may call or read each
object (its ACL), the catalog's comments and every column come from a database where the
extension is installed, so the page can never drift from the code. What the catalog does not
know is written by hand in the page and kept: the line starting `Errors:` under each function,
the SQLSTATEs it raises. --check (the test command) fails when the page differs from what the
catalog gives, or when a function has no `Errors:` line; --write rewrites the page, keeping the
hand-written lines, and adds `Errors: (to write)` for a new function, which --check refuses.
"""
import argparse
import json
import os
import re
import subprocess
import sys

CATALOG = r"""
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen'),
members AS (
    SELECT d.classid, d.objid FROM pg_depend d, ext
     WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'),
grants AS (  -- who may use an object, from its ACL (NULL: the default, EXECUTE for PUBLIC)
    SELECT o.oid, o.kind, array_agg(DISTINCT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END
                                    || CASE WHEN o.kind = 'r' THEN ' ' || a.privilege_type ELSE '' END
                                    ORDER BY CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(a.grantee) END
                                    || CASE WHEN o.kind = 'r' THEN ' ' || a.privilege_type ELSE '' END) AS who
      FROM (SELECT p.oid, 'f' AS kind, coalesce(p.proacl, acldefault('f', p.proowner)) AS acl, p.proowner AS owner
              FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
            UNION ALL
            SELECT c.oid, 'r', coalesce(c.relacl, acldefault('r', c.relowner)), c.relowner
              FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid) o,
           aclexplode(o.acl) a
     WHERE a.grantee <> o.owner
     GROUP BY o.oid, o.kind)
SELECT json_build_object(
  'functions', (SELECT json_agg(json_build_object(
        'schema', n.nspname, 'name', p.proname,
        'args', pg_get_function_arguments(p.oid), 'result', pg_get_function_result(p.oid),
        'kind', p.prokind, 'volatility', p.provolatile, 'parallel', p.proparallel,
        'definer', p.prosecdef, 'strict', p.proisstrict, 'language', l.lanname,
        'who', coalesce(g.who, '{}'), 'comment', obj_description(p.oid, 'pg_proc'))
        ORDER BY n.nspname, p.proname, pg_get_function_identity_arguments(p.oid))
      FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
      JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
      LEFT JOIN grants g ON g.oid = p.oid AND g.kind = 'f'),
  'relations', (SELECT json_agg(json_build_object(
        'schema', n.nspname, 'name', c.relname, 'kind', c.relkind,
        'who', coalesce(g.who, '{}'), 'comment', obj_description(c.oid, 'pg_class'),
        'columns', (SELECT json_agg(json_build_object(
                         'name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
                         'comment', col_description(c.oid, a.attnum),
                         'who', (SELECT array_agg(CASE WHEN x.grantee = 0 THEN 'PUBLIC' ELSE pg_get_userbyid(x.grantee) END
                                                  || ' ' || x.privilege_type ORDER BY 1)
                                   FROM aclexplode(a.attacl) x))
                       ORDER BY a.attnum)
                      FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped))
        ORDER BY n.nspname, c.relname)
      FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN grants g ON g.oid = c.oid AND g.kind = 'r'
     WHERE c.relkind IN ('r', 'v'))
)
"""

VOLATILITY = {"i": "IMMUTABLE", "s": "STABLE", "v": "VOLATILE"}
PARALLEL = {"s": "PARALLEL SAFE", "r": "PARALLEL RESTRICTED", "u": "PARALLEL UNSAFE"}
HEAD = """# SQL reference

Every function, view and table of pg_idgen 0.2.5, as the installed catalog has them: this page is
made from the catalog by `tools/sql_reference.py --write`, and the test command
(`tests/system/docs.sh`) fails when it differs from a fresh install, so it cannot fall behind
the code. Only the `Errors:` lines are written by hand. The pages by task say how the functions
work together: [Snowflake IDs](snowflake.md), [segments](segments.md), [text forms](text-forms.md),
[UUIDv7](uuidv7.md), [partitioning](partitioning.md), [worker ids](worker-ids.md), [read horizon](read-horizon.md),
[public IDs](public-ids.md), [adopting](adopting.md), [operations](operations.md).

Generators and decoders are created in the schema of `CREATE EXTENSION` (`public` by default,
shown without a schema here); administration is in `idgen`; `idgen_internal` holds what the views,
tables and triggers call, not for direct use. "May call" lists the roles granted EXECUTE (for
views and tables, the privileges) besides the owner and superusers: `PUBLIC` is every role.
Functions are `STRICT` where said: they return NULL for a NULL argument without running. Every
bad argument is an ERROR with the SQLSTATE given under the function; on a standby, every
generator and every function that writes is refused with 25006; without
`shared_preload_libraries = 'pg_idgen'`, every function with 55000.
"""


def fetch(args):
    out = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-h", args.host, "-p", str(args.port), "-U", args.user,
                          "-d", args.dbname, "-v", "ON_ERROR_STOP=1", "-c", CATALOG],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"  FAIL: could not read the catalog: {out.stderr.strip()}")
    return json.loads(out.stdout)


def kept_errors(text):
    """The hand-written Errors: lines of the page, by the heading they stand under."""
    errors, heading, current = {}, None, None
    for line in text.split("\n"):
        if line.startswith("### "):
            heading, current = line[4:].strip(), None
        elif line.startswith("Errors:") and heading:
            current = errors.setdefault(heading, [])
            current.append(line)
        elif current is not None and line.strip():
            current.append(line)
        else:
            current = None
    return {k: "\n".join(v) for k, v in errors.items()}


def qualified(obj):
    return obj["name"] if obj["schema"] not in ("idgen", "idgen_internal") else f"{obj['schema']}.{obj['name']}"


def comment(text):
    return (text or "(no comment)").strip()


def render(catalog, errors):
    out = [HEAD]
    functions = catalog["functions"]
    groups = {}
    for f in functions:
        groups.setdefault((f["schema"] if f["schema"] in ("idgen", "idgen_internal") else "", f["name"]), []).append(f)
    sections = [("", "## Generators, decoders and text forms",
                 "In the extension's schema: what applications call."),
                ("idgen", "## Administration and special-purpose functions (`idgen`)", None)]
    for schema, title, intro in sections:
        out.append(title + "\n")
        if intro:
            out.append(intro + "\n")
        for (s, name), overloads in sorted(groups.items()):
            if s != schema:
                continue
            heading = qualified(overloads[0])
            out.append(f"### {heading}\n")
            out.append("```\n" + "\n".join(f"{heading}({f['args']}) → {f['result']}" for f in overloads) + "\n```\n")
            attrs = []
            for f in overloads:
                a = [VOLATILITY[f["volatility"]], PARALLEL[f["parallel"]]]
                if f["strict"]:
                    a.append("STRICT")
                if f["definer"]:
                    a.append("SECURITY DEFINER")
                a.append("may call: " + (", ".join(f["who"]) or "superusers only"))
                attrs.append(" · ".join(a))
            if len(set(attrs)) == 1:
                out.append(attrs[0] + "\n")
            else:
                out.append("\n".join(f"- `({f['args']})`: {a}" for f, a in zip(overloads, attrs)) + "\n")
            comments = []
            for f in overloads:
                if comment(f["comment"]) not in comments:
                    comments.append(comment(f["comment"]))
            out.append("\n\n".join(comments) + "\n")
            out.append(errors.get(heading, "Errors: (to write)") + "\n")
    out.append("## Views and tables (`idgen`)\n")
    for r in catalog["relations"]:
        if r["schema"] != "idgen":
            continue
        heading = qualified(r)
        kind = "view" if r["kind"] == "v" else "table"
        out.append(f"### {heading}\n")
        out.append(f"{kind} · may read: " + (", ".join(r["who"]) or "superusers only") + "\n")
        out.append(comment(r["comment"]) + "\n")
        rows = ["| column | type | what |", "|---|---|---|"]
        for c in r["columns"]:
            extra = f" (column privileges: {', '.join(c['who'])})" if c["who"] else ""
            text = comment(c["comment"]).replace("|", "\\|").replace("\n", " ")
            rows.append(f"| `{c['name']}` | {c['type']} | {text}{extra} |")
        out.append("\n".join(rows) + "\n")
    out.append("## Internal objects (`idgen_internal`)\n")
    out.append("What the views, tables and triggers above call; not for direct use, and not promised to stay.\n")
    rows = ["| object | what |", "|---|---|"]
    for (s, name), overloads in sorted(groups.items()):
        if s != "idgen_internal":
            continue
        for f in overloads:
            rows.append(f"| `{qualified(f)}({f['args']})` | {comment(f['comment']).replace(chr(10), ' ')} |")
    for r in catalog["relations"]:
        if r["schema"] == "idgen_internal":
            rows.append(f"| table `{qualified(r)}` | {comment(r['comment']).replace(chr(10), ' ')} |")
    out.append("\n".join(rows) + "\n")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default=os.environ.get("PGPORT", "5432"))
    parser.add_argument("--user", default="postgres")
    parser.add_argument("--dbname", default="postgres")
    parser.add_argument("--file", default=os.path.join(os.path.dirname(__file__), "..", "docs", "reference.md"))
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = parser.parse_args()
    old = open(args.file, encoding="utf-8").read() if os.path.exists(args.file) else ""
    new = render(fetch(args), kept_errors(old))
    if args.write:
        open(args.file, "w", encoding="utf-8").write(new)
        print(f"  wrote {args.file}")
        return 0
    problems = 0
    if new != old:
        import difflib
        diff = list(difflib.unified_diff(old.split("\n"), new.split("\n"), "the page", "the catalog", lineterm="", n=1))
        print("  FAIL: docs/reference.md differs from the installed catalog (tools/sql_reference.py --write):")
        print("\n".join("    " + line for line in diff[:60]))
        problems += 1
    todo = [line for line in new.split("\n") if line == "Errors: (to write)"]
    if todo:
        print(f"  FAIL: {len(todo)} functions have no Errors: line written in docs/reference.md")
        problems += 1
    n_f = new.count("\n### ")
    if not problems:
        print(f"  ok: docs/reference.md is the installed catalog ({n_f} functions, views and tables)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
