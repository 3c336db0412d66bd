-- What pg_idgen is for, in a few statements.
CREATE EXTENSION IF NOT EXISTS pg_idgen;

-- 64-bit, time-ordered keys, unique across backends, restarts and clock steps of this node.
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text);
INSERT INTO orders (item) VALUES ('tea'), ('coffee'), ('cake');
SELECT id, item FROM orders ORDER BY id;

-- Take an ID apart, and read the time back.
SELECT d.* FROM orders o, id_decode(o.id) d ORDER BY o.id LIMIT 1;

-- IDs of the last hour: an index range scan on the primary key.
EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id >= id_from_timestamp(now() - interval '1 hour');

-- Other systems' IDs decode bit for bit: a tweet from New Year's Eve 2019.
SELECT ts, datacenter_id, worker_id, sequence FROM id_decode(1212092628029698048, 'twitter');

-- The layouts this node knows, and how its generator is doing.
SELECT name, unit, time_bits, worker_bits, sequence_bits, ids_per_second, years, js_safe FROM idgen.layouts;
SELECT layout, worker_id, clock_policy, last_id, drift_ms, persisted_mark, ids_issued FROM idgen.status;

-- Segment mode (Tinyid/Leaf): business-typed counters from ranges committed ahead of need.
-- This database hands out the odd invoice numbers; a second one with remainder 0 the even ones.
SELECT idgen.segment_create('invoice', step => 1000, delta => 2, remainder => 1)
 WHERE NOT EXISTS (SELECT 1 FROM idgen.segments WHERE biz_type = 'invoice');
SELECT segment_next('invoice') AS invoice_no FROM generate_series(1, 3);
SELECT * FROM idgen.segment_alloc('invoice');   -- a whole range for a client
SELECT biz_type, max_id, current_step, ids_left, refills_ahead, refills_waited FROM idgen.segment_status;

-- 80-bit message IDs (RongCloud's format): time-ordered text, taken apart again; and short text forms.
SELECT msgid_next(1, 'group:1001') AS msgid FROM generate_series(1, 3);
SELECT * FROM msgid_decode(msgid_next(2, 'room:7'));
SELECT id, id_to_text(id) AS base62, id_to_text(id, 'base32') AS base32 FROM orders ORDER BY id;

-- Worker-id leases for app servers that run their own Snowflake library (raindrop's worker table): the same
-- code gets its id back; heartbeat with the last ID's time; give it back on the way out.
SELECT * FROM idgen.worker_acquire('10.0.0.7:8080#demo', ttl => '30 seconds');
SELECT worker_id, code, state, lease, expires_at FROM idgen.worker_leases;
SELECT idgen.worker_release(w.worker_id, w.code, clock_timestamp(), w.lease) AS released
  FROM idgen.workers w WHERE w.code = '10.0.0.7:8080#demo' AND w.released_at IS NULL;
