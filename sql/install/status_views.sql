-- The status views over the functions of src/status.rs and src/node/horizon.rs.
CREATE VIEW idgen.layouts AS SELECT * FROM idgen_internal.layout_catalog();
CREATE VIEW idgen.status AS SELECT * FROM idgen_internal.node_status();
CREATE VIEW idgen.streams AS SELECT * FROM idgen_internal.stream_status();
COMMENT ON VIEW idgen.layouts IS 'Named bit layouts for Snowflake IDs, this node''s first: unit, epoch, bits per field, capacity, years of range.';
COMMENT ON VIEW idgen.status IS 'This node''s Snowflake generator: layout, worker id and its source, last ID, drift from the wall clock, durable mark, counters.';
COMMENT ON VIEW idgen.streams IS 'This node''s clock streams, a row each: Snowflake IDs, message IDs, UUIDv7s (and ULIDs). Capacity, last tick, drift from the wall clock, how far the durable mark covers, counters.';
CREATE VIEW idgen.read_horizon_holders AS
SELECT h.kind, h.stream, h.pid,
       coalesce(h.transaction::text::xid, a.backend_xid) AS transaction,
       p.gid, h.oldest_id, h.oldest_id_time,
       coalesce(a.xact_start, p.prepared) AS since
FROM idgen_internal.read_horizon_holders() AS h
LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid = h.pid
LEFT JOIN pg_catalog.pg_prepared_xacts AS p ON p.transaction = h.transaction::text::xid;
CREATE VIEW idgen.refusals AS SELECT * FROM idgen_internal.refusal_counts();
COMMENT ON VIEW idgen.refusals IS 'How often this node refused to make an ID since the server started, per stream (snowflake, msgid, uuidv7) and reason (a fixed set: standby, mark_unreadable, layout_refused, upgraded_without_mark, other_system, worker_id_unset, clock_behind, sequence_exhausted, before_epoch, layout_exhausted, mark_not_written, lease_missing, lease_lapsed, lease_ceiling); every pair has a row, zero included.';
COMMENT ON COLUMN idgen.refusals.stream IS 'snowflake, msgid or uuidv7.';
COMMENT ON COLUMN idgen.refusals.reason IS 'Why, from a fixed set (a label of a metric: never renamed).';
COMMENT ON COLUMN idgen.refusals.refusals IS 'Calls for IDs of the stream refused for that reason since the server started (a refused batch counts once, whatever its size).';
