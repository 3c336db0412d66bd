"""A new session per statement (make bench, part "connect"): what an application without a pooler
pays for its first ID of every request. For each statement, ROUNDS interleaved rounds of PER_ROUND
sessions: connect, run the statement once, close. Two times each: the statement alone (the
session's first call, what pg_idgen adds) and the whole session (connect, statement, close, what
the application waits for), medians over all sessions and the spread of the rounds' medians, each
against its baseline (SELECT nextval(), or a bigserial INSERT). Run by tests/bench/bench.sh on a
cluster with fsync and synchronous_commit on. Prints the table's rows.

Usage: connect.py CONNINFO ROUNDS PER_ROUND
"""

import statistics
import sys
import time

import psycopg2

CONNINFO, ROUNDS, PER_ROUND = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# (label, statement, baseline label): the baselines first.
CASES = [
    ("SELECT nextval('s') (baseline)", "SELECT nextval('connect_seq')", None),
    ("SELECT snowflake_next()", "SELECT snowflake_next()", "SELECT nextval('s') (baseline)"),
    ("SELECT uuidv7_next()", "SELECT uuidv7_next()", "SELECT nextval('s') (baseline)"),
    ("SELECT msgid_next(1, 'u')", "SELECT msgid_next(1, 'u')", "SELECT nextval('s') (baseline)"),
    ("SELECT segment_next('c')", "SELECT segment_next('connect')", "SELECT nextval('s') (baseline)"),
    ("INSERT, bigserial (baseline)", "INSERT INTO connect_big (v) VALUES (1)", None),
    ("INSERT, DEFAULT snowflake_next()", "INSERT INTO connect_sf (v) VALUES (1)", "INSERT, bigserial (baseline)"),
    ("INSERT, DEFAULT uuidv7_next()", "INSERT INTO connect_v7 (v) VALUES (1)", "INSERT, bigserial (baseline)"),
    # References: a UUID key made by PostgreSQL itself, and by another extension's C function (what
    # the first call of any extension's function costs a new backend).
    ("INSERT, DEFAULT gen_random_uuid() (reference)", "INSERT INTO connect_rnd (v) VALUES (1)", "INSERT, bigserial (baseline)"),
]

setup = psycopg2.connect(CONNINFO)
setup.autocommit = True
with setup.cursor() as cur:
    cur.execute("""
        DROP TABLE IF EXISTS connect_big, connect_sf, connect_v7;
        DROP SEQUENCE IF EXISTS connect_seq;
        CREATE SEQUENCE connect_seq;
        CREATE TABLE connect_big (id bigserial PRIMARY KEY, v int);
        CREATE TABLE connect_sf (id bigint PRIMARY KEY DEFAULT snowflake_next(), v int);
        CREATE TABLE connect_v7 (id uuid PRIMARY KEY DEFAULT uuidv7_next(), v int);
        DROP TABLE IF EXISTS connect_rnd, connect_pgv7;
        CREATE TABLE connect_rnd (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v int);
        SELECT idgen.segment_create('connect') WHERE NOT EXISTS
            (SELECT FROM idgen.segments WHERE biz_type = 'connect');
    """)
    # pg_uuidv7 (the peers' part of make bench builds it), when this PostgreSQL has it.
    cur.execute("SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_uuidv7'")
    if cur.fetchone()[0]:
        cur.execute("""
            CREATE EXTENSION IF NOT EXISTS pg_uuidv7;
            CREATE TABLE connect_pgv7 (id uuid PRIMARY KEY DEFAULT uuid_generate_v7(), v int);
        """)
        CASES.append(("INSERT, DEFAULT uuid_generate_v7() (pg_uuidv7, reference)",
                      "INSERT INTO connect_pgv7 (v) VALUES (1)", "INSERT, bigserial (baseline)"))
setup.close()


def one_session(sql):
    """(statement ms, session ms) of a new session that runs sql once."""
    t0 = time.perf_counter()
    conn = psycopg2.connect(CONNINFO)
    conn.autocommit = True
    cur = conn.cursor()
    t1 = time.perf_counter()
    cur.execute(sql)
    if cur.description:
        cur.fetchall()
    t2 = time.perf_counter()
    conn.close()
    t3 = time.perf_counter()
    return (t2 - t1) * 1000, (t3 - t0) * 1000


# Warm the server (its first reservation, the caches of the catalogs) before measuring.
for _, sql, _ in CASES:
    one_session(sql)

stmt = {label: [] for label, _, _ in CASES}
whole = {label: [] for label, _, _ in CASES}
rounds = {label: ([], []) for label, _, _ in CASES}
for _ in range(ROUNDS):
    for label, sql, _ in CASES:
        s, w = zip(*(one_session(sql) for _ in range(PER_ROUND)))
        stmt[label] += s
        whole[label] += w
        rounds[label][0].append(statistics.median(s))
        rounds[label][1].append(statistics.median(w))


def cell(label, base, which, per_round):
    m = statistics.median(which[label])
    lo, hi = min(per_round[label]), max(per_round[label])
    if base is None:
        return f"{m:.3f} ms ({lo:.3f}-{hi:.3f})"
    b = statistics.median(which[base])
    return f"{m / b:.2f}x ({m:.3f} ms, rounds {lo:.3f}-{hi:.3f})"


print(f"\n## A new session per statement ({ROUNDS} rounds x {PER_ROUND} sessions each, interleaved; medians)")
print("| statement | its first call in the session | the whole session (connect, statement, close) |")
print("|---|---|---|")
for label, _, base in CASES:
    s = cell(label, base, stmt, {k: v[0] for k, v in rounds.items()})
    w = cell(label, base, whole, {k: v[1] for k, v in rounds.items()})
    print(f"| {label} | {s} | {w} |")
