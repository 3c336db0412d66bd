#!/usr/bin/env python3
"""The import graph between the Rust files of a crate, and its circles.

Usage: python3 tools/module_graph.py [--edges] [--floors] SRC_DIR...

For each crate source folder (src, crates/core/src), every path that starts with `crate::`,
`super::` or `self::` in a file's code (comments and string literals are left out; `use` groups in
braces are expanded) is resolved to the file that defines the module it names, the longest prefix
of the path that is a module of the crate. A file that names another this way imports it; the
crate root (lib.rs), which declares every module, is left out of the graph.

Prints, per folder, the number of files and imports and every circle: a group of files that reach
each other through imports (a strongly connected component of more than one file). `--edges` also
prints every import, one `from -> to` a line. `--floors` also checks the floor plan of the
extension's folder (FLOORS below): every import that points up a floor is printed, and every
import from one SQL surface to another (a file or folder at the top of the folder: `segment/`,
`backfill/`, `snowflake.rs`, ...), which share what they need through a floor below, and every
import from outside a folder with doors (DOORS below: node/) of one of its files that is not a
door. Exit status 1 when any folder has a circle or, with `--floors`, an import up a floor,
between surfaces or through a side door; 2 on bad arguments; 0 otherwise.

Imports are meant to point down the floors (CONTRIBUTING.md, "Layout of the repository"): a circle always
means some arrow points up.
"""
import os
import re
import sys

# The floors of the extension's folder, by path (the first match wins; the rest is floor 3, the
# SQL surfaces), numbered as in CONTRIBUTING.md (the core crate is floor 0). gucs.rs, the typed
# getters of every setting, imports nothing and is read from every floor, like pg/. node/ and the
# allocator (commit before handing out, for segments and backfills) share floor 2 and import
# neither each other. status.rs, the status views, reports on every subsystem, so it stands above
# the surfaces it reads.
FLOORS = [("lib.rs", 5), ("pg/", 1), ("gucs.rs", 1), ("node/", 2), ("allocator/", 2), ("status.rs", 4)]
FLOOR_NAMES = {1: "pg/ plumbing", 2: "node/ and allocator/", 3: "SQL surfaces", 4: "status views", 5: "lib.rs"}
SURFACES = 3
# The folders the rest of the extension may enter only through a few of their files, the doors
# (src/node/mod.rs says what each is for); every other file of the folder is its own business.
DOORS = {
    "node/": {"mod.rs", "take.rs", "stream.rs", "backfills.rs", "lease.rs", "report.rs", "layouts.rs"},
}


def floor_of(relpath):
    for prefix, floor in FLOORS:
        if relpath == prefix or (prefix.endswith("/") and relpath.startswith(prefix)):
            return floor
    return SURFACES


def surface_of(relpath):
    """A SQL surface is a file or a folder at the top of the extension's folder."""
    return relpath.split("/", 1)[0].removesuffix(".rs")


def sideways(graph, files, src):
    """Imports from a file of one SQL surface to a file of another, as `from -> to` lines."""
    out = []
    for a in sorted(graph):
        na = name(a, files, src)
        if floor_of(na) != SURFACES:
            continue
        for b in sorted(graph[a]):
            nb = name(b, files, src)
            if floor_of(nb) == SURFACES and surface_of(na) != surface_of(nb):
                out.append(f"{na} ({surface_of(na)}) -> {nb} ({surface_of(nb)})")
    return out


def upward(graph, files, src):
    """Imports from a file to a file on a higher floor, as `from (floor) -> to (floor)` lines."""
    out = []
    for a in sorted(graph):
        fa = floor_of(name(a, files, src))
        for b in sorted(graph[a]):
            fb = floor_of(name(b, files, src))
            if fb > fa:
                out.append(f"{name(a, files, src)} ({FLOOR_NAMES[fa]}) -> {name(b, files, src)} ({FLOOR_NAMES[fb]})")
    return out

def side_doors(graph, files, src):
    """Imports from outside a folder with doors of a file of it that is not a door."""
    out = []
    for a in sorted(graph):
        na = name(a, files, src)
        for b in sorted(graph[a]):
            nb = name(b, files, src)
            for folder, doors in DOORS.items():
                if nb.startswith(folder) and not na.startswith(folder) and nb[len(folder):] not in doors:
                    out.append(f"{na} -> {nb} (not a door of {folder})")
    return out


PREFIX = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
CHAR = re.compile(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'")
GROUP = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{")


def strip_comments_and_strings(text):
    """Rust source with comments, string literals (also raw strings) and char literals blanked."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            i = n if end < 0 else end + 1 + len(hashes)
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'" and CHAR.match(text, i):
            i = CHAR.match(text, i).end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_groups(code):
    """`crate::a::{b, c::{d, e}}` -> the paths `crate::a::b`, `crate::a::c::d`, `crate::a::c::e`."""
    paths = []
    for m in GROUP.finditer(code):
        start = m.end()
        depth, j = 1, start
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        paths.extend(m.group(1) + "::" + p for p in flatten(code[start:j - 1]))
    return paths


def flatten(group):
    items, depth, cur = [], 0, ""
    for ch in group:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    items.append(cur)
    out = []
    for item in (s.strip() for s in items):
        if not item:
            continue
        if "::{" in item:
            head, rest = item.split("::{", 1)
            out.extend(head + "::" + p for p in flatten(rest.rsplit("}", 1)[0]))
        else:
            out.append(item.split(" as ")[0].strip())
    return out


def module_of(path, src):
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def resolve(here, kind, segments, modules):
    """The module a path names: its longest prefix that is a module of the crate."""
    if kind == "crate":
        base = ()
    else:
        # In a.rs or a/mod.rs alike, `self` is module a and `super` its parent.
        base = here if kind == "self" else here[:-1]
    full = base + tuple(s for s in segments if s)
    while full and full not in modules:
        full = full[:-1]
    return full


def circles(graph):
    """Tarjan's strongly connected components with more than one node."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def graph_of(src):
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(root, name)
                files[module_of(path, src)] = path
    graph = {m: set() for m in files}
    for mod, path in files.items():
        with open(path, encoding="utf-8") as f:
            code = strip_comments_and_strings(f.read())
        paths = [p.split("::", 1) for p in expand_groups(code)]
        paths += [(m.group(1), m.group(2)[2:]) for m in PREFIX.finditer(code)]
        for kind, rest in paths:
            target = resolve(mod, kind, rest.split("::"), files)
            if target not in (mod, ()) and target in files:
                graph[mod].add(target)
    return files, graph


def name(mod, files, src):
    return os.path.relpath(files[mod], src)


def main(argv):
    edges = "--edges" in argv
    floors = "--floors" in argv
    dirs = [a for a in argv if a not in ("--edges", "--floors")]
    if not dirs or any(a.startswith("-") for a in dirs):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    bad = 0
    for src in dirs:
        if not os.path.isdir(src):
            print(f"{src}: not a folder", file=sys.stderr)
            return 2
        files, graph = graph_of(src)
        found = circles(graph)
        n_edges = sum(len(v) for v in graph.values())
        if edges:
            for a in sorted(graph):
                for b in sorted(graph[a]):
                    print(f"  {name(a, files, src)} -> {name(b, files, src)}")
        if found:
            bad = 1
            print(f"{src}: {len(files)} files, {n_edges} imports, {len(found)} circle(s):")
            for comp in found:
                print("  " + " <-> ".join(name(m, files, src) for m in comp))
        else:
            print(f"{src}: {len(files)} files, {n_edges} imports, no circle")
        if floors and os.path.isdir(os.path.join(src, "pg")):
            n = len({surface_of(name(m, files, src)) for m in files if floor_of(name(m, files, src)) == SURFACES})
            counts = {}
            for m in files:
                f = floor_of(name(m, files, src))
                counts[f] = counts.get(f, 0) + 1
            per = ", ".join(f"{FLOOR_NAMES[f]} {counts[f]}" for f in sorted(counts))
            named = ", ".join(f"{f} {len(d)}" for f, d in DOORS.items())
            rules = [
                (sideways(graph, files, src), "between SQL surfaces", f"no import between SQL surfaces ({n} surfaces)"),
                (side_doors(graph, files, src), "through a side door",
                 f"every import of a folder with doors goes through one ({named} doors)"),
                (upward(graph, files, src), "up a floor", f"no import up a floor ({per} files)"),
            ]
            for found_lines, what, fine in rules:
                if found_lines:
                    bad = 1
                    print(f"{src}: {len(found_lines)} import(s) {what}:")
                    for line in found_lines:
                        print("  " + line)
                else:
                    print(f"{src}: {fine}")
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
