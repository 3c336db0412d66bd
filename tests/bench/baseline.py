#!/usr/bin/env python3
"""This tree's pg_idgen against the build of another revision, per row, rounds interleaved.

Run by bench.sh (part "baseline"), which builds the other revision and starts a cluster of each.
Each round measures every row on both clusters (which one goes first alternates by round), with
bench_per_row() (best of 3 passes over ROWS rows). Each cell is the median of the rounds with the
spread (lowest to highest); the ratio is taken round by round (this tree over the baseline, lower
is faster) and marked "~" when its rounds lie on both sides of 1.00x.

Arguments: PORT_THIS PORT_BASELINE LABEL_THIS LABEL_BASELINE. Environment: PGBIN, ROUNDS (5),
ROWS (1,000,000).
"""

import os
import statistics
import subprocess
import sys

PGBIN = os.environ["PGBIN"]
ROUNDS = int(os.environ.get("ROUNDS", "5"))
ROWS = int(os.environ.get("ROWS", "1000000"))
ROWS_OF = [
    ("clock_timestamp()", "clock_timestamp()"),
    ("snowflake_next()", "snowflake_next()"),
    ("uuidv7_next()", "uuidv7_next()"),
    ("segment_next()", "segment_next('bench')"),
    ("msgid_next()", "msgid_next(1, 'bench')"),
    ("id_timestamp()", "id_timestamp(1212092628029698048, 'twitter')"),
]


def q(port, sql):
    out = subprocess.run(
        [f"{PGBIN}/psql", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-d", "postgres",
         "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
        capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"baseline.py: port {port}: {sql}: {out.stderr.strip()}")
    return out.stdout.strip()


def main():
    ports = sys.argv[1:3]
    labels = sys.argv[3:5]
    ns = {(name, p): [] for name, _ in ROWS_OF for p in ports}
    ratios = {name: [] for name, _ in ROWS_OF}
    for r in range(ROUNDS):
        order = ports if r % 2 == 0 else ports[::-1]
        for name, expr in ROWS_OF:
            got = {}
            for p in order:
                got[p] = float(q(p, f"SELECT bench_per_row($${expr}$$, {ROWS})"))
                ns[(name, p)].append(got[p])
            ratios[name].append(got[ports[0]] / got[ports[1]])
    print(f"\n## Per row: {labels[0]} against {labels[1]} "
          f"(ns per row, median of {ROUNDS} interleaved rounds [lowest-highest])\n")
    print(f"| per row | {labels[0]} | {labels[1]} | ratio |")
    print("|---|---|---|---|")
    for name, _ in ROWS_OF:
        cells = []
        for p in ports:
            v = ns[(name, p)]
            cells.append(f"{statistics.median(v):.1f} [{min(v):.1f}-{max(v):.1f}]")
        rs = ratios[name]
        mark = "~" if min(rs) < 1.0 < max(rs) else ""
        cells.append(f"{mark}{statistics.median(rs):.2f}x [{min(rs):.2f}-{max(rs):.2f}]")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
