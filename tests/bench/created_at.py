#!/usr/bin/env python3
"""A free created_at (make bench PARTS=created_at): a query by the time inside a key against the
same query written by hand as a key range, on tables of ROWS_CA rows (10M) keyed by Snowflake IDs
and by UUIDv7s spread over a year; the latest 20 rows by the time against the same by the key;
what the queries cost with idgen.time_conditions off (the sequential scans of before); and the
planning time the hook adds to queries it has nothing to do for. Each query runs under pgbench
(one client, simple protocol: parsed and planned every time), the query by time and those it is
compared with interleaved (pgbench picks one of them for each transaction; each mean from its log
of every transaction), SECS seconds a query, ROUNDS rounds; the ratio is the median of the rounds'
ratios, with their spread.

    python3 created_at.py PORT   (PGBIN, ROWS_CA, PGBENCH_SECONDS, ROUNDS from the environment)
"""
import os
import statistics
import subprocess
import sys
import tempfile

PORT = sys.argv[1]
PGBIN = os.environ["PGBIN"]
ROWS = int(os.environ.get("ROWS_CA", "10000000"))
SECS = int(os.environ.get("PGBENCH_SECONDS", "5"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))


def psql(sql):
    return subprocess.run([f"{PGBIN}/psql", "-h", "127.0.0.1", "-p", PORT, "-U", "postgres", "-X", "-q", "-A", "-t",
                           "-v", "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


def latency_ms(sql, options=""):
    """Mean latency of one query, ms, over SECS seconds of one client."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(sql + ";\n")
    env = dict(os.environ, PGOPTIONS=options)
    out = subprocess.run([f"{PGBIN}/pgbench", "-h", "127.0.0.1", "-p", PORT, "-U", "postgres", "-n", "-M", "simple",
                          "-T", str(SECS), "-c", "1", "-f", f.name, "postgres"],
                         check=True, capture_output=True, text=True, env=env).stdout
    os.unlink(f.name)
    for line in out.splitlines():
        if line.startswith("latency average"):
            return float(line.split("=")[1].split()[0])
    raise SystemExit(f"no latency in pgbench's output:\n{out}")


def latencies_ms(sqls, seconds):
    """Mean latency of each query, ms, run interleaved: one client of pgbench picks one of them at
    random for each transaction, for `seconds` in all, so that whatever the machine does meanwhile
    falls on all alike; each mean from pgbench's log of every transaction (in microseconds)."""
    with tempfile.TemporaryDirectory() as d:
        scripts = []
        for i, sql in enumerate(sqls):
            path = os.path.join(d, f"q{i}.sql")
            with open(path, "w") as f:
                f.write(sql + ";\n")
            scripts += ["-f", f"{path}@1"]
        subprocess.run([f"{PGBIN}/pgbench", "-h", "127.0.0.1", "-p", PORT, "-U", "postgres", "-n", "-M", "simple",
                        "-T", str(seconds), "-c", "1", *scripts, "--log", "--log-prefix", os.path.join(d, "log"),
                        "postgres"], check=True, capture_output=True, text=True, cwd=d)
        total = [0] * len(sqls)
        count = [0] * len(sqls)
        for name in os.listdir(d):
            if not name.startswith("log"):
                continue
            with open(os.path.join(d, name)) as f:
                # client_id transaction_no time_us script_no time_epoch time_us_of_second
                for line in f:
                    fields = line.split()
                    script, us = int(fields[3]), int(fields[2])
                    total[script] += us
                    count[script] += 1
    if min(count) == 0:
        raise SystemExit(f"pgbench's log has no transaction of some of {sqls}")
    return [t / n / 1000 for t, n in zip(total, count)]


print(f"\n## A free created_at: {ROWS:,} rows a table, a year of keys; pgbench, 1 client, {SECS} s a query x {ROUNDS} rounds, interleaved")
psql(f"""
DROP TABLE IF EXISTS ca_orders, ca_events CASCADE;
CREATE TABLE ca_orders (id bigint PRIMARY KEY, v int);
INSERT INTO ca_orders SELECT id_from_timestamp(now() - g * (interval '1 year' / {ROWS}), 'pg_idgen') + g % 4096, g
  FROM generate_series(1, {ROWS}) g;
CREATE TABLE ca_events (id uuid PRIMARY KEY, v int);
INSERT INTO ca_events SELECT uuidv7_from_timestamp(now() - g * (interval '1 year' / {ROWS})), g FROM generate_series(1, {ROWS}) g;
CREATE VIEW ca_orders_v AS SELECT *, id_timestamp(id) AS created_at FROM ca_orders;
""")
# PostgreSQL 18 reads a version 7 UUID's time with its own uuid_extract_timestamp: where a
# constraint allows no other version (and no NULL one), the same range serves it.
PG18 = int(psql("SHOW server_version_num")) >= 180000
if PG18:
    psql("ALTER TABLE ca_events ADD CHECK (uuid_extract_version(id) = 7 AND uuid_extract_version(id) IS NOT NULL)")
psql("VACUUM ANALYZE ca_orders, ca_events")
HOUR = "now() - interval '1 hour'"
# The day as an application passes it: two constants (the bounds of a report), not an expression
# PostgreSQL evaluates again for every row the filter sees.
DAY0 = "'" + psql("SELECT date_trunc('day', now() - interval '30 days')") + "'::timestamptz"
DAY1 = "'" + psql("SELECT date_trunc('day', now() - interval '29 days')") + "'::timestamptz"
# The same day as an ORM sends it: two dates, which PostgreSQL reads in the session's TimeZone.
DATE0, DATE1 = (psql(f"SELECT ({d})::date") for d in (DAY0, DAY1))
# (name, the query by time, the same written by hand as a key range)
CASES = [
    ("last hour: id_timestamp(id)",
     f"SELECT count(*), sum(v) FROM ca_orders WHERE id_timestamp(id) >= {HOUR}",
     f"SELECT count(*), sum(v) FROM ca_orders WHERE id >= id_from_timestamp({HOUR})"),
    ("last hour: a view's created_at",
     f"SELECT count(*), sum(v) FROM ca_orders_v WHERE created_at >= {HOUR}",
     f"SELECT count(*), sum(v) FROM ca_orders_v WHERE id >= id_from_timestamp({HOUR})"),
    ("a day a month ago: id_timestamp(id)",
     f"SELECT count(*), sum(v) FROM ca_orders WHERE id_timestamp(id) >= {DAY0} AND id_timestamp(id) < {DAY1}",
     f"SELECT count(*), sum(v) FROM ca_orders WHERE id >= id_from_timestamp({DAY0}) AND id < id_from_timestamp({DAY1})"),
    ("last hour: a view's created_at >= a timestamp",
     "SELECT count(*), sum(v) FROM ca_orders_v WHERE created_at >= localtimestamp - interval '1 hour'",
     "SELECT count(*), sum(v) FROM ca_orders_v WHERE id >= id_from_timestamp((localtimestamp - interval '1 hour')::timestamptz)"),
    ("a day a month ago: a view's created_at, two dates",
     f"SELECT count(*), sum(v) FROM ca_orders_v WHERE created_at >= '{DATE0}'::date AND created_at < '{DATE1}'::date",
     f"SELECT count(*), sum(v) FROM ca_orders_v WHERE id >= id_from_timestamp('{DATE0}'::date) AND id < id_from_timestamp('{DATE1}'::date)"),
    # "On a day" as ORMs write it: a local time, whose range comes from the zone's offsets; exact
    # here (the session's zone, UTC, never changes its clocks), so its bounds are computed while
    # planning and stand alone.
    ("a day a month ago: a view's created_at::date = day",
     f"SELECT count(*), sum(v) FROM ca_orders_v WHERE created_at::date = '{DATE0}'::date",
     f"SELECT count(*), sum(v) FROM ca_orders_v WHERE id >= id_from_timestamp('{DATE0}'::date) AND id < id_from_timestamp('{DATE1}'::date)"),
    ("a day a month ago: (created_at AT TIME ZONE 'UTC')::date = day",
     f"SELECT count(*), sum(v) FROM ca_orders_v WHERE (created_at AT TIME ZONE 'UTC')::date = '{DATE0}'::date",
     f"SELECT count(*), sum(v) FROM ca_orders_v WHERE id >= id_from_timestamp('{DATE0}'::timestamp AT TIME ZONE 'UTC') AND id < id_from_timestamp('{DATE1}'::timestamp AT TIME ZONE 'UTC')"),
    ("a day a month ago: date_trunc('day', created_at) = day",
     f"SELECT count(*), sum(v) FROM ca_orders_v WHERE date_trunc('day', created_at) = {DAY0}",
     f"SELECT count(*), sum(v) FROM ca_orders_v WHERE id >= id_from_timestamp({DAY0}) AND id < id_from_timestamp({DAY1})"),
    ("last hour: uuidv7_timestamp(id)",
     f"SELECT count(*), sum(v) FROM ca_events WHERE uuidv7_timestamp(id) >= {HOUR}",
     f"SELECT count(*), sum(v) FROM ca_events WHERE id >= uuidv7_from_timestamp({HOUR})"),
    ("a day a month ago: uuidv7_timestamp(id)",
     f"SELECT count(*), sum(v) FROM ca_events WHERE uuidv7_timestamp(id) >= {DAY0} AND uuidv7_timestamp(id) < {DAY1}",
     f"SELECT count(*), sum(v) FROM ca_events WHERE id >= uuidv7_from_timestamp({DAY0}) AND id < uuidv7_from_timestamp({DAY1})"),
]
if PG18:
    CASES.append(
        ("a day a month ago: uuid_extract_timestamp(id)",
         f"SELECT count(*), sum(v) FROM ca_events WHERE uuid_extract_timestamp(id) >= {DAY0} AND uuid_extract_timestamp(id) < {DAY1}",
         f"SELECT count(*), sum(v) FROM ca_events WHERE id >= uuidv7_from_timestamp({DAY0}) AND id < uuidv7_from_timestamp({DAY1})"))
for name, by_time, by_hand in CASES:
    same = psql(f"SELECT ({by_time}) IS NOT DISTINCT FROM ({by_hand})".replace("SELECT count(*), sum(v)", "SELECT (count(*), sum(v))"))
    if same != "t":
        raise SystemExit(f"{name}: the two queries find different rows")
# Against three queries by hand: the key range alone (what is read, nothing else checked); the key
# range beside the same condition on the time (what users write today for the same answer: the
# range is exact only to the layout's tick); and, to show what the time condition kept beside the
# added range costs, the key range with as many conditions of nothing on another column (v > -1),
# the price PostgreSQL asks for any condition it checks on each row it reads.
print(f"{'query':<42} {'by time':>9} {'range':>9} {'both':>9} {'range+v':>9} {'vs range':>17} {'vs both':>17} {'vs range+v':>17}")
for name, by_time, by_hand in CASES:
    where = by_time.split(" WHERE ", 1)[1]
    both = by_hand + " AND " + where
    trivial = by_hand + " AND v > -1" * (1 + where.count(" AND "))
    runs = {"t": [], "r": [], "b": [], "v": []}
    for _ in range(ROUNDS):
        for key, ms in zip("trbv", latencies_ms([by_time, by_hand, both, trivial], 4 * SECS)):
            runs[key].append(ms)

    def ratio(key):
        rs = [t / o for t, o in zip(runs["t"], runs[key])]
        return f"{statistics.median(rs):>5.2f}x ({min(rs):.2f}-{max(rs):.2f})"
    print(f"{name:<42} " + " ".join(f"{statistics.median(runs[k]):>7.3f}ms" for k in "trbv")
          + f" {ratio('r')} {ratio('b')} {ratio('v')}")
print("(goal: at most 1.05x the range alone, where the range is exact: every row here)")


def estimate(sql):
    """The planner's estimated rows of the scan, and the rows it read (EXPLAIN ANALYZE)."""
    for line in psql("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) " + sql).splitlines():
        if " Scan " in line and "actual" in line:
            est = int(line.split("(cost=")[1].split("rows=")[1].split()[0])
            act = int(float(line.split("(actual")[1].split("rows=")[1].split()[0]))
            return est, act
    raise SystemExit(f"no scan in the plan of {sql}")


# A range in place of the condition is estimated from the key's statistics (a condition kept
# beside it multiplies that by 1/3, or 1/200 for a pair).
print(f"{'row estimates':<52} {'estimated':>10} {'actual':>10} {'ratio':>7}")
for name, by_time, _ in CASES:
    est, act = estimate(by_time)
    print(f"{name:<52} {est:>10} {act:>10} {est / max(act, 1):>6.2f}x")
print("(goal: each within 2x)")

# A sort by the time, the latest 20 rows: against the sort by the key written by hand.
ORDER_CASES = [
    ("latest 20: ORDER BY a view's created_at DESC",
     "SELECT * FROM ca_orders_v ORDER BY created_at DESC LIMIT 20",
     "SELECT * FROM ca_orders_v ORDER BY id DESC LIMIT 20"),
    ("latest 20: ORDER BY uuidv7_timestamp(id) DESC",
     "SELECT * FROM ca_events ORDER BY uuidv7_timestamp(id) DESC LIMIT 20",
     "SELECT * FROM ca_events ORDER BY id DESC LIMIT 20"),
]
print(f"{'query':<50} {'by time':>9} {'by key':>9} {'vs by key':>17}")
for name, by_time, by_key in ORDER_CASES:
    t_all, k_all, ratios = [], [], []
    for _ in range(ROUNDS):
        t, k = latencies_ms([by_time, by_key], 2 * SECS)
        t_all.append(t)
        k_all.append(k)
        ratios.append(t / k)
    print(f"{name:<50} {statistics.median(t_all):>7.3f}ms {statistics.median(k_all):>7.3f}ms "
          f"{statistics.median(ratios):>5.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")
    off = latency_ms(by_time, "-c idgen.time_conditions=off")
    print(f"{name + ', idgen.time_conditions = off':<50} {off:>7.1f}ms")
# The same with the derivation off: what the query costs without it (one round: it is slow).
for name, by_time, _ in [CASES[0], CASES[5]]:
    off = latency_ms(by_time, "-c idgen.time_conditions=off")
    print(f"{name + ', idgen.time_conditions = off':<50} {off:>7.1f}ms")
# Planning time the hook adds where it has nothing to do: a lookup by key and a join with a
# condition on another timestamptz, planned every time, with the setting on against off.
PLAIN = [
    ("planning: SELECT ... WHERE id = constant",
     "SELECT v FROM ca_orders WHERE id = 384312331468800000"),
    ("planning: a join, a timestamptz condition of no key",
     "SELECT count(*) FROM ca_orders o JOIN ca_events e ON e.v = o.v WHERE o.id = 384312331468800000 AND now() > '2020-01-01'"),
]
for name, sql in PLAIN:
    ratios = []
    for _ in range(ROUNDS):
        on = latency_ms(sql)
        off = latency_ms(sql, "-c idgen.time_conditions=off")
        ratios.append(on / off)
    print(f"{name + ' (on vs off)':<80} {statistics.median(ratios):>6.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) [goal: noise]")
psql("DROP TABLE ca_orders, ca_events CASCADE")
