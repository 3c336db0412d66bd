#!/usr/bin/env bash
# docs/guarantees.md, guarantee 3 across a change of idgen.layout between restarts: the mark bounds the time of
# earlier IDs, not their bits, so the node keeps the layouts it made IDs with
# (pg_idgen.layouts) and accepts a new one only when its IDs can be put above all of them.
#   - worker/sequence bits moved, then an earlier epoch (twitter): accepted, IDs go on above;
#   - back to a later epoch (pg_idgen after twitter): refused, snowflake_next() raises 55000
#     naming the change, the server and the other generators stay up, the refusal survives a
#     crash, and going back to the last layout works again;
#   - the control: with the history file deleted, the same change hands out IDs below old ones;
#   - a damaged mark or history file disables Snowflake IDs with a clear ERROR.
source "$(dirname "${BASH_SOURCE[0]}")/../helpers/assert.sh"
PORT=$(port 0)
cluster_init layout $PORT
trap 'cluster_stop layout immediate' EXIT
dir=$(cluster_dir layout)
history="$dir/pg_idgen.layouts"
cluster_start layout
q $PORT "CREATE EXTENSION pg_idgen; CREATE TABLE t (id bigint PRIMARY KEY, phase text);
         SELECT idgen.segment_create('order')" >/dev/null
gen() { q $PORT "INSERT INTO t SELECT snowflake_next(), '$1' FROM generate_series(1, 20000)"; }
above() { # above PHASE: every ID of PHASE is above every earlier one
  q $PORT "SELECT (SELECT min(id) FROM t WHERE phase = '$1') > (SELECT max(id) FROM t WHERE phase < '$1')"
}
restart_with() {
  cluster_stop layout
  cluster_conf layout "idgen.layout = '$1'"
  cluster_start layout
}
gen a
check "the first start recorded the layout" grep -q '^current 0 unit=ms epoch=1704067200000 time=41' "$history"

restart_with "pg_idgen worker=12 sequence=10"
gen b
check "worker and sequence bits moved: IDs go on above all earlier ones" eq "$(above b)" t
check "the change was logged" grep -q 'idgen.layout changed from .* Snowflake IDs start at' "$dir/server.log"
check "the history keeps the earlier layout" eq "$(grep -c '^past ' "$history")" 1

restart_with twitter
gen c
check "an earlier epoch (twitter): IDs go on above all earlier ones" eq "$(above c)" t

cp "$history" "$WORK/layout.history.before"
restart_with pg_idgen
err=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -v VERBOSITY=verbose -c "SELECT snowflake_next()" 2>&1 || true)
check "back to a later epoch: snowflake_next() is refused with 55000" grep -q '^ERROR:  55000: snowflake IDs are disabled: idgen.layout changed from' <<<"$err"
check "the ERROR names the presets as the operator wrote them" grep -q 'idgen.layout changed from "twitter" to "pg_idgen"' <<<"$err"
check "the server log has it as a WARNING" grep -q 'WARNING:  pg_idgen: idgen.layout changed from "twitter" to "pg_idgen"' "$dir/server.log"
check "the ERROR says why and what to do" eq \
  "$(grep -c 'stay below IDs made before until\|HINT:  Set idgen.layout back to the layout of the "current" line' <<<"$err")" 2
check "the server and the other generators stay up" eq \
  "$(q $PORT "SELECT segment_next('order') > 0 AND length(msgid_next(1, 'x')) = 19")" t
check "idgen.status shows the problem" grep -q 'idgen.layout changed' <<<"$(q $PORT "SELECT problem FROM idgen.status")"
# A session whose message IDs and UUIDv7s passed every other check first is still refused on
# every Snowflake ID: it never makes a Snowflake generator, without which the per-row fast path
# (pg/fast_entry.rs) gives up.
err=$(psql -h 127.0.0.1 -p $PORT -U postgres -X -q -v VERBOSITY=verbose \
  -c "SELECT length(msgid_next(1, 'x')), uuidv7_next() IS NOT NULL" \
  -c "SELECT snowflake_next()" -c "SELECT snowflake_next() FROM generate_series(1, 3)" 2>&1 || true)
check "after other IDs in the same session, snowflake_next() is still refused, every time" \
  eq "$(grep -c '^ERROR:  55000: snowflake IDs are disabled' <<<"$err")" 2
check "the refused layout did not touch the history" cmp -s "$history" "$WORK/layout.history.before"
cluster_stop layout immediate
cluster_start layout
check "still refused after an immediate stop" grep -q 'snowflake IDs are disabled' <<<"$(q $PORT "SELECT snowflake_next()" 2>&1 || true)"

restart_with twitter
gen d
check "back to the last layout: IDs go on above all earlier ones" eq "$(above d)" t
check "no ID repeats across the four layouts" eq "$(q $PORT "SELECT count(*) - count(DISTINCT id) FROM t")" 0

# The control: without the history the node cannot know, and the change undercuts old IDs.
cluster_stop layout
as_pg rm "$history"
cluster_conf layout "idgen.layout = 'pg_idgen'"
cluster_start layout
check "control: with pg_idgen.layouts deleted, the same change makes IDs below the old ones" eq \
  "$(q $PORT "SELECT snowflake_next() < (SELECT max(id) FROM t)")" t

# A damaged mark or layout record disables Snowflake IDs with a clear ERROR rather than risk
# repeats; the rest of the server works.
disabled() { q $PORT "SELECT snowflake_next()" 2>&1 || true; }
tear() { # tear FILE: restart with FILE damaged
  cluster_stop layout
  echo torn | as_pg tee "$1" >/dev/null
  cluster_start layout
}
as_pg cp "$dir/pg_idgen.mark" "$WORK/layout.mark.good"
tear "$dir/pg_idgen.mark"
check "a damaged pg_idgen.mark: 55000 naming the file" grep -q \
  'snowflake IDs are disabled: the durable mark could not be read: .*pg_idgen.mark: not a pg_idgen mark file' <<<"$(disabled)"
check "a damaged pg_idgen.mark: segments still work" test "$(q $PORT "SELECT segment_next('order')")" -gt 0
as_pg cp "$WORK/layout.mark.good" "$dir/pg_idgen.mark"
tear "$history"
check "a damaged pg_idgen.layouts: 55000 naming the file" grep -q \
  'snowflake IDs are disabled: .*pg_idgen.layouts: not a pg_idgen layout history' <<<"$(disabled)"
check "a damaged pg_idgen.layouts: message IDs still work" eq "$(q $PORT "SELECT length(msgid_next(1, 'x'))")" 19
finish
