#!/usr/bin/env python3
"""Run the SQL examples of the documentation against a real server, and compare their output.

    tools/doctest.py [--port P] [--host H] FILE.md ...

Every ```sql block of a page is run, in order, in one psql session of a database made for that
page (dropped first if it is there), with ON_ERROR_STOP: so a page's examples work when pasted
into psql in order, and a block that fails fails the page. The README starts from a database
without the extension (its quick start creates it); every page under docs/ starts with
`CREATE EXTENSION pg_idgen` done, as the README's quick start leaves it.

A ```text block that follows a ```sql block (nothing but blank lines between) is that block's
output, as psql prints it (aligned, `-q`, TimeZone UTC), and is compared: runs of spaces and of
`-` count as one, trailing spaces do not count, and `...` matches any text within a line (for
IDs and times that change with every run).

Directives, as HTML comments on the line before a block (GitHub does not show them):
  <!-- doctest: skip REASON -->   the block is not run; "skipped:" and the reason are printed,
                                  which the test command counts as a skipped part
  <!-- doctest: needs NAME (REASON) -->
                                  run only with `--with NAME` (a test that installs NAME runs
                                  the page so); otherwise not run, and the reason printed
  <!-- doctest: setup
  SQL ...
  -->                             hidden SQL run before the next block (tables an example assumes)
`--one-database DB` runs the pages, in the order given, one after another in the one database DB
(made anew; the README first creates the extension, later pages find it): a reader who follows the
README and then the pages in one database meets no name another page took.
`--blocks` prints the SQL blocks of the pages instead of running them, each after a line
`-- doctest block N (FILE:LINE)`, for a test that runs them on servers of its own (citus.sh).
`--fill` writes psql's output into every output block that holds only `...` (for writing a page;
read what it wrote before you commit it). Exit status 0 when every page passed; the last line counts blocks run, outputs compared, skipped.
"""
import argparse
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^```(\S*)\s*$")
WITH = set()  # what --with says is installed


def parse(path):
    """The page's blocks: dicts with kind ('sql'), line, text, expected (or None), skip, setup."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, i, pending_skip, pending_setup = [], 0, None, None
    while i < len(lines):
        line = lines[i]
        m_skip = re.match(r"^<!-- doctest: skip (.+?) -->\s*$", line)
        if m_skip:
            pending_skip = m_skip.group(1)
            i += 1
            continue
        m_needs = re.match(r"^<!-- doctest: needs (\S+) (.+?) -->\s*$", line)
        if m_needs:
            if m_needs.group(1) not in WITH:
                pending_skip = f"needs {m_needs.group(1)} {m_needs.group(2)}"
            i += 1
            continue
        if line.strip() == "<!-- doctest: setup":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "-->":
                j += 1
            if j == len(lines):
                raise SystemExit(f"{path}:{i + 1}: a doctest setup comment that never ends")
            pending_setup = "\n".join(lines[i + 1:j])
            i = j + 1
            continue
        m = FENCE.match(line.lstrip())  # also a block indented in a list item
        if not m:
            i += 1
            continue
        lang, start, pad = m.group(1), i, len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and not lines[j].lstrip().startswith("```"):
            j += 1
        if j == len(lines):
            raise SystemExit(f"{path}:{start + 1}: a code block that never ends")
        body = "\n".join(l[pad:] if l[:pad].isspace() else l for l in lines[i + 1:j])
        i = j + 1
        if lang == "sql":
            blocks.append({"line": start + 1, "text": body, "expected": None,
                           "skip": pending_skip, "setup": pending_setup})
        elif lang == "text" and blocks and blocks[-1].get("open"):
            blocks[-1]["expected"] = body
        elif pending_skip or pending_setup:
            raise SystemExit(f"{path}:{start + 1}: a doctest directive before a block that is not SQL")
        pending_skip = pending_setup = None
        if blocks:
            blocks[-1]["open"] = False
        if lang == "sql":
            blocks[-1]["open"] = True
            # Only blank lines may stand between a block and its output.
            k = i
            while k < len(lines) and not lines[k].strip():
                k += 1
            if not (k < len(lines) and lines[k].lstrip().startswith("```text")):
                blocks[-1]["open"] = False
    return blocks


def normalize(text):
    out = []
    for line in text.strip("\n").split("\n"):
        line = re.sub(r"-{2,}", "-", line.rstrip())
        line = re.sub(r"\s+", " ", line).strip()
        out.append(line)
    return out


def matches(expected, actual):
    exp, act = normalize(expected), normalize(actual)
    if len(exp) != len(act):
        return False
    for e, a in zip(exp, act):
        pattern = ".*".join(re.escape(part) for part in e.split("..."))
        if not re.fullmatch(pattern, a):
            return False
    return True


def psql(args, db, sql, env):
    return subprocess.run(["psql", "-X", "-q", "-h", args.host, "-p", str(args.port), "-U", args.user,
                           "-d", db, "-v", "ON_ERROR_STOP=1"], input=sql, text=True,
                          capture_output=True, env=env)


def run_page(args, path, env):
    blocks = parse(path)
    name = re.sub(r"[^a-z0-9]+", "_", os.path.splitext(path)[0].lower()).strip("_")
    db = args.one_database or f"doctest_{name}"[:63]
    if not args.one_database:
        admin = psql(args, "postgres", f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE);\nCREATE DATABASE "{db}";\n', env)
        if admin.returncode != 0:
            print(f"  FAIL: {path}: could not make database {db}: {admin.stderr.strip()}")
            return False, 0, 0, 0
    script = []
    if args.one_database and os.path.basename(path) != "README.md":
        # A reader who followed the README (or an earlier page) in this database has it.
        script.append("SET client_min_messages = warning;\nCREATE EXTENSION IF NOT EXISTS pg_idgen;\nRESET client_min_messages;")
    elif not os.path.basename(path) == "README.md":
        script.append("CREATE EXTENSION pg_idgen;")
    run = [b for b in blocks if not b["skip"]]
    for n, b in enumerate(run):
        if b["setup"]:
            script.append(b["setup"])
        script.append(f"\\echo '@@doctest {n}@@'")
        script.append(b["text"])
    script.append("\\echo '@@doctest end@@'")
    result = psql(args, db, "\n".join(script) + "\n", env)
    # Split the output at the markers: what follows marker n is block n's output.
    outputs, current = {}, None
    for line in result.stdout.split("\n"):
        m = re.fullmatch(r"@@doctest (\d+|end)@@", line)
        if m:
            current = m.group(1)
            outputs[current] = []
        elif current is not None:
            outputs[current].append(line)
    ok, compared, fills = True, 0, []
    if result.returncode != 0 or "end" not in outputs:
        failed_at = max((int(k) for k in outputs if k != "end"), default=0)
        b = run[failed_at] if run else None
        where = f"{path}:{b['line']}" if b else path
        print(f"  FAIL: {where}: the block failed in psql:\n{indent(result.stderr)}")
        ok = False
    # A reader sees what psql prints to stderr too: a WARNING the page does not show is a fault
    # of the page (or of the product).
    warnings = [line for line in result.stderr.split("\n") if line.startswith("WARNING:")]
    if warnings:
        print(f"  FAIL: {path}: its blocks print warnings the page does not show:\n{indent(chr(10).join(warnings))}")
        ok = False
    for n, b in enumerate(run):
        if b["expected"] is None or str(n) not in outputs:
            continue
        compared += 1
        actual = "\n".join(outputs[str(n)])
        if b["expected"].strip() == "...":
            fills.append((b["expected"], actual))
        if not matches(b["expected"], actual):
            print(f"  FAIL: {path}:{b['line']}: output differs from the page\n"
                  f"    the page shows:\n{indent(b['expected'])}\n    psql printed:\n{indent(actual)}")
            ok = False
    if args.fill and fills:
        text = open(path, encoding="utf-8").read()
        for expected, actual in fills:
            cleaned = "\n".join(line.rstrip() for line in actual.strip("\n").split("\n"))
            text = text.replace("```text\n...\n```", "```text\n" + cleaned + "\n```", 1)
        open(path, "w", encoding="utf-8").write(text)
        print(f"  filled: {path}: {len(fills)} output blocks")
    skipped = [b for b in blocks if b["skip"]]
    # (With --one-database the same pages ran one by one first, which said what they skip.)
    for b in [] if args.one_database else skipped:
        # A block another test runs (`needs`) is only not run here; one no test runs is skipped,
        # in the words the test command counts ("  skipped: "), so it is never silent.
        word = "not run here" if b["skip"].startswith("needs ") else "skipped"
        print(f"  {word}: {path}:{b['line']}: {b['skip']}")
    if ok and not args.keep and not args.one_database:
        psql(args, "postgres", f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE);\n', env)
    if ok:
        print(f"  ok: {path}: {len(run)} SQL blocks run, {compared} outputs compared")
    return ok, len(run), compared, len(skipped)


def indent(text):
    return "\n".join("      " + line for line in text.strip("\n").split("\n"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default=os.environ.get("PGPORT", "5432"))
    parser.add_argument("--user", default="postgres")
    parser.add_argument("--fill", action="store_true")
    parser.add_argument("--blocks", action="store_true", help="print the SQL blocks, run nothing")
    parser.add_argument("--with", dest="with_", action="append", default=[],
                        help="run the blocks that need this (e.g. pg_partman)")
    parser.add_argument("--keep", action="store_true", help="keep each page's database (doctest_<page>)")
    parser.add_argument("--one-database", metavar="DB",
                        help="run every page, in the order given, in this one database (made anew), "
                             "as a reader who follows them one after another")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    WITH.update(args.with_)
    if args.blocks:
        n = 0
        for path in args.files:
            for b in parse(path):
                print(f"-- doctest block {n} ({path}:{b['line']})\n{b['text']}")
                n += 1
        return 0
    env = dict(os.environ, PGTZ="UTC", PGDATESTYLE="ISO, MDY", LC_MESSAGES="C")
    totals, all_ok = [0, 0, 0], True
    if args.one_database:
        db = args.one_database
        admin = psql(args, "postgres", f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE);\nCREATE DATABASE "{db}";\n', env)
        if admin.returncode != 0:
            print(f"  FAIL: could not make database {db}: {admin.stderr.strip()}")
            return 1
    for path in args.files:
        ok, n, c, s = run_page(args, path, env)
        all_ok &= ok
        totals = [totals[0] + n, totals[1] + c, totals[2] + s]
    print(f"  {'ok' if all_ok else 'FAIL'}: {len(args.files)} pages, {totals[0]} SQL blocks run, "
          f"{totals[1]} outputs compared, {totals[2]} not run")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
