-- Comments for \dx+ and \df+: every function and view says what it is for.
COMMENT ON FUNCTION snowflake_next() IS
  'Next Snowflake ID of this node: unique across backends, restarts, crashes and clock steps; strictly increasing per node. Use as DEFAULT snowflake_next().';
COMMENT ON FUNCTION snowflake_next_batch(integer) IS
  'n Snowflake IDs at once (1 to 10000000), ascending.';
COMMENT ON FUNCTION id_decode(bigint) IS
  'Takes a Snowflake ID apart with this node''s layout: time, worker id, sequence and the layout''s other fields.';
COMMENT ON FUNCTION id_decode(bigint, text) IS
  'Takes a Snowflake ID apart with a named layout (twitter, sonyflake, instagram, ...) or a layout spec.';
COMMENT ON FUNCTION id_timestamp(bigint) IS
  'The time inside a Snowflake ID (start of its tick), with this node''s layout.';
COMMENT ON FUNCTION id_timestamp(bigint, text) IS
  'The time inside a Snowflake ID, with a named layout or layout spec.';
COMMENT ON FUNCTION id_from_timestamp(timestamptz) IS
  'The smallest ID of an instant with this node''s layout: WHERE id >= id_from_timestamp(now() - interval ''1 day'') is an index range scan.';
COMMENT ON FUNCTION id_from_timestamp(timestamptz, text) IS
  'The smallest ID of an instant with a named layout or layout spec.';
COMMENT ON FUNCTION idgen.layout_catalog() IS
  'Rows of the idgen.layouts view.';
COMMENT ON FUNCTION idgen.node_status() IS
  'The row of the idgen.status view.';
