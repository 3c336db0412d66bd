#!/usr/bin/env python3
"""An app server that runs its own Snowflake generator and leases its worker id from pg_idgen.

    python3 examples/app_server.py "host=127.0.0.1 port=5499 dbname=postgres user=postgres" \
        --code "10.0.0.7:8080#a4:5e:60:b2:1c:0f" --seconds 10

It follows the lease contract of idgen.worker_acquire / worker_heartbeat / worker_release:
  1. lease a worker id (autocommit: the lease is committed before it is used);
  2. make IDs only with times after the lease's start_after, and only while the lease is valid
     by a monotonic clock (sent time of the last successful renewal + ttl);
  3. renew three times per ttl, reporting the time of the last ID made (last_ts);
  4. a renewal that fails with SQLSTATE 55000 means the lease is lost: stop at once;
  5. give the lease back with last_ts on the way out.
IDs use the twitter layout (41 bits of ms since 2010-11-04, 10 bits of worker id, 12 of sequence),
so SELECT * FROM id_decode(id, 'twitter') takes them apart. With --out FILE it writes every ID.
"""

import argparse
import datetime
import signal
import sys
import threading
import time

import psycopg2

TWITTER_EPOCH_MS = 1288834974657
SEQUENCE_BITS, WORKER_BITS = 12, 10


class Lease:
    def __init__(self, conninfo, code, ttl_s, min_id, max_id):
        self.conn = psycopg2.connect(conninfo)
        self.conn.autocommit = True  # worker_acquire/heartbeat refuse to run in a transaction block
        self.code, self.ttl_s = code, ttl_s
        sent = time.monotonic()
        with self.conn.cursor() as cur:
            cur.execute(
                "SELECT worker_id, lease, start_after FROM idgen.worker_acquire(%s, make_interval(secs => %s), %s, %s)",
                (code, ttl_s, min_id, max_id),
            )
            self.worker_id, self.lease, start_after = cur.fetchone()
        self.valid_until = sent + ttl_s
        self.lost = False
        # IDs must be later than every ID of the id's previous holders.
        self.start_after_ms = int(start_after.timestamp() * 1000) if start_after else 0

    def valid(self):
        return not self.lost and time.monotonic() < self.valid_until

    def heartbeat(self, last_ms):
        last_ts = datetime.datetime.fromtimestamp(last_ms / 1000, datetime.timezone.utc) if last_ms else None
        sent = time.monotonic()
        try:
            with self.conn.cursor() as cur:
                cur.execute("SELECT idgen.worker_heartbeat(%s, %s, %s, %s)", (self.worker_id, self.code, last_ts, self.lease))
            self.valid_until = sent + self.ttl_s
        except psycopg2.Error as e:
            if e.pgcode == "55000":  # lease lost: someone else may hold it now
                self.lost = True
            print(f"heartbeat failed: {e.pgerror or e}".strip(), file=sys.stderr)

    def release(self, last_ms):
        last_ts = datetime.datetime.fromtimestamp(last_ms / 1000, datetime.timezone.utc)
        with self.conn.cursor() as cur:
            cur.execute("SELECT idgen.worker_release(%s, %s, %s, %s)", (self.worker_id, self.code, last_ts, self.lease))


class Snowflake:
    """Twitter's algorithm; the clock never goes back below the last ID or start_after."""

    def __init__(self, worker_id, start_after_ms):
        self.worker_id = worker_id
        self.last_ms = max(start_after_ms, 0)
        self.seq = (1 << SEQUENCE_BITS) - 1  # so the first ID moves to a new millisecond
        self.lock = threading.Lock()

    def next(self):
        with self.lock:
            now = int(time.time() * 1000)
            if now > self.last_ms:
                self.last_ms, self.seq = now, 0
            elif self.seq < (1 << SEQUENCE_BITS) - 1:
                self.seq += 1
            else:  # this millisecond is used up (or the clock is behind): borrow the next one
                self.last_ms, self.seq = self.last_ms + 1, 0
            t = self.last_ms - TWITTER_EPOCH_MS
            return (t << (WORKER_BITS + SEQUENCE_BITS)) | (self.worker_id << SEQUENCE_BITS) | self.seq


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("conninfo")
    ap.add_argument("--code", required=True, help="unique per app instance, e.g. ip:port#mac")
    ap.add_argument("--ttl", type=float, default=6.0, help="lease ttl in seconds")
    ap.add_argument("--min-id", type=int, default=0)
    ap.add_argument("--max-id", type=int, default=(1 << WORKER_BITS) - 1)
    ap.add_argument("--seconds", type=float, default=5.0, help="how long to serve")
    ap.add_argument("--out", help="write every ID made to this file")
    args = ap.parse_args()

    lease = Lease(args.conninfo, args.code, args.ttl, args.min_id, args.max_id)
    gen = Snowflake(lease.worker_id, lease.start_after_ms)
    print(f"leased worker id {lease.worker_id} (lease {lease.lease}) as {args.code!r}", flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def renew():
        while not stop.wait(args.ttl / 3):
            lease.heartbeat(gen.last_ms)
            if lease.lost:
                stop.set()

    threading.Thread(target=renew, daemon=True).start()
    out = open(args.out, "w") if args.out else None
    made, deadline = 0, time.monotonic() + args.seconds
    while not stop.is_set() and time.monotonic() < deadline:
        if not lease.valid():  # lapsed or lost: never make an ID that might repeat
            print("lease not valid: stopped making IDs", file=sys.stderr)
            break
        for _ in range(100):  # "requests" served between two checks of the lease
            i = gen.next()
            if out:
                out.write(f"{i}\n")
        made += 100
        time.sleep(0.001)
    stop.set()
    if out:
        out.close()
    if not lease.lost:
        lease.release(gen.last_ms)
    print(f"made {made} IDs with worker id {lease.worker_id}, last at {gen.last_ms} ms", flush=True)
    return 1 if lease.lost else 0


if __name__ == "__main__":
    sys.exit(main())
