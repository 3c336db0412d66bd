#!/usr/bin/env python3
"""pg_idgen side by side with its peers and PostgreSQL's built-ins, in one cluster and one run.

Run by bench.sh (which installs everything and starts the cluster); it prints tables. Every figure
is measured ROUNDS times, the rounds interleaved (round 1 of every row, then round 2 ...), so that
a drift in the machine's speed hits all rows alike. Each cell gives the median and the spread
(lowest to highest of the rounds). Ratios are taken round by round, against the baseline measured
in the same round, and a ratio is marked "~" when its spread is wider than its distance from
1.00x, that is when its lowest and highest rounds lie on both sides of 1.00x: the rounds do not
agree on which is faster.

Environment: PORT, PGBIN, PEERS ("snowflake pg_uuidv7": the peers bench.sh installed), ROUNDS (3),
ROWS (1,000,000 per per-row figure), INSERT_ROWS (2,000,000), PGBENCH_SECONDS (3), CLIENTS
("2 8 32"), DUP_ROWS (200,000 per session), SECTIONS ("per_row pgbench insert capacity dups"),
BENCH_JSON (a file to write every table's ratios to its first baseline into, for
tests/bench/chart.py).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading

PORT = os.environ["PORT"]
PGBIN = os.environ["PGBIN"]
PEERS = os.environ.get("PEERS", "").split()
ROUNDS = int(os.environ.get("ROUNDS", "3"))
ROWS = int(os.environ.get("ROWS", "1000000"))
INSERT_ROWS = int(os.environ.get("INSERT_ROWS", "2000000"))
SECS = int(os.environ.get("PGBENCH_SECONDS", "3"))
CLIENTS = [int(c) for c in os.environ.get("CLIENTS", "2 8 32").split()]
DUP_ROWS = int(os.environ.get("DUP_ROWS", "200000"))
SECTIONS = os.environ.get("SECTIONS", "per_row pgbench insert capacity dups").split()
# Every table's ratios to its first baseline, per row: what tests/bench/chart.py draws.
CHARTS = []


def q(sql):
    out = subprocess.run(
        [f"{PGBIN}/psql", "-h", "127.0.0.1", "-p", PORT, "-U", "postgres", "-d", "postgres",
         "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
        check=True, capture_output=True, text=True)
    return out.stdout.strip()


class Gen:
    """One way to make a key: its per-row expression, its pgbench statement, its column, the type
    of its values."""

    def __init__(self, name, expr, column, who, sqltype="bigint"):
        self.name, self.expr, self.column, self.who, self.sqltype = name, expr, column, who, sqltype


def generators():
    v18 = int(q("SHOW server_version_num")) >= 180000
    gens = [
        Gen("clock_timestamp()", "clock_timestamp()", None, "floor"),
        Gen("nextval()", "nextval('s')", "id bigserial PRIMARY KEY", "built-in"),
        Gen("gen_random_uuid()", "gen_random_uuid()", "id uuid PRIMARY KEY DEFAULT gen_random_uuid()", "built-in",
            "uuid"),
        Gen("snowflake_next()", "snowflake_next()", "id bigint PRIMARY KEY DEFAULT snowflake_next()", "pg_idgen"),
        Gen("segment_next()", "segment_next('bench')", "id bigint PRIMARY KEY DEFAULT segment_next('bench_ins')", "pg_idgen"),
        Gen("uuidv7_next()", "uuidv7_next()", "id uuid PRIMARY KEY DEFAULT uuidv7_next()", "pg_idgen", "uuid"),
        Gen("ulid_next()", "ulid_next()", None, "pg_idgen", "text"),
    ]
    if "snowflake" in PEERS:
        gens.append(Gen("pgEdge snowflake.nextval()", "snowflake.nextval()",
                        "id bigint PRIMARY KEY DEFAULT snowflake.nextval()", "pgEdge 2.6"))
    if "pg_uuidv7" in PEERS:
        gens.append(Gen("uuid_generate_v7()", "uuid_generate_v7()",
                        "id uuid PRIMARY KEY DEFAULT uuid_generate_v7()", "pg_uuidv7 1.6", "uuid"))
    if v18:
        gens.append(Gen("uuidv7()", "uuidv7()", "id uuid PRIMARY KEY DEFAULT uuidv7()", "built-in 18", "uuid"))
    return gens


def setup():
    q("CREATE SEQUENCE IF NOT EXISTS s")
    q("SELECT idgen.segment_create(t) FROM unnest(ARRAY['bench', 'bench_ins']) t "
      "WHERE NOT EXISTS (SELECT FROM idgen.segments WHERE biz_type = t)")
    if "snowflake" in PEERS:
        q("CREATE EXTENSION IF NOT EXISTS snowflake")
    if "pg_uuidv7" in PEERS:
        q("CREATE EXTENSION IF NOT EXISTS pg_uuidv7")
    # Timed on the server, so the client's round trip is not in the figure.
    q("""CREATE OR REPLACE FUNCTION bench_seconds(sql text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz;
BEGIN
  t0 := clock_timestamp();
  EXECUTE sql;
  RETURN extract(epoch FROM clock_timestamp() - t0);
END $$""")


def seconds(sql):
    return float(q(f"SELECT bench_seconds($q${sql}$q$)"))


def interleaved(cells):
    """cells: list of (key, fn). Runs every fn ROUNDS times, round by round; returns key -> list."""
    got = {key: [] for key, _ in cells}
    for _ in range(ROUNDS):
        for key, fn in cells:
            got[key].append(fn())
    return got


def spread(values, fmt):
    if len(values) < 2:
        return fmt(statistics.median(values))
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"


def ratio_cell(values, bases):
    """The per-round ratio values[i] / bases[i]: median, spread, and "~" when the spread is
    wider than the distance from 1.00x."""
    if not bases or not values:
        return "-"
    rs = [v / b for v, b in zip(values, bases)]
    med = statistics.median(rs)
    mark = "~" if min(rs) <= 1 <= max(rs) else " "
    return f"{mark}{med:.2f}x ({min(rs):.2f}-{max(rs):.2f})"


def table(title, unit, rows, got, bases, lower_is_better, fmt):
    """rows: list of (label, key); bases: list of (column title, key or None)."""
    print(f"\n## {title}")
    print(f"({unit}; median of {ROUNDS} interleaved rounds, lowest-highest in brackets; "
          f"ratios {'below' if lower_is_better else 'above'} 1.00x favour the row; ~ = within the spread)")
    chart = {"title": title, "base": bases[0][0], "lower_is_better": lower_is_better, "rows": []}
    CHARTS.append(chart)
    heads = ["", unit] + [f"vs {b}" for b, _ in bases]
    widths = [52, 26] + [24] * len(bases)
    print("".join(h.ljust(w) for h, w in zip(heads, widths)))
    for label, key in rows:
        if key not in got:
            continue
        cells = [label, spread(got[key], fmt)]
        bkey = bases[0][1]
        if bkey in got and bkey != key and got[bkey]:
            rs = [v / b for v, b in zip(got[key], got[bkey])]
            chart["rows"].append({"label": label, "median": statistics.median(rs), "low": min(rs), "high": max(rs)})
        for _, bkey in bases:
            if bkey is None or bkey not in got or bkey == key:
                cells.append("")
            else:
                cells.append(ratio_cell(got[key], got[bkey]))
        print("".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())


def base_columns(floor_key, keys):
    cols = [(floor_key[0], floor_key[1]), ("nextval()", "nextval()")]
    if "pgEdge snowflake.nextval()" in keys:
        cols.append(("pgEdge", "pgEdge snowflake.nextval()"))
    # The UUID generators' own baseline (issue 19's goal: uuidv7_next() at most 0.3x of it).
    cols.append(("gen_random_uuid()", "gen_random_uuid()"))
    return cols


def per_row(gens):
    def ns(expr):
        # The best of 3 runs in a row: a run that a neighbour on the machine interrupted is slower,
        # never faster.
        return min(seconds(f"SELECT count({expr}) FROM generate_series(1, {ROWS}) g") for _ in range(3)) * 1e9 / ROWS

    cells = [("loop alone", lambda: ns("g"))]
    for g in gens:
        cells.append((g.name, lambda g=g: ns(g.expr)))
    got = interleaved(cells)
    keys = [g.name for g in gens]
    table(f"Per row: SELECT count(f()) FROM generate_series(1, {ROWS:,}), best of 3 runs per round", "ns per row",
          [("loop alone (count(g))", "loop alone")] + [(f"{g.name} [{g.who}]", g.name) for g in gens],
          got, base_columns(("clock_timestamp()", "clock_timestamp()"), keys), True,
          lambda v: f"{v:.0f}")
    # The cost above the loop: what the generator itself adds.
    above = {k: [v - l for v, l in zip(vs, got["loop alone"])] for k, vs in got.items() if k != "loop alone"}
    table("Per row, the loop subtracted", "ns per row above the loop",
          [(f"{g.name} [{g.who}]", g.name) for g in gens],
          above, base_columns(("clock_timestamp()", "clock_timestamp()"), keys), True,
          lambda v: f"{v:.0f}")


def tps(clients, sql):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(sql + "\n")
    try:
        out = subprocess.run(
            [f"{PGBIN}/pgbench", "-h", "127.0.0.1", "-p", PORT, "-U", "postgres", "-n", "-M", "prepared",
             "-T", str(SECS), "-c", str(clients), "-j", str(clients), "-f", f.name, "postgres"],
            check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    for line in out.splitlines():
        if line.startswith("tps = "):
            return float(line.split()[2])
    raise RuntimeError(f"pgbench printed no tps:\n{out}")


def pgbench(gens):
    stmts = [("SELECT 1", "SELECT 1;")] + [(g.name, f"SELECT {g.expr};") for g in gens]
    cells = [((c, name), lambda c=c, sql=sql: tps(c, sql)) for c in CLIENTS for name, sql in stmts]
    got = interleaved(cells)
    keys = [g.name for g in gens]
    for c in CLIENTS:
        sub = {name: got[(c, name)] for name, _ in stmts}
        table(f"pgbench, {c} clients, {SECS} s each: one call per transaction", "tps",
              [("SELECT 1", "SELECT 1")] + [(f"{g.name} [{g.who}]", g.name) for g in gens],
              sub, base_columns(("clock_timestamp()", "clock_timestamp()"), keys)
              + [("snowflake_next()", "snowflake_next()")], False,
              lambda v: f"{v:,.0f}")


def insert(gens):
    with_col = [g for g in gens if g.column]

    def run(g):
        t = f"bench_ins_{with_col.index(g)}"
        q(f"DROP TABLE IF EXISTS {t}; CREATE TABLE {t} ({g.column}, v int)")
        q("CHECKPOINT")  # so that no round pays for another's dirty buffers
        return seconds(f"INSERT INTO {t} (v) SELECT g FROM generate_series(1, {INSERT_ROWS}) g")

    got = interleaved([(g.name, lambda g=g: run(g)) for g in with_col])
    keys = [g.name for g in with_col]
    cols = [("bigserial", "nextval()")]
    if "pgEdge snowflake.nextval()" in keys:
        cols.append(("pgEdge", "pgEdge snowflake.nextval()"))
    cols.append(("gen_random_uuid()", "gen_random_uuid()"))
    table(f"INSERT {INSERT_ROWS:,} rows with the key as the column's DEFAULT (one statement)", "seconds",
          [(f"{g.name} [{g.who}]", g.name) for g in with_col], got, cols, True, lambda v: f"{v:.2f}")
    print("index size after the last round: " + ", ".join(
        f"{g.name} {q(f'SELECT pg_size_pretty(pg_relation_size($$bench_ins_{with_col.index(g)}_pkey$$))')}"
        for g in with_col))


def capacity(gens):
    cap = float(q("SELECT ids_per_second FROM idgen.layouts WHERE is_node_layout"))
    n = 10_000_000

    def rate(sql):
        return n / seconds(sql)

    per_row_sql = f"SELECT count(snowflake_next()) FROM (SELECT generate_series(1, {n})) g"
    batch_sql = f"SELECT count(*) FROM (SELECT snowflake_next_batch({n})) b"
    edge_sql = f"SELECT count(snowflake.nextval()) FROM (SELECT generate_series(1, {n})) g"

    def drift(setting):
        q(f"ALTER SYSTEM {'SET idgen.max_drift = 0' if setting == 0 else 'RESET idgen.max_drift'}")
        q("SELECT pg_reload_conf()")
        q("SELECT pg_sleep(0.2)")
        # Runs ahead of the wall clock borrowed ticks: let it catch up before holding to it.
        q("SELECT pg_sleep(greatest(0, drift_ms / 1000.0) + 0.5) FROM idgen.status")

    got = {k: [] for k in ["free row", "free batch", "held row", "held batch", "pgEdge"]}
    for _ in range(ROUNDS):
        got["free row"].append(rate(per_row_sql))
        got["free batch"].append(rate(batch_sql))
        drift(0)
        got["held row"].append(rate(per_row_sql))
        got["held batch"].append(rate(batch_sql))
        drift(None)
        if any(g.name.startswith("pgEdge") for g in gens):
            got["pgEdge"].append(rate(edge_sql))
    got["capacity"] = [cap] * ROUNDS
    rows = [("snowflake_next(), unbounded drift", "free row"),
            ("snowflake_next_batch(), unbounded drift", "free batch"),
            ("snowflake_next(), held (max_drift 0) [goal>=0.95]", "held row"),
            ("snowflake_next_batch(), held [goal>=0.95]", "held batch")]
    if got["pgEdge"]:
        rows.append(("pgEdge snowflake.nextval() (never ahead)", "pgEdge"))
    else:
        del got["pgEdge"]
    table(f"Sustained rate, {n:,} IDs per statement, against the layout's capacity ({cap:,.0f} IDs/s)",
          "IDs per second", rows, got, [("capacity", "capacity")], False, lambda v: f"{v / 1e6:.2f}M")


def dups(gens):
    print(f"\n## Repeats: 8 sessions at once, {DUP_ROWS:,} IDs each, into one table without a key")
    for g in gens:
        if g.name == "clock_timestamp()":
            continue
        t = f"bench_dup_{gens.index(g)}"
        q(f"DROP TABLE IF EXISTS {t}; CREATE UNLOGGED TABLE {t} (id {g.sqltype})")
        errors = []

        def session():
            try:
                q(f"INSERT INTO {t} SELECT {g.expr} FROM generate_series(1, {DUP_ROWS})")
            except subprocess.CalledProcessError as e:
                errors.append(e.stderr.strip())

        threads = [threading.Thread(target=session) for _ in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        total, distinct = q(f"SELECT count(*), count(DISTINCT id) FROM {t}").split("|")
        note = f"; {len(errors)} session(s) failed: {errors[0]}" if errors else ""
        print(f"{g.name:<34}{int(total) - int(distinct)} repeated of {int(total):,}{note}")
        q(f"DROP TABLE {t}")


def main():
    setup()
    gens = generators()
    load = os.getloadavg()
    print(f"# {q('SELECT version()').split(',')[0]}; {os.cpu_count()} CPUs; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the start")
    missing = {"snowflake": "pgEdge snowflake", "pg_uuidv7": "pg_uuidv7"}
    for p, label in missing.items():
        if p not in PEERS:
            print(f"# {label} rows skipped: not built (its source not in IDGEN_VENDOR_DIR, or its build failed)")
    for section in SECTIONS:
        globals()[section](gens)
        sys.stdout.flush()
    load = os.getloadavg()
    print(f"\n# load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")
    if os.environ.get("BENCH_JSON"):
        with open(os.environ["BENCH_JSON"], "w") as f:
            json.dump({"server": q("SELECT version()").split(",")[0], "rounds": ROUNDS, "cpus": os.cpu_count(),
                       "tables": [c for c in CHARTS if c["rows"]]}, f, indent=1)


main()
