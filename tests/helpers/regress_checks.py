#!/usr/bin/env python3
"""Counts the checks of a pg_regress run (tests/pg_regress), for tests/all.sh's summary.

A golden file holds one check per line "-- check: NAME" (the statements up to the next such line),
or, without such lines, one check named after the file. pg_regress says which files differ; the
hunks of regression.diffs say where, in the expected output (which echoes the "-- check:" lines),
so a difference fails the checks whose part of the file it touches, and a difference before the
first check (the setup) fails them all. A failed file whose differences cannot be placed fails
all its checks; so does a failed run that left no regression.out (pg_regress did not get as far
as the files).

    regress_checks.py DIR STATUS   prints "PASSED FAILED", then the name of each failed check
"""
import os
import re
import sys

CHECK = re.compile(r"^-- check: (.*)$")


def checks_of(lines, fallback):
    """[(line number, name)] of the check markers (1-based); one whole-file check without any."""
    found = [(i + 1, m.group(1).strip()) for i, l in enumerate(lines) if (m := CHECK.match(l))]
    return found or [(1, fallback)]


def failed_files(out_path):
    """The files pg_regress reports failed, in either of its output formats (15; 16 and later)."""
    names = set()
    with open(out_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^test (\S+)\s+\.\.\. FAILED", line) or re.match(
                r"^not ok \d+\s+[-+]\s+(\S+)", line
            )
            if m:
                names.add(m.group(1))
    return names


def changes_by_expected(diffs_path):
    """{expected file's path: [places]}: where a unified diff changes the expected output, as line
    numbers; a line the result adds sits at .5 after the expected line it follows (so it belongs to
    the check of that line). Context lines change nothing, so they blame no neighbour."""
    out, current, line_no, header = {}, None, 0, 0
    if not os.path.exists(diffs_path):
        return out
    with open(diffs_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            # A file's two header lines follow its "diff" line; inside a hunk, "--- " is a removed
            # SQL comment.
            if line.startswith("diff "):
                header = 2
                continue
            if header:
                header -= 1
                if line.startswith("--- "):
                    current = line[4:].split("\t")[0].strip()
                    out.setdefault(current, [])
                continue
            elif line.startswith("@@") and current:
                m = re.match(r"^@@ -(\d+)(?:,(\d+))? ", line)
                line_no = int(m.group(1)) if m else 0
                # "-0,0" (an empty expected file): additions come before line 1
                if m and m.group(2) == "0":
                    line_no += 1
            elif current and line.startswith("-"):
                out[current].append(line_no)
                line_no += 1
            elif current and line.startswith("+"):
                out[current].append(line_no - 0.5)
            elif current and line.startswith(" "):
                line_no += 1
    return out


def main():
    root, status = sys.argv[1], int(sys.argv[2])
    names = sorted(f[:-4] for f in os.listdir(os.path.join(root, "sql")) if f.endswith(".sql"))
    out_path = os.path.join(root, "regression.out")
    # pg_regress removes regression.out when every file passed; a failed run without it did not
    # get as far as running them.
    if os.path.exists(out_path):
        bad_files = failed_files(out_path)
    else:
        bad_files = set() if status == 0 else set(names)
    changes = changes_by_expected(os.path.join(root, "regression.diffs"))
    passed, failed = 0, []
    for name in names:
        with open(os.path.join(root, "sql", name + ".sql"), encoding="utf-8") as f:
            sql_checks = checks_of(f.read().splitlines(), name)
        if name not in bad_files:
            passed += len(sql_checks)
            continue
        where = [(p, c) for p, c in changes.items() if re.match(re.escape(name) + r"(_\d+)?\.out$", os.path.basename(p))]
        try:
            expected_path, places = where[0]
            with open(expected_path, encoding="utf-8") as f:
                marks = checks_of(f.read().splitlines(), name)
            assert [n for _, n in marks] == [n for _, n in sql_checks] and places
        except (IndexError, OSError, AssertionError):
            failed += [f"{name}: {n}" for _, n in sql_checks]  # cannot tell which: all of them
            continue
        blamed = set()
        for place in places:
            owners = [n for start, n in marks if start <= place]
            # before the first check: the setup, on which every check stands
            blamed.update(owners[-1:] if owners else [n for _, n in marks])
        for _, check in marks:
            if check in blamed:
                failed.append(f"{name}: {check}")
            else:
                passed += 1
    if status != 0 and not failed:
        failed.append("pg_regress (exit %d, no file named as failed)" % status)
    print(passed, len(failed))
    for f in failed:
        print(f)


if __name__ == "__main__":
    main()
