#!/usr/bin/env python3
"""The table of source files in CONTRIBUTING.md, made from the files themselves.

Usage: python3 tools/layout_doc.py [--check] [ROOT]

Every Rust source of both crates (src/, crates/core/src/; unit tests left out) and every SQL
source of the install script (sql/install/) gets one row: its path, and the first sentence of
its opening comment (`//!` lines in Rust, `--` lines in SQL) up to its first full stop or colon,
which is the one place that says what the file holds. The rows stand between the two marker lines of CONTRIBUTING.md's "Layout of
the repository"; without --check they are written there. With --check nothing is written: exit
status 1, naming each path, when a file has no opening comment or the table differs from what
the files say (a file added, moved, renamed or redescribed without running this); 0 when it is
current; 2 on bad arguments.
"""
import os
import re
import sys

import marked

BEGIN = "<!-- files: made by tools/layout_doc.py from each file's opening comment; do not edit -->"
END = "<!-- end of files -->"
FOLDERS = ["crates/core/src", "src", "sql/install"]


def sources(root):
    out = []
    for folder in FOLDERS:
        for base, dirs, names in os.walk(os.path.join(root, folder)):
            dirs[:] = [d for d in dirs if d != "tests"]
            for n in names:
                if (n.endswith(".rs") and n != "tests.rs") or (folder == "sql/install" and n.endswith(".sql")):
                    out.append(os.path.relpath(os.path.join(base, n), root))
    return sorted(out)


def opening(path):
    """The file's opening comment as one line of text, or None."""
    marker = "--" if path.endswith(".sql") else "//!"
    text = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if s.startswith(marker):
                body = s[len(marker):].strip()
                if not body and text:
                    break  # the end of the first paragraph
                text.append(body)
            elif s.startswith("#![") and not text:
                continue  # crate attributes before the comment
            else:
                break
    joined = " ".join(t for t in text if t)
    return joined or None


def first_sentence(text):
    """The text up to its first full stop or colon that ends a clause (followed by a space or the
    end), outside parentheses and code."""
    depth, code = 0, False
    for i, c in enumerate(text):
        if c == "`":
            code = not code
        elif code:
            continue
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif c in ".:" and depth == 0 and (i + 1 == len(text) or text[i + 1] == " "):
            if c == "." and re.search(r"\b(e\.g|i\.e|vs)$", text[:i]):
                continue
            return text[:i].replace("|", "\\|")
    return text.replace("|", "\\|")


def table(root):
    rows, missing = [], []
    for path in sources(root):
        what = opening(os.path.join(root, path))
        if what is None:
            missing.append(path)
            continue
        rows.append(f"| `{path}` | {first_sentence(what)} |")
    return ["| file | holds |", "|---|---|"] + rows, missing


def main(argv):
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    if len(rest) > 1 or any(a.startswith("-") for a in rest):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = rest[0] if rest else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    doc_path = os.path.join(root, "CONTRIBUTING.md")
    found = marked.between(doc_path, BEGIN, END)
    if found is None:
        print(f"CONTRIBUTING.md lacks the marker lines of the file table ({BEGIN} ... {END})")
        return 1
    doc, a, b = found
    rows, missing = table(root)
    if missing:
        return marked.refuse(f"{len(missing)} file(s) have no opening comment (//! in Rust, -- in SQL) to describe them:", missing)
    n = len(rows) - 2
    done = marked.settle(doc_path, doc, a, b, rows, not check, f"wrote CONTRIBUTING.md's file table ({n} files)",
                         f"CONTRIBUTING.md's file table is current ({n} files)")
    if done is not None:
        return done
    by_path = lambda rs: {r.split("|")[1].strip().strip("`"): r for r in rs[2:] if r.startswith("| `")}
    print("CONTRIBUTING.md's file table is not what the files say (python3 tools/layout_doc.py rewrites it):")
    for line in marked.differences(by_path(doc[a + 1 : b]), by_path(rows), "not in the table", "no such file", "described otherwise in the file"):
        print(line)
    return 1

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
