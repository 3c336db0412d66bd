#!/usr/bin/env python3
"""The application's latency before and during an online key conversion (bench.sh, part online).

    online_latency.py WORK

Reads pgbench's per-transaction logs WORK/oc_before.* and WORK/oc_during*.* (the third field is
the transaction's latency in microseconds) and prints a table of transactions, p50, p99 and max,
and the ratios during/before (the goal: p99 during <= 2x p99 before). pgbench's own output files
(oc_*.out) are not logs: they are skipped, and any error they hold is printed.
"""
import glob
import sys


def latencies(pattern):
    values = []
    for path in glob.glob(pattern):
        if path.endswith(".out"):
            continue
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 3 and fields[2].isdigit():
                    values.append(int(fields[2]) / 1000.0)
    return sorted(values)


def pct(values, q):
    return values[min(len(values) - 1, int(q * len(values)))]


def main():
    work = sys.argv[1]
    before = latencies(f"{work}/oc_before.*")
    during = latencies(f"{work}/oc_during*")
    if not before or not during:
        print("no latencies were logged (pgbench -l): see the oc_*.out files")
        return 1
    print("| application | transactions | p50 (ms) | p99 (ms) | max (ms) |")
    print("|---|---|---|---|---|")
    for name, values in (("before", before), ("during the conversion", during)):
        print(f"| {name} | {len(values)} | {pct(values, .5):.2f} | {pct(values, .99):.2f} | {values[-1]:.1f} |")
    print(f"\np99 during / before: {pct(during, .99) / pct(before, .99):.2f}x (goal <= 2x); "
          f"p50: {pct(during, .5) / pct(before, .5):.2f}x")
    errors = []
    for path in sorted(glob.glob(f"{work}/oc_*.out")):
        with open(path) as f:
            errors += [line.strip() for line in f if "error" in line.lower()]
    print(f"application errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
