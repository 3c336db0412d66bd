#!/usr/bin/env python3
"""pgrx's install script in one order: the same script from every build of a commit.

    canonical_sql.py INSTALL_SQL [--src DIR] [--out FILE]    (tools/image.sh)
    canonical_sql.py INSTALL_SQL --check                      (tests/canonical_sql.sh)

pgrx 0.19 writes the install script as blocks ("connected objects"), in an order of its dependency
graph that changes from one generation to the next (its nodes are numbered in the order of a
HashMap), so two builds of one commit give two scripts, and an image that carries one is not
reproducible. This writes the same blocks in one order: a topological order of the same
dependencies, ties broken by where each block's macro stands in the sources (file, then line).

The dependencies are those of pgrx's graph, read back from the script and the sources:
  - pgrx's header comment (the graph's root) first, then the `bootstrap` block; `finalize` last;
  - the `requires = [...]` of a block, which pgrx lists under "-- requires:": a name is the
    extension_sql!/extension_sql_file! of that name (its file:line is the block's header), a
    function's path (schema::function, or the bare function) every CREATE FUNCTION of that name;
  - a function's SUPPORT function;
  - a function's schema, which the bootstrap block creates (first anyway).
A function's argument and result types are PostgreSQL's own or made by the SQL of an
extension_sql block the function requires (a type pgrx makes from Rust, #[derive(PostgresType)],
makes this refuse rather than miss its edges). It refuses (exit 1, saying why) a
requirement it cannot find, two blocks with one header, and a script whose own order breaks one of
these dependencies: pgrx's order keeps every edge of its graph, so that would mean an edge read
wrong.
"""
import argparse
import os
import re
import sys

BEGIN = "/* <begin connected objects> */\n"
END = "/* </end connected objects> */\n"
HEADER = re.compile(r"^-- ((?:src|crates)/[^\s:]+\.rs):(\d+)$", re.M)
MACRO = re.compile(r"\bextension_sql(?:_file)?!\s*\(")
FUNCTION = re.compile(
    r'CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(?:"?(\w+)"?\.)?"?(\w+)"?\s*\(', re.I)
SUPPORT = re.compile(r'\bSUPPORT\s+(?:"?(\w+)"?\.)?"?(\w+)"?')
TYPE = re.compile(r"\bCREATE\s+TYPE\b", re.I)


def fail(message):
    print(f"canonical_sql: {message}", file=sys.stderr)
    sys.exit(1)


def blocks(text):
    """The script's blocks, each as written (from its BEGIN to its END and the blank line)."""
    out, i = [], 0
    while True:
        start = text.find(BEGIN, i)
        if start < 0:
            break
        if text[i:start].strip():
            fail(f"text between blocks at offset {i}")
        end = text.find(END, start)
        if end < 0:
            fail(f"a block at offset {start} has no end")
        end += len(END)
        while end < len(text) and text[end] == "\n":
            end += 1
        out.append(text[start:end])
        i = end
    if text[i:].strip():
        fail("text after the last block")
    return out


def literal_end(text, k):
    """The end of the Rust string literal at text[k] ("..." or r#"..."#), or k if there is none."""
    m = re.match(r'r(#*)"', text[k:])
    if m:
        close = text.find('"' + m.group(1), k + m.end())
        return len(text) if close < 0 else close + 1 + len(m.group(1))
    if text.startswith('"', k):
        m = re.match(r'"(?:\\.|[^"\\])*"', text[k:], re.S)
        return k + (m.end() if m else len(text) - k)
    return k


def macros(src):
    """(file, line) -> (name, flags) of every extension_sql!/extension_sql_file! under src/: its
    options (name = "...", bootstrap, finalize), after its first argument (the SQL, or its file)."""
    found = {}
    for root, _, files in os.walk(os.path.join(src, "src")):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            text = open(path, encoding="utf-8").read()
            for m in MACRO.finditer(text):
                k = m.end()
                while k < len(text) and text[k].isspace():
                    k += 1
                k = literal_end(text, k)
                # The options, to the macro's closing parenthesis (strings skipped whole).
                depth, j, options = 1, k, []
                while j < len(text) and depth:
                    end = literal_end(text, j)
                    if end > j:
                        options.append(text[j:end])
                        j = end
                        continue
                    depth += {"(": 1, ")": -1}.get(text[j], 0)
                    if depth:
                        options.append(text[j])
                    j += 1
                options = "".join(options)
                names = re.findall(r'\bname\s*=\s*"([^"]+)"', options)
                bare = re.sub(r'"(?:\\.|[^"\\])*"', '""', options)
                flags = set(re.findall(r"\b(bootstrap|finalize)\b", bare))
                line = text.count("\n", 0, m.start()) + 1
                found[(os.path.relpath(path, src), line)] = (names[0] if names else None, flags)
    return found


def canonical(text, src, ties_last=False):
    parts = blocks(text)
    if not parts:
        fail("no blocks")
    info = []
    for n, b in enumerate(parts):
        body = b[len(BEGIN):]
        h = HEADER.search(body)
        head = (h.group(1), int(h.group(2))) if h and body.startswith(h.group(0)) else None
        requires = []
        m = re.search(r"^-- requires:\n((?:--   .+\n)+)", body, re.M)
        if m:
            requires = [r[5:].strip() for r in m.group(1).splitlines()]
        code = re.sub(r"--[^\n]*", "", body)
        creates = {(s or "", f) for s, f in FUNCTION.findall(code)}
        supports = {(s or "", f) for s, f in SUPPORT.findall(code)}
        info.append({"n": n, "head": head, "requires": requires, "creates": creates,
                     "supports": supports, "type": bool(TYPE.search(code))})
    heads = [i["head"] for i in info if i["head"]]
    if len(heads) != len(set(heads)):
        fail("two blocks have one header")
    if info[0]["head"] is not None:
        fail("the first block is not pgrx's header comment")
    known = macros(src)
    for i in info:
        if i["type"] and i["head"] not in known:
            fail(f"block {i['head']}, pgrx's own, creates a type: its functions' edges to it are not read here")
    by_head = {i["head"]: i["n"] for i in info if i["head"]}
    by_name, first, last = {}, [], []
    for head, (name, flags) in known.items():
        if head not in by_head:
            continue
        if name:
            by_name[name] = by_head[head]
        if "bootstrap" in flags:
            first.append(by_head[head])
        if "finalize" in flags:
            last.append(by_head[head])
    by_function = {}
    for i in info:
        for s, f in i["creates"]:
            by_function.setdefault(f, set()).add((s, i["n"]))
    edges = {i["n"]: set() for i in info}  # n -> the blocks that must come before n

    def functions(schema, name, where):
        hits = {n for s, n in by_function.get(name, ()) if s == schema or not schema}
        if not hits:
            fail(f"block {where}: no block creates the function {schema}.{name}")
        return hits

    for i in info:
        for r in i["requires"]:
            if "::" in r:
                schema, _, name = r.rpartition("::")
                edges[i["n"]] |= functions(schema.split("::")[-1], name, i["head"])
            elif r in by_name or r in by_function:
                # A bare word: pgrx's comment shows a name ("adopt") and a function's path
                # (public_keys_changed) alike; an edge to each block it may mean.
                if r in by_name:
                    edges[i["n"]].add(by_name[r])
                if r in by_function:
                    edges[i["n"]] |= functions("", r, i["head"])
            else:
                fail(f"block {i['head']}: requires {r!r}, which names no block")
        # pgrx's SUPPORT clause, in a block of its own (an extension_sql block's text is the
        # extension's: its edges are its requires).
        for s, f in (i["supports"] if i["head"] not in known else ()):
            edges[i["n"]] |= functions(s, f, i["head"]) - {i["n"]}
    for n in range(1, len(info)):
        edges[n].add(0)
        for b in first:
            if n != b and n not in first:
                edges[n].add(b)
        for f in last:
            if n != f and n not in last:
                edges[f].add(n)
    for n, before in edges.items():
        for b in before:
            if b > n:
                fail(f"the given order puts {info[n]['head']} before {info[b]['head']}, which it needs")

    def key(n):
        h = info[n]["head"]
        return (0, "", 0) if h is None else (1, h[0], h[1])

    done, order, left = set(), [], set(range(len(info)))
    while left:
        ready = sorted((n for n in left if edges[n] <= done), key=key)
        if not ready:
            fail("the dependencies have a cycle")
        pick = ready[-1] if ties_last else ready[0]
        order.append(pick)
        done.add(pick)
        left.remove(pick)
    return "".join(parts[n] for n in order)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("install_sql")
    ap.add_argument("--src", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--out")
    ap.add_argument("--check", action="store_true",
                    help="check that another order of the script's blocks gives the same one")
    a = ap.parse_args()
    text = open(a.install_sql, encoding="utf-8").read()
    src = os.path.abspath(a.src)
    result = canonical(text, src)
    if sorted(blocks(result)) != sorted(blocks(text)):
        fail("the blocks changed")
    if a.check:
        # Another order the dependencies allow (every tie broken the other way), as another build
        # of pgrx could write it: it must come back to the same script, and so must the result.
        other = canonical(text, src, ties_last=True)
        if other == result:
            fail("the dependencies leave no ties: no other order to check with")
        if canonical(other, src) != result:
            fail("another order of the same blocks gives another script")
        if canonical(result, src) != result:
            fail("the script in its one order is put in another")
        print(f"pgrx's install script ({len(blocks(text))} blocks) in one order, the same from "
              "another order of its blocks the dependencies allow")
        return
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(result)
    else:
        sys.stdout.write(result)


if __name__ == "__main__":
    main()
