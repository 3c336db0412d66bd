#!/usr/bin/env python3
"""Draws the ratios of `make bench` (compare.py's BENCH_JSON) as one SVG chart.

    chart.py RATIOS.json OUT.svg

One panel per table, one bar per row: the median of the per-round ratios to the table's first
baseline (clock_timestamp() for costs per row and pgbench, bigserial for INSERTs, the layout's
capacity for the sustained rate), with a whisker from the lowest to the highest round and a line
at 1.00x. "lower is better" or "higher is better" is said in each panel's title. Needs matplotlib
(bench.sh installs it from PyPI into a venv of its own).
"""
import json
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: a smaller file, searchable
import matplotlib.pyplot as plt  # noqa: E402

# The tables worth a panel: the loop-subtracted per-row table repeats the first one.
SKIP = ("Per row, the loop subtracted",)


def main(src, dst):
    data = json.load(open(src))
    tables = [t for t in data["tables"] if not t["title"].startswith(SKIP)]
    heights = [0.6 + 0.32 * len(t["rows"]) for t in tables]
    fig, axes = plt.subplots(len(tables), 1, figsize=(10, sum(heights) + 0.8),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, t in zip(axes[:, 0], tables):
        rows = list(reversed(t["rows"]))
        y = range(len(rows))
        med = [r["median"] for r in rows]
        err = [[r["median"] - r["low"] for r in rows], [r["high"] - r["median"] for r in rows]]
        ours = ("snowflake_next", "segment_next", "uuidv7_next", "ulid_next")
        colors = ["#1f77b4" if "[pg_idgen]" in r["label"] or r["label"].startswith(ours) else "#999999"
                  for r in rows]
        ax.barh(list(y), med, xerr=err, color=colors, capsize=3, height=0.6)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_yticks(list(y))
        ax.set_yticklabels([r["label"] for r in rows], fontsize=8)
        for i, r in enumerate(rows):
            ax.text(r["high"], i, f"  {r['median']:.2f}x", va="center", fontsize=7)
        better = "lower is better" if t["lower_is_better"] else "higher is better"
        title = "\n".join(textwrap.wrap(f"{t['title']}: ratio to {t['base']} ({better})", 90))
        ax.set_title(title, fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=8)
        ax.set_xlim(0, max(r["high"] for r in rows) * 1.18)
    server = " ".join(data["server"].split()[:2])
    fig.suptitle(f"make bench: {server}, {data['cpus']} CPUs; median of {data['rounds']} interleaved rounds,\n"
                 "whiskers from the lowest to the highest round; blue: pg_idgen", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / (sum(heights) + 0.8)))
    fig.savefig(dst, format="svg")
    print(f"chart: {dst}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
