#!/usr/bin/env python3
"""Each Rust function's SQL comment, made from its doc comment: one text, written once.

    sql_comments.py INSTALL_SQL [--root DIR] --write | --check   (the build part of the tests)

INSTALL_SQL is the install script a build made: pgrx heads each function it creates with the
place of its Rust source (`-- src/snowflake.rs:43`). The first paragraph of that function's doc
comment (its `///` lines; for a function a macro creates, the `//` lines above the macro),
with Markdown's backticks dropped, is the function's COMMENT, so that `\\df+`, docs/reference.md
and the source say the same. The statements stand, sorted, between the two marker lines
of sql/install/finalize.sql. Functions written in SQL (sql/install/)
keep their COMMENT beside them in finalize.sql, outside the markers.

--write rewrites the part between the markers; --check changes nothing and exits 1, naming each
function, when the part differs from what the doc comments say, or a function has no doc comment;
0 when it is current; 2 on bad arguments.
"""
import argparse
import os
import re
import sys

import marked

BEGIN = "-- <functions: made by tools/sql_comments.py from each Rust function's doc comment; do not edit>"
END = "-- </functions>"

PLACE = re.compile(r"^-- (src/\S+\.rs):(\d+)$")
CREATE = re.compile(r'^CREATE\s+FUNCTION\s+((?:"?\w+"?\.)?"?\w+"?)\((.*)$')
ARG = re.compile(r'^\s*"\w+"\s+(.+?)(?:\s+DEFAULT\s+.*?)?\s*,?\s*(?:/\*.*\*/)?\s*$')
TYPES = {
    "int": "integer", "integer": "integer", "bigint": "bigint", "text": "text", "bool": "boolean",
    "boolean": "boolean", "timestamp with time zone": "timestamptz", "timestamptz": "timestamptz",
    "timestamp": "timestamp", "date": "date", "uuid": "uuid", "double precision": "double precision",
    "interval": "interval", "bytea": "bytea", "oid": "oid", "internal": "internal",
    "anyelement": "anyelement", "smallint": "smallint", "real": "real",
}


def sql_type(t):
    t = t.strip().strip('"')
    array = t.endswith("[]")
    base = t[:-2] if array else t
    return TYPES.get(base.lower(), base) + ("[]" if array else "")


def functions(install_sql):
    """(signature, source file, line) of each function pgrx created, in the script's order."""
    out = []
    lines = open(install_sql, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = PLACE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].startswith("--"):
            j += 1
        c = CREATE.match(lines[j]) if j < len(lines) else None
        if not c:
            i = j
            continue
        name = c.group(1).replace('"', "")
        rest = c.group(2)
        types = []
        if not rest.startswith(")"):
            # One argument a line, up to the line that closes the list.
            k = j + 1
            while not lines[k].startswith(")"):
                a = ARG.match(lines[k])
                if a:
                    types.append(sql_type(a.group(1)))
                k += 1
        out.append((f"{name}({', '.join(types)})", m.group(1), int(m.group(2))))
        i = j + 1
    return out


def doc_of(root, path, line):
    """The first paragraph of the doc comment of the item at `line` (1-based), as one line."""
    src = open(os.path.join(root, path), encoding="utf-8").read().split("\n")
    # A function a macro creates (`fast_entry!(`) has a plain comment above the macro, where a
    # doc comment would be refused.
    marker = "//" if re.match(r"\s*\w+!\(", src[line - 1]) else "///"
    k = line - 2
    while k >= 0 and src[k].strip().startswith("#["):
        k -= 1
    text = []
    while k >= 0 and src[k].strip().startswith(marker):
        text.insert(0, src[k].strip()[len(marker):].strip())
        k -= 1
    para = []
    for t in text:
        if not t:
            if para:
                break
            continue
        para.append(t)
    return " ".join(para).replace("`", "") or None


def statements(root, install_sql):
    out, missing = [], []
    for sig, path, line in functions(install_sql):
        doc = doc_of(root, path, line)
        if doc is None:
            missing.append(f"{sig} ({path}:{line})")
            continue
        out.append(f"COMMENT ON FUNCTION {sig} IS\n  '{doc.replace(chr(39), chr(39) * 2)}';")
    # By signature: the script's order of functions is pgrx's, not the source's.
    return sorted(out), missing


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("install_sql")
    p.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    try:
        args = p.parse_args(argv)
    except SystemExit:
        return 2
    final = os.path.join(args.root, "sql", "install", "finalize.sql")
    found = marked.between(final, BEGIN, END)
    if found is None:
        print(f"sql/install/finalize.sql lacks the marker lines ({BEGIN} ... {END})")
        return 1
    text, a, b = found
    made, missing = statements(args.root, args.install_sql)
    if missing:
        return marked.refuse(f"{len(missing)} function(s) have no doc comment to be their SQL comment:", missing)
    new = "\n".join(made).split("\n")
    done = marked.settle(final, text, a, b, new, args.write,
                         f"wrote the comments of {len(made)} functions into sql/install/finalize.sql",
                         f"every function's SQL comment is its doc comment ({len(made)} functions)")
    if done is not None:
        return done
    said = lambda block: dict(re.findall(r"COMMENT ON FUNCTION (.+?) IS\n  '(.*?)';(?=\n|$)", block, re.S))
    print("sql/install/finalize.sql's function comments are not their doc comments "
          "(python3 tools/sql_comments.py INSTALL_SQL --write rewrites them):")
    for line in marked.differences(said("\n".join(text[a + 1 : b])), said("\n".join(new)), "no comment yet", "no such function", "its doc comment says otherwise"):
        print(line)
    return 1

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
