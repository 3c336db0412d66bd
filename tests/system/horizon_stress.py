"""Writers and readers of tests/system/read_horizon.sh: 8 writers for DURATION seconds, readers
paging with the recipe of examples/outbox_relay.py (READ COMMITTED by Snowflake ID, REPEATABLE
READ per page by Snowflake ID, READ COMMITTED by UUIDv7) and one paging by `id > last` alone
(the control). Every connection comes back after a crash of the server. Prints one JSON object.

With HZ_STANDBY (the conninfo of a physical standby of the server), two more readers page on
the standby: "standby_id" with the recipe's read_page_standby, and "standby_control", which takes
the horizon on the primary but does not wait for the standby's replay. HZ_READERS (names,
comma-separated) runs only those readers.

With HZ_CRASH_IN_PREPARE=1, one PREPARE TRANSACTION of writer 0 (its first after 5 s) is cut off
where a crash hurts most: gdb stops its backend after the server saved the prepared transaction
(PostPrepare_Twophase) and kills it there, so the server restarts with the transaction prepared and
the client never heard that it was. Every PREPARE that raises still goes to the finisher (which
takes "no such prepared transaction" as done); what is left prepared at the end is read from
pg_prepared_xacts (stuck), not from the script's own list.

Usage: horizon_stress.py CONNINFO DURATION [EXAMPLES_DIR]
"""

import os

import json
import random
import subprocess
import sys
import threading
import time
import uuid

import psycopg

sys.path.insert(0, sys.argv[3] if len(sys.argv) > 3 else "examples")
from outbox_relay import HORIZON, HORIZON_UUID, read_page, read_page_standby  # noqa: E402

CONNINFO, DURATION = sys.argv[1], float(sys.argv[2])
STANDBY = os.environ.get("HZ_STANDBY")
CRASH_IN_PREPARE = os.environ.get("HZ_CRASH_IN_PREPARE") == "1"
WRITERS = 8
started = time.monotonic()
deadline = started + DURATION
lock = threading.Lock()
stats = {"transactions": 0, "committed": 0, "rolled_back": 0, "savepoints_rolled_back": 0,
         "prepared": 0, "prepared_committed": 0, "prepared_rolled_back": 0, "ids_not_inserted": 0,
         "errors": 0, "reconnects": 0, "prepare_raised": 0, "prepared_without_reply": 0}
pending = []  # (due, gid, commit, raised): raised, its PREPARE raised (the server may have saved it)
crash = {"armed": False, "gid": None, "gdb": ""}
writers_done = threading.Event()
final = {}  # set once every write has ended: the largest id and u


def count(key, n=1):
    with lock:
        stats[key] += n


error_texts = {}  # who: the distinct errors (their first lines) each kind of session met, for the output


def note_error(who, e):
    count("errors")
    text = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    print(f"{who}: {text}", file=sys.stderr, flush=True)
    with lock:
        texts = error_texts.setdefault(who, [])
        if text not in texts and len(texts) < 10:
            texts.append(text)


def connect(name, until, conninfo=CONNINFO):
    """A connection, retried while the server restarts (until `until`)."""
    while True:
        try:
            # A statement blocked for a minute is an error that names itself (error_texts).
            return psycopg.connect(conninfo, autocommit=True, application_name=name, connect_timeout=5,
                                   options="-c statement_timeout=60s")
        except psycopg.OperationalError:
            if time.monotonic() > until:
                raise
            time.sleep(0.2)


def arm_crash_in_prepare(conn, gid):
    """gdb on this connection's backend: at PostPrepare_Twophase (the prepared transaction is in
    the WAL, flushed; the client has not heard) it kills the backend with SIGKILL. Returns once gdb
    holds the backend, so the PREPARE sent next runs with the breakpoint in place."""
    pid = conn.info.backend_pid
    gdb = subprocess.Popen(["gdb", "-nx", "-batch", "-p", str(pid), "-ex", "break PostPrepare_Twophase",
                            "-ex", "continue", "-ex", "signal SIGKILL"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    limit = time.monotonic() + 60
    while time.monotonic() < limit:  # attached: the backend is stopped until gdb has its breakpoint
        try:
            with open(f"/proc/{pid}/status") as f:
                if any(line.startswith("TracerPid:") and line.split()[1] != "0" for line in f):
                    break
        except OSError:
            break
        time.sleep(0.05)

    def reap():
        try:
            crash["gdb"] = gdb.communicate(timeout=120)[0][-2000:]
        except subprocess.TimeoutExpired:
            gdb.kill()
            crash["gdb"] = "gdb had not ended after 120 s"
    threading.Thread(target=reap, daemon=True).start()
    crash.update(armed=True, gid=gid)


def writer(i):
    rnd = random.Random(i)
    conn = connect(f"hz-writer-{i}", deadline + 60)
    n = 0
    while time.monotonic() < deadline:
        n += 1
        try:
            conn.execute("BEGIN")
            count("transactions")
            if rnd.random() < 0.15:
                k = rnd.randint(1, 20)
                conn.execute("SELECT snowflake_next(), uuidv7_next() FROM generate_series(1, %s)", (k,))
                count("ids_not_inserted", k)
            for _ in range(rnd.choice([1, 1, 2, 3])):
                k = rnd.randint(1, 50)
                conn.execute("INSERT INTO outbox (writer, n) SELECT %s, g FROM generate_series(1, %s) g", (i, k))
            if rnd.random() < 0.2:
                conn.execute("SAVEPOINT s")
                conn.execute("INSERT INTO outbox (writer, n) SELECT %s, -g FROM generate_series(1, %s) g",
                             (i, rnd.randint(1, 20)))
                conn.execute("ROLLBACK TO SAVEPOINT s")
                count("savepoints_rolled_back")
            time.sleep(rnd.uniform(0, 0.3))
            r = rnd.random()
            if r < 0.10:
                conn.execute("ROLLBACK")
                count("rolled_back")
            elif r < 0.16:
                gid = f"hz-{i}-{n}"
                due, commit = time.monotonic() + rnd.uniform(1, 4), rnd.random() < 0.8
                if CRASH_IN_PREPARE and i == 0 and not crash["armed"] and time.monotonic() > started + 5:
                    arm_crash_in_prepare(conn, gid)
                try:
                    conn.execute(f"PREPARE TRANSACTION '{gid}'")
                except psycopg.Error:
                    # Saved or not, the client cannot tell: the finisher ends it, or learns that
                    # there is nothing to end.
                    count("prepare_raised")
                    with lock:
                        pending.append((due, gid, commit, True))
                    raise
                count("prepared")
                with lock:
                    pending.append((due, gid, commit, False))
            else:
                conn.execute("COMMIT")
                count("committed")
        except psycopg.Error as e:
            note_error("writer", e)
            if conn.broken or conn.closed:
                count("reconnects")
                time.sleep(0.2)
                conn = connect(f"hz-writer-{i}", deadline + 60)
            else:
                try:
                    conn.execute("ROLLBACK")
                except psycopg.Error:
                    pass
    conn.close()


def finisher():
    """COMMIT PREPARED / ROLLBACK PREPARED, seconds after each PREPARE, from another session. One
    that still fails 120 s after the writers' end is left, and named in the output (stuck)."""
    conn = connect("hz-finisher", deadline + 60)
    while True:
        if writers_done.is_set() and time.monotonic() > deadline + 120:
            break
        done_writing = writers_done.is_set()
        with lock:
            due = [p for p in pending if done_writing or p[0] <= time.monotonic()]
        for p in due:
            _, gid, commit, raised = p
            try:
                conn.execute(f"{'COMMIT' if commit else 'ROLLBACK'} PREPARED '{gid}'")
                count("prepared_committed" if commit else "prepared_rolled_back")
                if raised:
                    count("prepared_without_reply")
                with lock:
                    pending.remove(p)
            except psycopg.errors.UndefinedObject:
                with lock:  # its PREPARE never completed (the server crashed under it)
                    pending.remove(p)
            except psycopg.Error as e:
                note_error("finisher", e)
                if conn.broken or conn.closed:
                    count("reconnects")
                    conn = connect("hz-finisher", deadline + 120)
        with lock:
            if done_writing and not pending:
                break
        time.sleep(0.05)
    conn.close()


READERS = {
    "rc_id": dict(query="SELECT id FROM outbox WHERE id > %s AND id < %s ORDER BY id LIMIT %s",
                  horizon=HORIZON, repeatable_read=False, start=0, key="id"),
    "rr_id": dict(query="SELECT id FROM outbox WHERE id > %s AND id < %s ORDER BY id LIMIT %s",
                  horizon=HORIZON, repeatable_read=True, start=0, key="id"),
    "rc_uuid": dict(query="SELECT u FROM outbox WHERE u > %s AND u < %s ORDER BY u LIMIT %s",
                    horizon=HORIZON_UUID, repeatable_read=False,
                    start=uuid.UUID(int=0), key="u"),
    # The control: `id > last` alone, READ COMMITTED.
    "control_id": dict(query="SELECT id FROM outbox WHERE id > %s AND %s::bigint IS NOT NULL ORDER BY id LIMIT %s",
                       horizon="SELECT 0::bigint", repeatable_read=False, start=0, key="id"),
}
if STANDBY:
    READERS["standby_id"] = dict(query=READERS["rc_id"]["query"], horizon=HORIZON, start=0, key="id",
                                 standby=True, wait=True)
    READERS["standby_control"] = dict(query=READERS["rc_id"]["query"], horizon=HORIZON, start=0, key="id",
                                      standby=True, wait=False)
if os.environ.get("HZ_READERS"):
    READERS = {name: READERS[name] for name in os.environ["HZ_READERS"].split(",")}
seen = {name: [] for name in READERS}
pages = {name: 0 for name in READERS}


def standby_page(primary, standby, last, r):
    """read_page_standby, or (the control) the same without waiting for the standby's replay."""
    if r["wait"]:
        return read_page_standby(primary, standby, last, 200, r["query"], r["horizon"])
    h = primary.execute(r["horizon"]).fetchone()[0]
    rows = standby.execute(r["query"], (last, h, 200)).fetchall()
    return rows, (rows[-1][0] if rows else last)


def reader(name):
    r = READERS[name]
    conn = connect(f"hz-reader-{name}", deadline + 60)
    standby = connect(f"hz-reader-{name}", deadline + 60, STANDBY) if r.get("standby") else None
    last = r["start"]
    while True:
        try:
            if standby:
                rows, new_last = standby_page(conn, standby, last, r)
            else:
                rows, new_last = read_page(conn, last, 200, r["query"], r["horizon"], r["repeatable_read"])
        except psycopg.Error as e:
            note_error(f"reader {name}", e)
            if conn.broken or conn.closed:
                count("reconnects")
                conn = connect(f"hz-reader-{name}", time.monotonic() + 120)
            if standby and (standby.broken or standby.closed):
                count("reconnects")
                standby = connect(f"hz-reader-{name}", time.monotonic() + 120, STANDBY)
            if time.monotonic() > deadline + 150:  # an error every time: it ends too, named above
                break
            time.sleep(0.02)
            continue
        pages[name] += 1
        seen[name].extend(row[0] for row in rows)
        last = new_last
        if not rows:
            with lock:
                end = final.get(r["key"])
            if end == "empty" or (end is not None and last >= end) or time.monotonic() > deadline + 150:
                break
            time.sleep(0.02)
    conn.close()
    if standby:
        standby.close()


threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
fin = threading.Thread(target=finisher)
rthreads = [threading.Thread(target=reader, args=(name,)) for name in READERS]
for t in threads + [fin] + rthreads:
    t.start()
for t in threads:
    t.join()
writers_done.set()
fin.join()
conn = connect("hz-check", time.monotonic() + 120)
# What is still prepared, as the server has it (the finisher's last error is in error_texts).
stats["stuck"] = [r[0] for r in conn.execute("SELECT gid FROM pg_prepared_xacts ORDER BY gid")]
if CRASH_IN_PREPARE:
    stats["crash_in_prepare"] = {"gid": crash["gid"], "gdb_said_breakpoint": "Breakpoint 1, " in crash["gdb"],
                                 "gdb": crash["gdb"][-300:]}
ids = [r[0] for r in conn.execute("SELECT id FROM outbox ORDER BY id")]
us = [r[0] for r in conn.execute("SELECT u FROM outbox ORDER BY u")]
with lock:
    final["id"] = ids[-1] if ids else "empty"
    final["u"] = us[-1] if us else "empty"
for t in rthreads:
    t.join(timeout=120)
truth = {"id": ids, "u": us}
out = dict(stats, rows=len(ids), error_texts=error_texts)
for name, r in READERS.items():
    got = seen[name]
    want = set(truth[r["key"]])
    out[name] = {"read": len(got), "distinct": len(set(got)), "missed": len(want - set(got)),
                 "not_committed": len(set(got) - want), "in_order": got == sorted(got), "pages": pages[name],
                 "exactly_once": sorted(got) == truth[r["key"]]}
print(json.dumps(out))
