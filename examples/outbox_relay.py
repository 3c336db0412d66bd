"""An outbox relay that pages by ID and never misses a row committed late (docs/read-horizon.md).

The table is written by the application, its key made by the database:

    CREATE TABLE outbox (id bigint PRIMARY KEY DEFAULT snowflake_next(), payload jsonb);

The relay remembers the largest ID it has passed on (`last`) and reads, page after page, the rows
above it and below this node's read horizon: every ID below the horizon belongs to a transaction
that has ended, so no row can later appear below what was read. The horizon is taken in a
statement of its own, before the snapshot the page is read with; in REPEATABLE READ, before
BEGIN. On a physical standby: `read_page_standby`. Several nodes writing the table: the smallest
horizon of the nodes that write it (`min_horizon`); read on a subscriber of their logical
replication: `read_page_nodes`.

It needs psycopg 3 (the `psycopg` package, not psycopg2):

    python3 -m venv relay && relay/bin/pip install "psycopg[binary]"
    relay/bin/python outbox_relay.py "host=... dbname=..."   # each row as a JSON line, forever
"""

import json
import sys
import time

import psycopg

HORIZON = "SELECT idgen.read_horizon()"
HORIZON_UUID = "SELECT idgen.read_horizon_uuid()"
PAGE = "SELECT id, payload FROM outbox WHERE id > %s AND id < %s ORDER BY id LIMIT %s"


def read_page(conn, last, limit=500, query=PAGE, horizon=HORIZON, repeatable_read=False):
    """The rows above `last` and below the horizon, in ID order (at most `limit`), and the new
    `last`. `conn` is in autocommit mode: the horizon's statement is a transaction of its own,
    and the page's snapshot is taken after it."""
    h = conn.execute(horizon).fetchone()[0]
    if repeatable_read:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    try:
        rows = conn.execute(query, (last, h, limit)).fetchall()
    finally:
        if repeatable_read:
            conn.execute("COMMIT")
    return rows, (rows[-1][0] if rows else last)


def read_page_standby(primary, standby, last, limit=500, query=PAGE, horizon=HORIZON, timeout_s=60):
    """The same page, read on a physical standby. A standby cannot know the horizon (it does not
    see the primary's open transactions; read_horizon() is refused there with 25006), so take it
    on the primary, then the primary's WAL insert position: every transaction below the horizon
    had written its commit record before that position. Read on the standby once it has replayed
    past it. `primary` and `standby` are in autocommit mode."""
    h = primary.execute(horizon).fetchone()[0]
    lsn = primary.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()[0]
    give_up = time.monotonic() + timeout_s
    while not standby.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)).fetchone()[0]:
        if time.monotonic() > give_up:
            raise TimeoutError(f"the standby has not replayed up to {lsn} in {timeout_s} s")
        time.sleep(0.01)
    rows = standby.execute(query, (last, h, limit)).fetchall()
    return rows, (rows[-1][0] if rows else last)


def min_horizon(conns, horizon=HORIZON):
    """Several nodes writing one table: the smallest of their horizons, taken before the page's
    snapshot. Read on a node that has all of their rows (the node itself, or a subscriber of
    their logical replication once each node's horizon has arrived: `read_page_nodes`)."""
    return min(c.execute(horizon).fetchone()[0] for c in conns)


NUDGE = "SELECT snowflake_next()"  # uuidv7_next() for read_horizon_uuid()
MARK = ("INSERT INTO relay_marker (node, seq) VALUES (%s, 1) "
        "ON CONFLICT (node) DO UPDATE SET seq = relay_marker.seq + 1 RETURNING seq")


def read_page_nodes(writers, reader, last, limit=500, query=PAGE, horizon=HORIZON, timeout_s=60):
    """Several nodes (`writers`, a list of (node number, connection)) write the table and publish
    it, with a table `relay_marker (node int PRIMARY KEY, seq bigint)`, to a subscriber `reader`
    (logical replication). The page is read on the subscriber below the smallest horizon of the
    writers, once each writer's marker, moved after its horizon was taken, has arrived: a
    subscription applies a node's transactions in their commit order, so every transaction of
    that node below its horizon, which had ended before the horizon was taken, arrived first.
    A node's horizon moves only when it makes IDs, so a node that has stopped writing would hold
    the others' newer rows back: each node first makes one ID (a gap, never used), which moves
    its horizon up to its clock."""
    for _, c in writers:
        c.execute(NUDGE)
    h = min_horizon([c for _, c in writers], horizon)
    marks = [(node, c.execute(MARK, (node,)).fetchone()[0]) for node, c in writers]
    give_up = time.monotonic() + timeout_s
    for node, seq in marks:
        while (reader.execute("SELECT coalesce((SELECT seq FROM relay_marker WHERE node = %s), 0)", (node,))
               .fetchone()[0] < seq):
            if time.monotonic() > give_up:
                raise TimeoutError(f"node {node}'s marker {seq} has not arrived in {timeout_s} s")
            time.sleep(0.01)
    rows = reader.execute(query, (last, h, limit)).fetchall()
    return rows, (rows[-1][0] if rows else last)


def relay(conninfo, handle, last=0, idle_s=0.2):
    with psycopg.connect(conninfo, autocommit=True) as conn:
        while True:
            rows, last = read_page(conn, last)
            for row in rows:
                handle(row)
            if not rows:
                time.sleep(idle_s)


if __name__ == "__main__":
    relay(sys.argv[1], lambda row: print(json.dumps({"id": str(row[0]), "payload": row[1]}), flush=True))
