"""The read horizon in a Citus cluster (tests/system/citus_horizon.sh): writers on a coordinator and
two workers for DURATION seconds, into a table distributed over both workers, many of them in
transactions that write to both workers (Citus commits those in two phases: COMMIT PREPARED on
each worker after the local commit); a reader follows docs/read-horizon.md for several writing
nodes (a snowflake_next() on every node, H the smallest idgen.read_horizon() of them, then
`id > last AND id < H` through the coordinator). Prints one JSON object: what was committed, what
the reader read, what it missed.

Usage: citus_horizon.py CONNINFO_COORDINATOR CONNINFO_W1 CONNINFO_W2 DURATION
"""

import json
import random
import sys
import threading
import time

import psycopg

C, W1, W2, DURATION = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
NODES = [C, W1, W2]
deadline = time.monotonic() + DURATION
lock = threading.Lock()
stats = {"transactions": 0, "errors": []}
PAGE = "SELECT id FROM outbox WHERE id > %s AND id < %s ORDER BY id LIMIT 2000"


def connect(conninfo):
    # A statement that waits a minute (a lock, a worker that does not answer) is an error that
    # names itself, not a run that never ends.
    return psycopg.connect(conninfo, autocommit=True, options="-c statement_timeout=60s")


def writer(conninfo, how, rows, seed):
    """Transactions of `rows` rows with random distribution keys: with 8 rows over 8 shards on two
    workers, nearly every one writes to both (two-phase commit)."""
    rnd = random.Random(seed)
    values = ", ".join(["(%s, %s)"] * rows)
    try:
        with connect(conninfo) as conn:
            while time.monotonic() < deadline:
                args = []
                for _ in range(rows):
                    args += [rnd.randint(1, 1_000_000), how]
                conn.execute(f"INSERT INTO outbox (k, how) VALUES {values}", args)
                with lock:
                    stats["transactions"] += 1
    except psycopg.Error as e:
        with lock:
            stats["errors"].append(f"{how}: {e}")


def horizon(conns):
    """docs/read-horizon.md, several writing nodes: each node makes an ID first (an idle node's
    horizon would hold the others back), then the smallest horizon of them."""
    for c in conns:
        c.execute("SELECT snowflake_next()")
    return min(c.execute("SELECT idgen.read_horizon()").fetchone()[0] for c in conns)


done = threading.Event()
seen = []


def reader():
    try:
        nodes = [connect(n) for n in NODES]
        coordinator = nodes[0]
        last = 0
        idle_after_done = 0
        while idle_after_done < 20 and time.monotonic() < deadline + 120:
            h = horizon(nodes)
            rows = coordinator.execute(PAGE, (last, h)).fetchall()
            seen.extend(r[0] for r in rows)
            if rows:
                last = rows[-1][0]
            else:
                if done.is_set():
                    idle_after_done += 1
                time.sleep(0.01)
        for c in nodes:
            c.close()
    except psycopg.Error as e:
        with lock:
            stats["errors"].append(f"reader: {e}")


writers = [threading.Thread(target=writer, args=(C, "multi", 8, i)) for i in range(3)]
writers.append(threading.Thread(target=writer, args=(C, "single", 1, 10)))
writers.append(threading.Thread(target=writer, args=(W1, "mx_w1", 8, 11)))
writers.append(threading.Thread(target=writer, args=(W2, "mx_w2", 8, 12)))
r = threading.Thread(target=reader, daemon=True)
for t in writers + [r]:
    t.start()
for t in writers:
    t.join()
done.set()
r.join(timeout=180)
if r.is_alive():
    stats["errors"].append("reader: still reading 180 s after the writers stopped")
with connect(C) as conn:
    truth = [row[0] for row in conn.execute("SELECT id FROM outbox ORDER BY id")]
    by_how = dict(conn.execute("SELECT how, count(*) FROM outbox GROUP BY how").fetchall())
    missed = sorted(set(truth) - set(seen))
    missed_how = {}
    if missed:
        for how, n in conn.execute(
            "SELECT how, count(*) FROM outbox WHERE id = ANY(%s) GROUP BY how", (missed,)
        ).fetchall():
            missed_how[how] = n
print(json.dumps(dict(stats, rows=len(truth), by_how=by_how, read=len(seen), missed=len(missed),
                      missed_by_how=missed_how, exactly_once=sorted(seen) == truth,
                      in_order=seen == sorted(seen))))
