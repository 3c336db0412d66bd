"""An outbox relay that pages by ID and never misses a row committed late (README, "Reading new
rows in ID order").

The table is written by the application, its key made by the database:

    CREATE TABLE outbox (id bigint PRIMARY KEY DEFAULT snowflake_next(), payload jsonb);

The relay remembers the largest ID it has passed on (`last`) and reads, page after page, the rows
above it and below this node's read horizon: every ID below the horizon belongs to a transaction
that has ended, so no row can later appear below what was read. The horizon is taken in a
statement of its own, before the snapshot the page is read with; in REPEATABLE READ, before
BEGIN. On a physical standby: `read_page_standby`. Several nodes writing the table (logical
replication, Citus): the smallest horizon of the nodes that write it (`min_horizon`).

Run: python outbox_relay.py "host=... dbname=..."   prints each row as a JSON line, forever.
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
    snapshot (on a node that sees every node's rows, e.g. through logical replication, only
    once they have arrived: read there after each node's horizon has been replicated)."""
    return min(c.execute(horizon).fetchone()[0] for c in conns)


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
