#!/usr/bin/env bash
# UUIDv7 and ULIDs from the node's clock stream, tried the way the Snowflake tests try IDs, on a
# real server whose clock libfaketime moves:
#   - 8 sessions at once: strictly increasing within each statement, all distinct, and in real-time
#     order across sessions (a UUID made after another one was returned, in any backend, is larger);
#     version 7 and the RFC variant on every UUID; a ULID from ulid_next() is the same stream;
#   - the clock steps back 5 s: UUIDs go on above the earlier ones; 1 h back: refused (55000);
#   - kill -9 of a backend mid-run, an immediate stop with the clock 30 s back, and a clean stop
#     with the clock 30 s back: every UUID after is above every UUID before;
#   - a UUID-only burst past any reservation Snowflake IDs made: its own reservations carry the
#     durable mark;
#   - independent parsers agree on the time of 10,000 UUIDs: Python's uuid module (version,
#     variant, top 48 bits) and, from PyPI, uuid-utils (a UUIDv7 implementation) and python-ulid
#     (the ULID spelling); the PyPI part is skipped, saying why, when PyPI cannot be reached; on
#     PostgreSQL 18, its own uuid_extract_timestamp() and uuidv7() against ours.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
CLOCK="$WORK/uuidv7.faketime"
VENV=/var/tmp/pg_idgen_clients/uuid
echo "+0" | as_pg tee "$CLOCK" >/dev/null
setclock() { echo "$1" | as_pg tee "$CLOCK" >/dev/null; }
cluster_init uuidv7 $PORT "idgen.worker_id = 3"
cluster_start_faketime uuidv7 "$CLOCK"
trap 'cluster_stop uuidv7 immediate' EXIT
q $PORT "CREATE EXTENSION pg_idgen;
         CREATE TABLE seen (phase text, id uuid);
         CREATE TABLE conc (session int, n int, before timestamptz, id uuid, after timestamptz)"

first=$(q $PORT "SELECT uuidv7_next()")
check "a node that made only UUIDv7s shows its durable mark, above its first UUIDv7" eq \
  "$(q $PORT "SELECT persisted_mark > uuidv7_timestamp('$first') FROM idgen.status")" t

phase "8 sessions at once"
for s in $(seq 1 8); do
  # The target list is evaluated left to right: before, the UUID, after.
  q $PORT "INSERT INTO conc SELECT $s, g, clock_timestamp(), uuidv7_next(), clock_timestamp()
           FROM generate_series(1, 50000) g" &
done
wait
check "400,000 UUIDs from 8 sessions, all distinct" eq \
  "$(q $PORT "SELECT count(*) || ' ' || count(DISTINCT id) FROM conc")" "400000 400000"
check "strictly increasing within each session" eq "$(q $PORT "
  SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY session ORDER BY n) AS prev FROM conc) x
   WHERE id <= prev")" 0
# Real-time order across sessions: no UUID is smaller than one whose call had ended before its
# own call began. For each UUID, the earliest end among all larger UUIDs must not precede its start.
check "in real-time order across sessions (a later call never gets a smaller UUID)" eq "$(q $PORT "
  SELECT count(*) FROM (SELECT before, min(after) OVER (ORDER BY id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS later_end
                          FROM conc) x
   WHERE later_end < before")" 0
check "the sessions overlapped (the order check compared calls of different backends)" eq "$(q $PORT "
  SELECT count(DISTINCT session) > 1 FROM (SELECT session, rank() OVER (ORDER BY id) AS r FROM conc) x WHERE r <= 200000")" t
check "version 7 and variant 10 on every UUID" eq "$(q $PORT "
  SELECT count(*) FROM conc WHERE substr(id::text, 15, 1) <> '7' OR substr(id::text, 20, 1) NOT IN ('8', '9', 'a', 'b')")" 0
# The last 64 bits are the variant, 3 counter bits and 59 random bits, each draw used once (two
# of 400,000 equal by chance: about 1 in 7 million).
check "no two UUIDs share their random bits" eq "$(q $PORT "SELECT count(DISTINCT substr(id::text, 20)) FROM conc")" 400000
check "the time inside each UUID lies within its call (ms)" eq "$(q $PORT "
  SELECT count(*) FROM conc
   WHERE uuidv7_timestamp(id) < date_trunc('milliseconds', before) OR uuidv7_timestamp(id) > after")" 0
check "ULIDs come from the same stream: above every UUID before, below every one after" eq "$(q $PORT "
  WITH a AS (SELECT uuidv7_next() AS u), b AS (SELECT ulid_to_uuid(ulid_next()) AS u), c AS (SELECT uuidv7_next() AS u)
  SELECT (SELECT id FROM conc ORDER BY id DESC LIMIT 1) < a.u AND a.u < b.u AND b.u < c.u FROM a, b, c")" t
# Per row, ulid_next() takes uuidv7_next()'s fast path and writes its text itself (pg/fast_entry.rs).
check "100,000 ULIDs of one statement: 26 characters each, strictly increasing, each a UUIDv7" eq "$(q $PORT "
  SELECT count(*), count(*) FILTER (WHERE length(u) <> 26 OR u COLLATE \"C\" <= prev COLLATE \"C\"
                                      OR substr(ulid_to_uuid(u)::text, 15, 1) <> '7' OR uuid_to_ulid(ulid_to_uuid(u)) <> u)
    FROM (SELECT u, lag(u) OVER (ORDER BY g) AS prev FROM (SELECT g, ulid_next() AS u FROM generate_series(1, 100000) g) s) t")" "100000|0"

take() { q $PORT "INSERT INTO seen SELECT '$1', uuidv7_next() FROM generate_series(1, ${2:-20000})"; }
# PostgreSQL before 18 has no min(uuid) and max(uuid): the first and last by ORDER BY.
lowest() { echo "(SELECT id FROM seen WHERE $1 ORDER BY id LIMIT 1)"; }
highest() { echo "(SELECT id FROM seen WHERE $1 ORDER BY id DESC LIMIT 1)"; }
above_all_before() {
  q $PORT "SELECT $(lowest "phase = '$1'") > $(highest "phase <> '$1'")
              AND $(lowest "phase = '$1'") > (SELECT id FROM conc ORDER BY id DESC LIMIT 1)"
}

phase "clock steps"
take start
setclock "-5s"
take back5
check "5 s back: UUIDs go on above the earlier ones" eq "$(above_all_before back5)" t
check "5 s back: a WARNING names UUIDv7s" grep -q "UUIDv7s go on from the last one" "$(cluster_dir uuidv7)/server.log"
setclock "-1h"
err=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -A -t -c "\set VERBOSITY verbose" -c "SELECT uuidv7_next()" 2>&1 || true)
check "1 h back: uuidv7_next() refuses with 55000, naming UUIDv7s" grep -q "55000: the system clock is [0-9]* ms behind the last UUIDv7" <<<"$err"
check "1 h back: idgen.streams shows the UUIDv7 stream an hour ahead of the clock, and the steps back" eq \
  "$(q $PORT "SELECT drift_ms > 3500000, backward_steps > 0, ids_issued >= 440000 FROM idgen.streams WHERE stream = 'uuidv7'")" "t|t|t"
check "  and idgen.status names it as the problem" grep -q "the logical clock of uuidv7 is [0-9]* ms ahead of the wall clock" \
  <<<"$(q $PORT "SELECT problem FROM idgen.status")"
setclock "+0"
take after1h
check "clock restored: UUIDs go on above all earlier ones" eq "$(above_all_before after1h)" t

phase "kill -9 and restarts with the clock behind"
victim=$(kill_mid_statement $PORT "INSERT INTO seen SELECT 'dying', uuidv7_next() FROM generate_series(1, 50000000)")
check "found the backend to kill" test -n "$victim"
take afterkill
check "after kill -9: UUIDs above all earlier ones" eq "$(above_all_before afterkill)" t

# UUIDs alone, 8 million of them (a few seconds, far past any reservation of the other streams):
# their own reservations must move the durable mark, or the restart below would repeat them.
q $PORT "INSERT INTO seen SELECT 'burst', u FROM uuidv7_next_batch(8000000) u"
cluster_stop uuidv7 immediate
setclock "-30s"
cluster_start_faketime uuidv7 "$CLOCK"
wait_ready $PORT
take afterimmediate 1000
check "after an immediate stop and the clock 30 s back: UUIDs above all earlier ones" eq "$(above_all_before afterimmediate)" t
check "  and above the UUID-only burst" eq "$(q $PORT "SELECT $(lowest "phase = 'afterimmediate'") > $(highest "phase = 'burst'")")" t

cluster_stop uuidv7 fast
check "a clean stop records the last UUIDv7 counter in the mark" grep -q "^stopped_uuidv7_last=[1-9]" "$(cluster_dir uuidv7)/pg_idgen.mark"
setclock "-60s"
cluster_start_faketime uuidv7 "$CLOCK"
wait_ready $PORT
take afterclean 1000
check "after a clean stop and the clock 60 s back: UUIDs above all earlier ones" eq "$(above_all_before afterclean)" t
check "no UUID repeats across all phases" eq "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM seen")" 0
setclock "+0"

phase "independent parsers"
if [ "$(q $PORT "SHOW server_version_num")" -ge 180000 ]; then
  check "PostgreSQL 18: its uuid_extract_timestamp() reads ours, and uuidv7_timestamp() reads its uuidv7()" eq "$(q $PORT "
    SELECT count(*) FROM (SELECT uuidv7_next() AS a, uuidv7() AS b FROM generate_series(1, 10000)) x
     WHERE date_trunc('milliseconds', uuid_extract_timestamp(a)) <> uuidv7_timestamp(a)
        OR date_trunc('milliseconds', uuid_extract_timestamp(b)) <> uuidv7_timestamp(b)")" 0
fi
sample="$WORK/uuidv7_sample.csv"
q $PORT "COPY (SELECT u, uuid_to_ulid(u), (extract(epoch FROM uuidv7_timestamp(u)) * 1000)::bigint
               FROM uuidv7_next_batch(5000) u
              UNION ALL
              SELECT ulid_to_uuid(l), l, (extract(epoch FROM ulid_timestamp(l)) * 1000)::bigint
               FROM (SELECT ulid_next() AS l FROM generate_series(1, 5000)) x)
         TO STDOUT WITH (FORMAT csv)" >"$sample"
check "10,000 rows to compare" eq "$(wc -l <"$sample")" 10000
stdlib=$(python3 - "$sample" <<'EOF'
import csv, sys, uuid
bad = 0
for u, l, ms in csv.reader(open(sys.argv[1])):
    x = uuid.UUID(u)
    if x.version != 7 or x.variant != uuid.RFC_4122 or x.int >> 80 != int(ms):
        bad += 1
print(bad)
EOF
)
check "Python's uuid module: version 7, RFC variant, and the same millisecond, for all 10,000" eq "$stdlib" 0

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import uuid_utils, ulid" 2>/dev/null; then
  rm -rf "$VENV"
  if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "uuid-utils>=0.10,<2" "python-ulid>=3,<5"; } >"$WORK/pip_uuid.log" 2>&1; then
    echo "  skipped: the PyPI parsers: pip could not install uuid-utils and python-ulid ($(tail -1 "$WORK/pip_uuid.log"))"
    rm -rf "$VENV"
  fi
fi
if [ -x "$VENV/bin/python" ]; then
  echo "  $("$VENV/bin/python" -c "import importlib.metadata as m; print('uuid-utils', m.version('uuid-utils'), '| python-ulid', m.version('python-ulid'))")"
  pypi=$("$VENV/bin/python" - "$sample" <<'EOF'
import csv, sys
import uuid_utils
from ulid import ULID
bad = 0
for u, l, ms in csv.reader(open(sys.argv[1])):
    x = uuid_utils.UUID(u)
    y = ULID.from_str(l)
    if x.version != 7 or x.timestamp != int(ms) or y.milliseconds != int(ms) or str(y.to_uuid()) != u:
        bad += 1
print(bad)
EOF
)
  check "uuid-utils and python-ulid: the same millisecond, and the ULID is the UUID, for all 10,000" eq "$pypi" 0
fi
finish
