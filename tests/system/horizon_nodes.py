"""Several nodes, one reader (tests/system/read_horizon.sh): writers on two nodes for DURATION
seconds, whose rows reach a third node by logical replication; readers there page with the recipe
of examples/outbox_relay.py (read_page_nodes), and two controls: the smallest horizon of the
writers without waiting for their markers, and `id > last` alone. Prints one JSON object.

Usage: horizon_nodes.py CONNINFO_A CONNINFO_B CONNINFO_READER DURATION EXAMPLES_DIR
"""

import json
import random
import sys
import threading
import time

import psycopg

sys.path.insert(0, sys.argv[5])
from outbox_relay import min_horizon, read_page_nodes  # noqa: E402

A, B, READER, DURATION = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
WRITERS = 4  # per node
deadline = time.monotonic() + DURATION
lock = threading.Lock()
stats = {"committed": 0, "rolled_back": 0}
QUERY = "SELECT id FROM outbox WHERE id > %s AND id < %s ORDER BY id LIMIT %s"


def connect(conninfo):
    return psycopg.connect(conninfo, autocommit=True)


def writer(conninfo, node, i):
    rnd = random.Random(node * 100 + i)
    with connect(conninfo) as conn:
        while time.monotonic() < deadline:
            conn.execute("BEGIN")
            conn.execute("INSERT INTO outbox (node, n) SELECT %s, g FROM generate_series(1, %s) g",
                         (node, rnd.randint(1, 20)))
            time.sleep(rnd.uniform(0, 0.3))
            commit = rnd.random() >= 0.1
            conn.execute("COMMIT" if commit else "ROLLBACK")
            with lock:
                stats["committed" if commit else "rolled_back"] += 1


done = threading.Event()
seen = {"recipe": [], "control_no_wait": [], "control_id": []}


def reader(name):
    writers = [(1, connect(A)), (2, connect(B))]
    conn = connect(READER)
    last = 0
    idle_after_done = 0
    while idle_after_done < 50 and time.monotonic() < deadline + 240:
        if name == "recipe":
            rows, last = read_page_nodes(writers, conn, last, 200, QUERY)
        elif name == "control_no_wait":
            h = min_horizon([c for _, c in writers])
            rows = conn.execute(QUERY, (last, h, 200)).fetchall()
            last = rows[-1][0] if rows else last
        else:
            rows = conn.execute(QUERY, (last, 2**63 - 1, 200)).fetchall()
            last = rows[-1][0] if rows else last
        seen[name].extend(r[0] for r in rows)
        if not rows:
            if done.is_set():
                idle_after_done += 1
            time.sleep(0.02)
    conn.close()
    for _, c in writers:
        c.close()


threads = [threading.Thread(target=writer, args=(conninfo, node, i))
           for node, conninfo in ((1, A), (2, B)) for i in range(WRITERS)]
readers = [threading.Thread(target=reader, args=(name,)) for name in seen]
for t in threads + readers:
    t.start()
for t in threads:
    t.join()
# Every row has arrived at the reader's node once both markers moved now have arrived.
try:
    with connect(READER) as r, connect(A) as a, connect(B) as b:
        read_page_nodes([(1, a), (2, b)], r, 0, 1, QUERY)
        truth = [row[0] for row in r.execute("SELECT id FROM outbox ORDER BY id")]
        by_node = dict(r.execute("SELECT node, count(*) FROM outbox GROUP BY node").fetchall())
finally:
    done.set()
for t in readers:
    t.join(timeout=180)
out = dict(stats, rows=len(truth), rows_of_node_1=by_node.get(1, 0), rows_of_node_2=by_node.get(2, 0))
for name, got in seen.items():
    missed = sorted(set(truth) - set(got))
    out[name] = {"read": len(got), "missed": len(missed), "in_order": got == sorted(got),
                 "first_missed_at": [truth.index(m) for m in missed[:3]],
                 "exactly_once": sorted(got) == truth}
print(json.dumps(out))
