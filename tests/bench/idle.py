"""Low traffic (make bench, part "idle"): the latency of a single-row INSERT in autocommit after a
pause, with the key made by the default of each table, rounds interleaved; and the WAL each key
writes per million IDs. Run by tests/bench/bench.sh on a cluster with fsync and synchronous_commit
on (and, with a second argument, on one with a synchronous standby). Prints the table's rows.

Usage: idle.py CONNINFO PAUSES ROUNDS [LABEL]   (PAUSES: seconds, e.g. "0.5 2 30")
"""

import statistics
import sys
import time

import psycopg2

CONNINFO, PAUSES, ROUNDS = sys.argv[1], [float(p) for p in sys.argv[2].split()], int(sys.argv[3])
LABEL = sys.argv[4] if len(sys.argv) > 4 else ""
KEYS = [
    ("bigserial (baseline)", "idle_big"),
    ("gen_random_uuid()", "idle_uuid"),
    ("DEFAULT snowflake_next()", "idle_sf"),
    ("DEFAULT uuidv7_next()", "idle_v7"),
]

conn = psycopg2.connect(CONNINFO)
conn.autocommit = True
cur = conn.cursor()
cur.execute("""
    DROP TABLE IF EXISTS idle_big, idle_uuid, idle_sf, idle_v7;
    CREATE TABLE idle_big (id bigserial PRIMARY KEY, v int);
    CREATE TABLE idle_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v int);
    CREATE TABLE idle_sf (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int);
    CREATE TABLE idle_v7 (id uuid PRIMARY KEY DEFAULT uuidv7_next(), v int);
""")


def insert_ms(table):
    t0 = time.perf_counter()
    cur.execute(f"INSERT INTO {table} (v) VALUES (1)")
    return (time.perf_counter() - t0) * 1000


for pause in PAUSES:
    got = {table: [] for _, table in KEYS}
    back_to_back = {table: [] for _, table in KEYS}
    for _ in range(ROUNDS):
        for _, table in KEYS:
            time.sleep(pause)
            got[table].append(insert_ms(table))
            insert_ms(table)
            back_to_back[table].append(insert_ms(table))
    base = statistics.median(got["idle_big"])
    for name, table in KEYS:
        v = got[table]
        cell = f"{statistics.median(v):.2f} ms ({min(v):.2f}-{max(v):.2f})"
        ratio = "" if table == "idle_big" else f"{statistics.median(v) / base:.2f}x"
        print(f"{LABEL}INSERT after {pause:g} s idle, {name:<26} {cell:>26} {ratio:>7}")
    for name, table in KEYS:
        v = back_to_back[table]
        print(f"{LABEL}  third INSERT back to back, {name:<26} {statistics.median(v):.2f} ms")


def wal_bytes(expr, n=1_000_000):
    cur.execute("SELECT pg_current_wal_insert_lsn()")
    (before,) = cur.fetchone()
    cur.execute(f"SELECT count({expr}) FROM generate_series(1, {n})")
    cur.execute("SELECT pg_current_wal_insert_lsn() - %s::pg_lsn", (before,))
    (delta,) = cur.fetchone()
    return int(delta)


cur.execute("CREATE SEQUENCE IF NOT EXISTS idle_seq")
seq = wal_bytes("nextval('idle_seq')")
for name, expr in [("nextval() (baseline)", "nextval('idle_seq')"), ("snowflake_next()", "snowflake_next()"),
                   ("uuidv7_next()", "uuidv7_next()")]:
    b = seq if expr.startswith("nextval") else wal_bytes(expr)
    print(f"{LABEL}WAL bytes per million IDs, {name:<26} {b:>14,} {b / seq * 100:>6.2f}%")
