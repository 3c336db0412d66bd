#!/usr/bin/env python3
"""The upgrade script of a version, from what is new in its install script.

    upgrade_sql.py NEW_INSTALL --write | --check      (make upgrade-sql; tests/system/upgrade.sh)

From A, the newest released version, to B, the one Cargo.toml builds: OLD_INSTALL is A's frozen
install script (sql/released/pg_idgen--A.sql), NEW_INSTALL the install script this build made
(from sql/install/ and the Rust functions), CHANGES the part written by hand
(sql/upgrade/A--B.sql), and the result sql/pg_idgen--A--B.sql, where cargo pgrx install finds it. Both install scripts are split into statements and every
CREATE is known by its object (kind and name: a function's overloads are one object). Then:

  - an object only NEW_INSTALL creates is new: its statements are copied, in NEW_INSTALL's order
    (which is the order of its dependencies), NEW_INSTALL's blocks first put in their one order
    (tools/canonical_sql.py: pgrx's changes from build to build);
  - COMMENT, ALTER FUNCTION and pg_extension_config_dump statements that OLD_INSTALL does not
    hold word for word are copied too: each one only sets what it names;
  - every GRANT and REVOKE is copied, in order, old or new: "REVOKE ... ON ALL FUNCTIONS IN
    SCHEMA" has to reach the new functions, and then every grant after it has to be given again,
    so that the privileges end as a fresh install's;
  - an object both create, but differently, is changed, and an object only OLD_INSTALL creates is
    dropped: nothing is derived for them. CHANGES must say what to do with each, in a line of its
    own, or the script is refused:
        -- @replace function idgen.worker_heartbeat   the new CREATE, as CREATE OR REPLACE, here
        -- @changed table idgen.workers: <why>         CHANGES itself makes the change (ALTER ...)
        -- @dropped function idgen.old_thing: <why>    CHANGES itself drops it
    and any other statement NEW_INSTALL adds (an INSERT, a DO block) must be named the same way:
        -- @changed statement <its first words>: <why>
  - "-- @new objects" in CHANGES marks where the copied statements go (the end if absent).

--write writes the result; --check compares (exit 1 and a diff when they differ). A released
upgrade script is frozen (sql/released.sha256), so this runs only for the next one.
"""
import argparse
import difflib
import os
import re
import sys

EMIT_IF_NEW = re.compile(
    r"(COMMENT ON|ALTER FUNCTION|SELECT pg_catalog\.pg_extension_config_dump)\b", re.I)
PRIVILEGES = re.compile(r"(GRANT|REVOKE)\b", re.I)
CREATE = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:UNIQUE\s+)?"
    r"(FUNCTION|PROCEDURE|AGGREGATE|TABLE|VIEW|MATERIALIZED\s+VIEW|INDEX|SEQUENCE|TYPE|DOMAIN|CAST|"
    r"OPERATOR\s+CLASS|OPERATOR\s+FAMILY|OPERATOR|EVENT\s+TRIGGER|TRIGGER|SCHEMA(?:\s+IF\s+NOT\s+EXISTS)?)"
    r"\s+((?:\"[^\"]+\"|[\w$]+)(?:\s*\.\s*(?:\"[^\"]+\"|[\w$]+))?)", re.I)
TRIGGER_TABLE = re.compile(r"\bON\s+((?:\"[^\"]+\"|[\w$]+)(?:\.(?:\"[^\"]+\"|[\w$]+))?)", re.I)
DIRECTIVE = re.compile(r"^--\s*@(replace|changed|dropped)\s+(.+?)\s*(?::.*)?$")


def statements(text):
    """(text, code) for each statement: text as written (with the comments before it), code with
    comments removed and white space collapsed, for comparing. psql's backslash lines count as
    statements of their own."""
    out, start, i, n = [], 0, 0, len(text)
    code = []

    def flush(end):
        nonlocal start, code
        chunk = text[start:end]
        normal = " ".join("".join(code).split())
        if normal:
            out.append((chunk.strip("\n"), normal))
        start, code = end, []

    while i < n:
        c = text[i]
        if c == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            code.append(" ")
        elif c == "/" and text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            code.append(" ")
        elif c == "\\" and (i == 0 or text[i - 1] == "\n") and not "".join(code).strip():
            j = text.find("\n", i)
            j = n if j < 0 else j
            code.append(text[i:j])
            i = j
            flush(i)
        elif c in "'\"":
            j = i + 1
            while j < n:
                if text[j] == c and text.startswith(c * 2, j):
                    j += 2
                elif text[j] == c:
                    break
                else:
                    j += 1
            code.append(text[i:j + 1])
            i = j + 1
        elif c == "$":
            m = re.match(r"\$([A-Za-z_]\w*)?\$", text[i:])
            if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
                tag = m.group(0)
                j = text.find(tag, i + len(tag))
                j = n if j < 0 else j + len(tag)
                code.append(text[i:j])
                i = j
            else:
                code.append(c)
                i += 1
        elif c == ";":
            code.append(c)
            i += 1
            flush(i)
        else:
            code.append(c)
            i += 1
    flush(n)
    return out


# What pgrx writes around its statements and changes whenever code moves: its markers, and the
# file, line and Rust path of each function.
PGRX_NOISE = re.compile(r"^(/\* </?(begin|end) connected objects> \*/|-- src/\S+:\d+|-- [\w:]+::\w+|/\* [\w:]+::\w+ \*/)$")


def tidy(text):
    """A statement as copied: without pgrx's noise and the blank lines around it."""
    lines = [line for line in text.splitlines() if not PGRX_NOISE.match(line.strip())]
    return "\n".join(lines).strip("\n")


def name(raw):
    parts = [p.strip().strip('"') for p in raw.split(".")]
    return ".".join(parts)


def identity(code):
    """('function', 'idgen.foo') for a CREATE, None for any other statement."""
    m = CREATE.match(code)
    if not m:
        return None
    kind = " ".join(m.group(1).lower().split()).replace("schema if not exists", "schema")
    obj = name(m.group(2))
    if kind == "trigger":
        t = TRIGGER_TABLE.search(code, m.end())
        obj += " on " + (name(t.group(1)) if t else "?")
    return kind, obj


def objects(stmts):
    found = {}
    for text, code in stmts:
        ident = identity(code)
        if ident:
            found.setdefault(ident, []).append((text, code))
    return found


def generate(old_text, new_text, changes_text):
    old, new = statements(old_text), statements(new_text)
    old_objects, new_objects = objects(old), objects(new)
    old_codes = {code for _, code in old}
    said = {}
    for line in changes_text.splitlines():
        m = DIRECTIVE.match(line.strip())
        if m:
            said[" ".join(m.group(2).split())] = m.group(1)

    def told(kind, obj):
        return said.get(f"{kind} {obj}")

    problems, replaced = [], {}
    for ident, defs in new_objects.items():
        if ident not in old_objects:
            continue
        if {c for _, c in defs} == {c for _, c in old_objects[ident]}:
            if told(*ident):
                problems.append(f"{' '.join(ident)}: @{told(*ident)}, but it did not change")
            continue
        what = told(*ident)
        if what == "replace" and ident[0] in ("function", "procedure", "view", "trigger"):
            replaced[ident] = defs
        elif what == "replace":
            problems.append(f"{' '.join(ident)}: a {ident[0]} has no CREATE OR REPLACE: say @changed")
        elif what != "changed":
            problems.append(f"{' '.join(ident)} changed: say @replace or @changed")
    for ident in old_objects.keys() - new_objects.keys():
        if told(*ident) != "dropped":
            problems.append(f"{' '.join(ident)} is gone: say @dropped")

    copied = []
    for text, code in new:
        ident = identity(code)
        if ident:
            if ident not in old_objects:
                copied.append(tidy(text))
            continue
        if PRIVILEGES.match(code):
            copied.append(tidy(text))
            continue
        if code in old_codes:
            continue
        if EMIT_IF_NEW.match(code):
            copied.append(tidy(text))
            continue
        first = " ".join(code.split()[:3])
        if told("statement", first) != "changed":
            problems.append(f"a new statement \"{first} ...\" that is neither an object nor a "
                            f"comment or privilege: say @changed statement {first}")
    for key, what in said.items():
        kind, _, obj = key.partition(" ")
        if what == "replace" and (kind, obj) not in replaced:
            problems.append(f"@replace {key}: no such changed object")
    if problems:
        raise SystemExit("upgrade_sql: refused:\n  " + "\n  ".join(problems))

    out = []
    marker = False
    for line in changes_text.splitlines():
        m = DIRECTIVE.match(line.strip())
        out.append(line)
        if m and m.group(1) == "replace":
            kind, _, obj = " ".join(m.group(2).split()).partition(" ")
            for text, _ in replaced[(kind, obj)]:
                out.append(re.sub(r"CREATE\s+(OR\s+REPLACE\s+)?", "CREATE OR REPLACE ", tidy(text), count=1))
        elif line.strip() == "-- @new objects":
            marker = True
            out.append("\n\n".join(copied))
    if not marker:
        out.append("-- @new objects")
        out.append("\n\n".join(copied))
    return "\n".join(out).rstrip("\n") + "\n"


def same(have, made):
    """Whether a script holds what the generator makes: the part by hand word for word, and the
    same statements copied, in any order: the install script differs between PostgreSQL
    versions (functions of some majors only), and so may its one order; every order pgrx makes
    respects the dependencies, and tests/system/upgrade.sh runs the script on each version."""
    def split(script):
        head, _, copies = script.partition("\n-- @new objects\n")
        return head, sorted(code for _, code in statements(copies))
    return split(have) == split(made)


def versions(repo):
    """(previous, current): the newest released version below the one Cargo.toml builds."""
    current = re.search(r'^version = "(.*)"', open(os.path.join(repo, "Cargo.toml")).read(), re.M).group(1)
    key = lambda v: tuple(int(x) for x in v.split("."))
    released = re.findall(r"sql/released/pg_idgen--(.*)\.sql$",
                          open(os.path.join(repo, "sql/released.sha256")).read(), re.M)
    older = [v for v in released if key(v) < key(current)]
    if current in released or not older:
        raise SystemExit(f"upgrade_sql: {current} is released (or nothing is): its upgrade script is frozen")
    return max(older, key=key), current


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("new_install", help="the install script this build made")
    dest = ap.add_mutually_exclusive_group(required=True)
    dest.add_argument("--write", action="store_true", help="write the upgrade script into sql/")
    dest.add_argument("--check", action="store_true", help="compare it with the one in sql/")
    ap.add_argument("--repo", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--changes", help="the part by hand (default sql/upgrade/PREVIOUS--VERSION.sql)")
    ap.add_argument("--script", help="the upgrade script (default sql/pg_idgen--PREVIOUS--VERSION.sql)")
    a = ap.parse_args()
    prev, new = versions(a.repo)
    changes = a.changes or os.path.join(a.repo, f"sql/upgrade/{prev}--{new}.sql")
    target = a.script or os.path.join(a.repo, f"sql/pg_idgen--{prev}--{new}.sql")
    read = lambda p: open(p, encoding="utf-8").read()
    have = read(target) if os.path.exists(target) else ""
    # pgrx's order changes from build to build: the copies follow the install script put in its
    # one order (tools/canonical_sql.py), so the file changes only where the statements do.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from canonical_sql import canonical
    script = generate(read(os.path.join(a.repo, f"sql/released/pg_idgen--{prev}.sql")),
                      canonical(read(a.new_install), os.path.abspath(a.repo)), read(changes))
    if a.write:
        with open(target, "w", encoding="utf-8") as f:
            f.write(script)
        print(f"upgrade_sql: wrote {os.path.relpath(target, a.repo)}")
        return 0
    if same(have, script):
        print(f"upgrade_sql: {os.path.relpath(target, a.repo)} is what {os.path.relpath(changes, a.repo)} "
              "and this build's install script make")
        return 0
    try:
        sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), script.splitlines(True),
                                                   target, "generated", n=1))
    except BrokenPipeError:
        pass
    print(f"upgrade_sql: {target} is not what {changes} and this build's install script make: "
          "run make upgrade-sql", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
