-- Run last in the install script: comments on every object, then privileges.

-- id_decode returns one row (all NULL for a NULL ID): tell the planner so.
ALTER FUNCTION id_decode(bigint) ROWS 1;
ALTER FUNCTION id_decode(bigint, text) ROWS 1;

-- Comments for \dx+ and \df+: every function and view says what it is for.
-- <functions: made by tools/sql_comments.py from each Rust function's doc comment; do not edit>
COMMENT ON FUNCTION id_decode(bigint) IS
  'Takes a Snowflake ID apart with this node''s layout: time, worker id, sequence and the layout''s other fields. One row; all NULL for a NULL ID.';
COMMENT ON FUNCTION id_decode(bigint, text) IS
  'Takes a Snowflake ID apart with a named layout (twitter, sonyflake, instagram, ...) or a layout spec.';
COMMENT ON FUNCTION id_from_text(text, text) IS
  'The ID of a text form made by id_to_text with the same base; wrong length or characters 22P02, above 64 bits 22003.';
COMMENT ON FUNCTION id_from_timestamp(timestamptz) IS
  'The smallest ID of an instant with this node''s layout: WHERE id >= id_from_timestamp(now() - interval ''1 day'') is an index range scan.';
COMMENT ON FUNCTION id_from_timestamp(timestamptz, text) IS
  'The smallest ID of an instant with a named layout or layout spec.';
COMMENT ON FUNCTION id_range(timestamptz, timestamptz) IS
  'The IDs of the times [since, before) with this node''s layout: lower is the smallest ID at since, upper the smallest at before, so FOR VALUES FROM (lower) TO (upper) is the range partition of those times.';
COMMENT ON FUNCTION id_range(timestamptz, timestamptz, text) IS
  'The IDs of the times [since, before) with a named layout or layout spec: IMMUTABLE, for partition bounds and queries pruned when planned.';
COMMENT ON FUNCTION id_span(interval) IS
  'How many IDs of this node''s layout a span of time covers (a day is 24 hours; no months): the width of fixed-size range partitions, pg_partman''s interval.';
COMMENT ON FUNCTION id_span(interval, text) IS
  'How many IDs of a named layout or layout spec a span of time covers.';
COMMENT ON FUNCTION id_timestamp(bigint) IS
  'The time inside a Snowflake ID (start of its tick), with this node''s layout.';
COMMENT ON FUNCTION id_timestamp(bigint, text) IS
  'The time inside a Snowflake ID, with a named layout or layout spec.';
COMMENT ON FUNCTION id_to_text(bigint, text) IS
  'Fixed-width, order-preserving text form of an ID: base32 (2-9, A-Z without I, O), crockford32, base36, base58, base62 (default) or hex. Text order is numeric order for IDs >= 0.';
COMMENT ON FUNCTION id_worker_id(bigint) IS
  'The worker id inside a Snowflake ID, with this node''s layout; NULL for a layout without worker bits.';
COMMENT ON FUNCTION id_worker_id(bigint, text) IS
  'The worker id inside a Snowflake ID, with a named layout or layout spec. IMMUTABLE: distributed queries (Citus) push it down into every shard, in the select list, WHERE and GROUP BY.';
COMMENT ON FUNCTION idgen.decrypt_id(bigint, text, integer) IS
  'The inverse of idgen.encrypt_id(), with the same key version.';
COMMENT ON FUNCTION idgen.decrypt_id_js_safe(bigint, text, integer) IS
  'The inverse of idgen.encrypt_id_js_safe(), with the same key version.';
COMMENT ON FUNCTION idgen.decrypt_uuid(uuid, text, integer) IS
  'The inverse of idgen.encrypt_uuid(), with the same key version.';
COMMENT ON FUNCTION idgen.encrypt_id(bigint, text, integer) IS
  'Any bigint encrypted under a key (FF1 over AES): a permutation of all 2^64 values. version NULL: the current one.';
COMMENT ON FUNCTION idgen.encrypt_id_js_safe(bigint, text, integer) IS
  'An ID from 0 to 2^53 - 1 encrypted to one in the same range (JavaScript-safe).';
COMMENT ON FUNCTION idgen.encrypt_uuid(uuid, text, integer) IS
  'A UUIDv7 encrypted to a UUID with version-4 bits (which every client accepts).';
COMMENT ON FUNCTION idgen.id_to_public(bigint, text) IS
  'A bigint''s public text form under the key''s current version: prefix_, 2 characters of key version, 20 of ciphertext.';
COMMENT ON FUNCTION idgen.node_system_identifier() IS
  'This database system''s identifier (system_identifier of pg_control_system()), as idgen.node_origins records it.';
COMMENT ON FUNCTION idgen.public_to_id(text, text) IS
  'The bigint of a public text form of the key (any version still kept); another prefix, a damaged string or another key''s is an error (22P02).';
COMMENT ON FUNCTION idgen.public_to_uuid(text, text) IS
  'The UUIDv7 of a public text form of the key; another prefix, a damaged string or another key''s is an error (22P02).';
COMMENT ON FUNCTION idgen.read_horizon() IS
  'This node''s read horizon of Snowflake IDs: every ID below it that this node made belongs to a transaction that has ended. Take it in a statement of its own, then read WHERE id > last AND id < horizon in the next (READ COMMITTED); in REPEATABLE READ it is refused (25001): take it before BEGIN.';
COMMENT ON FUNCTION idgen.read_horizon_uuid() IS
  'This node''s read horizon of UUIDv7s (and, as uuid_to_ulid(), ULIDs): every one below it that this node made belongs to a transaction that has ended. Used as idgen.read_horizon().';
COMMENT ON FUNCTION idgen.segment_alloc(text) IS
  'A whole range for a client that hands IDs out itself (tinyid-client): the IDs x with start_id < x <= end_id and x % delta = remainder. Committed before it is returned; never handed out twice.';
COMMENT ON FUNCTION idgen.segment_alter(text, integer, text) IS
  'Changes a business type''s step (from its next range) or description; its position never moves backwards.';
COMMENT ON FUNCTION idgen.segment_create(text, bigint, integer, integer, integer, text) IS
  'Registers a business type: IDs above start_id, in ranges of step, each = remainder (mod delta) for odd/even or mod-N splits across databases. 42710 if it exists.';
COMMENT ON FUNCTION idgen.segment_drop(text) IS
  'Removes a business type and forgets its cached ranges. Its highest ID stays in idgen.segments_retired: created again, the type goes on above it.';
COMMENT ON FUNCTION idgen.snowflake_start_after(timestamptz) IS
  'Moves this node''s clocks (Snowflake IDs, message IDs, UUIDv7s) past ts, durably, and returns when the next IDs start: after restoring onto a new server, moving a worker id to another machine, or setting a clock back for good. Give ts from a clock you trust: further than idgen.max_drift ahead of this node''s clock, it is taken with a WARNING and the node''s IDs wait until its clock is within idgen.max_drift of it; more than an hour past that, it is refused.';
COMMENT ON FUNCTION idgen.uuid_to_public(uuid, text) IS
  'A UUIDv7''s public text form under the key''s current version: prefix_, 2 characters of key version, 32 of ciphertext.';
COMMENT ON FUNCTION idgen_internal.column_max(oid, text) IS
  'The largest value of a column, read as its table''s owner in a security-restricted operation (used by the conversion functions); the caller must be allowed to read the column.';
COMMENT ON FUNCTION idgen_internal.id_time_lower(date, boolean, text) IS
  'id_time_lower of a date (its midnight in the session''s TimeZone): what id_timestamp(id) >= d::date adds.';
COMMENT ON FUNCTION idgen_internal.id_time_lower(timestamp, boolean, text) IS
  'id_time_lower of a timestamp without time zone, as PostgreSQL compares one with a timestamptz (in the session''s TimeZone): what id_timestamp(id) >= ts::timestamp adds.';
COMMENT ON FUNCTION idgen_internal.id_time_lower(timestamptz, boolean, text) IS
  'The smallest ID of the layout whose time is at or after ts (after, if not inclusive); NULL if none: what id_timestamp(id, layout) >= ts adds as id >= this (idgen.time_conditions).';
COMMENT ON FUNCTION idgen_internal.id_time_upper(date, boolean, text) IS
  'id_time_upper of a date (its midnight in the session''s TimeZone).';
COMMENT ON FUNCTION idgen_internal.id_time_upper(timestamp, boolean, text) IS
  'id_time_upper of a timestamp without time zone, in the session''s TimeZone.';
COMMENT ON FUNCTION idgen_internal.id_time_upper(timestamptz, boolean, text) IS
  'The largest ID of the layout whose time is at or before ts (before, if not inclusive); NULL if none: what id_timestamp(id, layout) <= ts adds as id <= this.';
COMMENT ON FUNCTION idgen_internal.key_range_estimate(uuid) IS
  'Always true: the marker of a UUID key whose range the planner estimates from the key''s histogram (key_range_estimate_support), added beside a time condition''s key range (idgen.time_conditions) and taken out of the plan once made.';
COMMENT ON FUNCTION idgen_internal.key_range_estimate_support(internal) IS
  'The planner support function of key_range_estimate: the estimates of the key''s range conditions from its histogram, and 1 for itself.';
COMMENT ON FUNCTION idgen_internal.layout_catalog() IS
  'Rows of the idgen.layouts view.';
COMMENT ON FUNCTION idgen_internal.node_status() IS
  'The row of the idgen.status view.';
COMMENT ON FUNCTION idgen_internal.public_key_fingerprint(text, integer) IS
  'The fingerprint column of idgen.public_keys.';
COMMENT ON FUNCTION idgen_internal.public_key_random() IS
  '32 random bytes from pg_strong_random(): a new AES-256 key.';
COMMENT ON FUNCTION idgen_internal.public_keys_changed() IS
  'The statement trigger of idgen_internal.public_keys: clears every session''s cache of keys at commit.';
COMMENT ON FUNCTION idgen_internal.read_horizon_holders() IS
  'The rows of the idgen.read_horizon_holders view.';
COMMENT ON FUNCTION idgen_internal.refusal_counts() IS
  'The rows of the idgen.refusals view.';
COMMENT ON FUNCTION idgen_internal.segment_allocator_usage() IS
  'The row of the idgen.segment_allocators view.';
COMMENT ON FUNCTION idgen_internal.segment_cache() IS
  'What the shared cache holds for this database''s business types (used by the view idgen.segment_status).';
COMMENT ON FUNCTION idgen_internal.segment_moved(text) IS
  'Forgets the ranges of a business type cached on this node, unless called by the allocator (used by the trigger segments_moved).';
COMMENT ON FUNCTION idgen_internal.stream_status() IS
  'The rows of the idgen.streams view.';
COMMENT ON FUNCTION idgen_internal.time_local_lower(date, text, text) IS
  'time_local_lower of a date (its midnight): what created_at::date >= d adds, with unit ''day''.';
COMMENT ON FUNCTION idgen_internal.time_local_lower(timestamp, text, text) IS
  'The earliest instant whose local time in zone (NULL for the session''s TimeZone), truncated to unit (NULL for none), can be at or after c truncated; read from the zone''s offsets near it, so a change of the clocks widens it: what (created_at AT TIME ZONE zone) >= c adds, inside id_time_lower.';
COMMENT ON FUNCTION idgen_internal.time_local_upper(date, text, text) IS
  'time_local_upper of a date (its midnight): what created_at::date <= d adds.';
COMMENT ON FUNCTION idgen_internal.time_local_upper(timestamp, text, text) IS
  'The latest instant whose local time in zone, truncated to unit, can be at or before c truncated.';
COMMENT ON FUNCTION idgen_internal.time_trunc_lower(date, text, text) IS
  'time_trunc_lower of a date (its midnight in the session''s TimeZone).';
COMMENT ON FUNCTION idgen_internal.time_trunc_lower(timestamp, text, text) IS
  'time_trunc_lower of a timestamp, compared with the truncation as PostgreSQL compares one with a timestamptz (in the session''s TimeZone): what date_trunc(''day'', created_at) >= ts::timestamp adds.';
COMMENT ON FUNCTION idgen_internal.time_trunc_lower(timestamptz, text, text) IS
  'The earliest instant t whose date_trunc(unit, t, zone) can be at or after c (zone NULL for the session''s TimeZone).';
COMMENT ON FUNCTION idgen_internal.time_trunc_upper(date, text, text) IS
  'time_trunc_upper of a date (its midnight in the session''s TimeZone).';
COMMENT ON FUNCTION idgen_internal.time_trunc_upper(timestamp, text, text) IS
  'time_trunc_upper of a timestamp, in the session''s TimeZone.';
COMMENT ON FUNCTION idgen_internal.time_trunc_upper(timestamptz, text, text) IS
  'The latest instant t whose date_trunc(unit, t, zone) can be at or before c.';
COMMENT ON FUNCTION idgen_internal.uuid_larger(uuid, uuid) IS
  'The larger of two UUIDs in uuid''s order (a memcmp of the bytes): the transition and combine function of idgen_internal.max_key(uuid).';
COMMENT ON FUNCTION idgen_internal.uuid_smaller(uuid, uuid) IS
  'The smaller of two UUIDs in uuid''s order: the transition and combine function of idgen_internal.min_key(uuid).';
COMMENT ON FUNCTION idgen_internal.uuidv7_time_lower(date, boolean) IS
  'uuidv7_time_lower of a date (its midnight in the session''s TimeZone).';
COMMENT ON FUNCTION idgen_internal.uuidv7_time_lower(timestamp, boolean) IS
  'uuidv7_time_lower of a timestamp without time zone, in the session''s TimeZone.';
COMMENT ON FUNCTION idgen_internal.uuidv7_time_lower(timestamptz, boolean) IS
  'The smallest UUID whose first 48 bits (a UUIDv7''s millisecond) are at or after ts; NULL if none: what uuidv7_timestamp(id) >= ts adds as id >= this.';
COMMENT ON FUNCTION idgen_internal.uuidv7_time_upper(date, boolean) IS
  'uuidv7_time_upper of a date (its midnight in the session''s TimeZone).';
COMMENT ON FUNCTION idgen_internal.uuidv7_time_upper(timestamp, boolean) IS
  'uuidv7_time_upper of a timestamp without time zone, in the session''s TimeZone.';
COMMENT ON FUNCTION idgen_internal.uuidv7_time_upper(timestamptz, boolean) IS
  'The largest UUID whose first 48 bits are at or before ts; NULL if none: what uuidv7_timestamp(id) <= ts adds as id <= this.';
COMMENT ON FUNCTION idgen_internal.within_range(boolean) IS
  'Its argument: a condition on the time kept beside the key range it implies (idgen.time_conditions), estimated as true for the rows the range reads (within_range_support), so that the key''s statistics estimate both.';
COMMENT ON FUNCTION idgen_internal.within_range_support(internal) IS
  'The planner support function of within_range: a selectivity of 1.';
COMMENT ON FUNCTION idgen_internal.worker_lease_precheck(text) IS
  'Refuses a lease call inside a transaction block (a ROLLBACK would undo the lease while its holder uses it); returns this layout''s largest worker id.';
COMMENT ON FUNCTION idgen_internal.worker_lease_state() IS
  'This node''s worker id source and, in lease mode, its lease as the keeper reports it; read it through the view idgen.worker_status.';
COMMENT ON FUNCTION msgid_decode(text) IS
  'Takes a message ID apart: ts, sequence, session_type, session_hash. Accepts the 19-character form or the 16 symbols without dashes.';
COMMENT ON FUNCTION msgid_from_timestamp(timestamptz) IS
  'The smallest message ID of an instant: WHERE msgid >= msgid_from_timestamp(now() - interval ''1 hour'') COLLATE "C".';
COMMENT ON FUNCTION msgid_next(integer, text) IS
  '80-bit message ID (RongCloud''s format) as 19 characters XXXX-XXXX-XXXX-XXXX: 42-bit ms time, 12-bit sequence shared by all backends of this node, 4-bit session type (0..15), 22-bit session hash. Text order (COLLATE "C") is time order. Unique per node.';
COMMENT ON FUNCTION msgid_session_hash(text) IS
  'The 22-bit session hash inside message IDs: Java''s String.hashCode() of the session id (UTF-16), low 22 bits. Stable across versions and platforms.';
COMMENT ON FUNCTION segment_next(text) IS
  'Next ID of a business type''s number range (Tinyid/Leaf segment mode): from a range cached in shared memory, committed to idgen.segments before any of its IDs is handed out; a ROLLBACK never returns it.';
COMMENT ON FUNCTION segment_next_batch(text, integer) IS
  'n IDs of a business type at once (1 to 10,000,000), ascending.';
COMMENT ON FUNCTION snowflake_at(timestamptz) IS
  'A Snowflake ID whose time is ts (an instant that has passed, within this node''s layout), with the node''s backfill worker id (idgen.backfill_worker_id) and a sequence number committed in idgen.backfill_database before it is returned: never equal to an ID any node makes live or any backfill made. Between the live IDs of the ticks before and after ts.';
COMMENT ON FUNCTION snowflake_at_batch(timestamptz[]) IS
  'A Snowflake ID at each instant of the array, in its order (IDs at one instant ascend in that order); a NULL element is 22004. For imports: one request to the allocator per 128 buckets of about a second.';
COMMENT ON FUNCTION snowflake_next() IS
  'Next Snowflake ID of this node: unique across backends, restarts, crashes and clock steps; strictly increasing per node. Use as DEFAULT snowflake_next().';
COMMENT ON FUNCTION snowflake_next_batch(integer) IS
  'n Snowflake IDs at once (1 to 10000000), ascending.';
COMMENT ON FUNCTION typeid_from_uuid(text, uuid) IS
  'The TypeID of any UUID with a prefix: typeid_from_uuid(''user'', id).';
COMMENT ON FUNCTION typeid_next(text) IS
  'A new TypeID (the TypeID specification 0.3.0): the prefix, _, and this node''s next UUIDv7 in 26 characters of base 32; DEFAULT typeid_next(''user'').';
COMMENT ON FUNCTION typeid_prefix(text) IS
  'A TypeID''s prefix (its type); empty for none.';
COMMENT ON FUNCTION typeid_to_uuid(text) IS
  'The UUID of a TypeID, whatever its prefix; 22P02 for a text that is no TypeID.';
COMMENT ON FUNCTION typeid_to_uuid(text, text) IS
  'The UUID of a TypeID of the given prefix (type); 22P02 for a TypeID of another type.';
COMMENT ON FUNCTION ulid_next() IS
  'Next UUIDv7 of this node written as a ULID (26 characters of Crockford base32): the same time, order and guarantees; text order (COLLATE "C") is time order. ulid_to_uuid() stores it in 16 bytes.';
COMMENT ON FUNCTION ulid_timestamp(text) IS
  'The millisecond inside a ULID (its first 10 characters).';
COMMENT ON FUNCTION ulid_to_uuid(text) IS
  'A ULID''s 128 bits as a uuid (case ignored, O read as 0 and I, L as 1); wrong length or characters 22P02.';
COMMENT ON FUNCTION uuid_to_ulid(uuid) IS
  'Any UUID''s 128 bits as a ULID''s 26 characters; for a UUIDv7, the same time and order.';
COMMENT ON FUNCTION uuidv7_at(timestamptz) IS
  'A UUIDv7 whose time is ts (to the millisecond, an instant that has passed): its counter committed in idgen.backfill_database before it is returned (unique among this node''s backfills), 59 random bits (unique against live UUIDv7s as live ones are across nodes).';
COMMENT ON FUNCTION uuidv7_at_batch(timestamptz[]) IS
  'A UUIDv7 at each instant of the array, in its order; a NULL element is 22004.';
COMMENT ON FUNCTION uuidv7_from_timestamp(timestamptz) IS
  'The smallest UUIDv7 of an instant''s millisecond: WHERE id >= uuidv7_from_timestamp(now() - interval ''1 day'') is an index range scan on a uuid key.';
COMMENT ON FUNCTION uuidv7_next() IS
  'Next UUIDv7 (RFC 9562) of this node: 48-bit Unix ms, a 15-bit counter shared by all backends (method 1), 59 random bits from pg_strong_random(). Strictly increasing per node across backends, restarts, crashes and clock steps; across nodes unique by its random bits. Use as DEFAULT uuidv7_next().';
COMMENT ON FUNCTION uuidv7_next_batch(integer) IS
  'n UUIDv7s at once (1 to 10000000), ascending.';
COMMENT ON FUNCTION uuidv7_range(timestamptz, timestamptz) IS
  'The UUIDv7s of the times [since, before), to the millisecond: FOR VALUES FROM (lower) TO (upper) is the range partition of those times on a uuid key.';
COMMENT ON FUNCTION uuidv7_timestamp(uuid) IS
  'The millisecond inside a UUIDv7 (this node''s or any other''s); 22023 for a UUID of another version.';
-- </functions>
-- It returns its argument and raises nothing: a condition it wraps stays as leakproof as it was.
ALTER FUNCTION idgen_internal.within_range(boolean) LEAKPROOF;
-- True for every argument, raising nothing: a security barrier lets it down to the key's relation
-- with the range it estimates.
ALTER FUNCTION idgen_internal.key_range_estimate(uuid) LEAKPROOF;

-- min and max of a UUID key, which PostgreSQL has none of: what min and max of a UUIDv7's time
-- become (idgen.time_conditions), read from the key's index in one row as max(id) is (SORTOP).
CREATE AGGREGATE idgen_internal.max_key(uuid) (
    SFUNC = idgen_internal.uuid_larger, STYPE = uuid,
    COMBINEFUNC = idgen_internal.uuid_larger, SORTOP = >, PARALLEL = SAFE);
CREATE AGGREGATE idgen_internal.min_key(uuid) (
    SFUNC = idgen_internal.uuid_smaller, STYPE = uuid,
    COMBINEFUNC = idgen_internal.uuid_smaller, SORTOP = <, PARALLEL = SAFE);
COMMENT ON AGGREGATE idgen_internal.max_key(uuid) IS
  'The largest UUID, read from an index on it: what max(uuidv7_timestamp(id)) becomes, uuidv7_timestamp(max_key(id)) (idgen.time_conditions).';
COMMENT ON AGGREGATE idgen_internal.min_key(uuid) IS
  'The smallest UUID, read from an index on it: what min(uuidv7_timestamp(id)) becomes (idgen.time_conditions).';

-- The read horizon: readers that page by ID never miss a row committed late.
COMMENT ON VIEW idgen.read_horizon_holders IS
  'What holds the read horizons back: open transactions that took an ordered ID, prepared transactions until COMMIT/ROLLBACK PREPARED, and prepared transactions from before the server started (which hold every horizon at its lowest: their IDs are not known).';
COMMENT ON COLUMN idgen.read_horizon_holders.kind IS 'transaction (an open transaction of a backend), prepared, or prepared before start.';
COMMENT ON COLUMN idgen.read_horizon_holders.stream IS 'snowflake or uuidv7; NULL for a prepared transaction from before the start (it holds both).';
COMMENT ON COLUMN idgen.read_horizon_holders.pid IS 'The backend of an open transaction (see pg_stat_activity).';
COMMENT ON COLUMN idgen.read_horizon_holders.transaction IS 'Its transaction id: a prepared transaction''s, or the backend''s as pg_stat_activity shows it to you (NULL before it wrote anything).';
COMMENT ON COLUMN idgen.read_horizon_holders.gid IS 'A prepared transaction''s name: COMMIT PREPARED or ROLLBACK PREPARED it to release the horizon.';
COMMENT ON COLUMN idgen.read_horizon_holders.oldest_id IS 'The horizon it holds: at or below the first ID the transaction took from the stream (the stream''s next ID when it took it).';
COMMENT ON COLUMN idgen.read_horizon_holders.oldest_id_time IS 'The time inside oldest_id: how far behind the horizon is held.';
COMMENT ON COLUMN idgen.read_horizon_holders.since IS 'When the transaction started (for you, as pg_stat_activity shows it), or was prepared.';

-- Segment mode (Didi Tinyid, Meituan Leaf).
COMMENT ON FUNCTION idgen.segment_advance(bigint, text) IS
  'Moves every business type (or one), and every retired one, margin IDs further: after a point-in-time recovery or the restore of an older backup, past the ranges committed after the recovery point, which the recovered idgen.segments no longer shows.';
COMMENT ON FUNCTION idgen_internal.node_origins_insert() IS
  'Trigger node_origins_insert: only members of idgen_admin and of the database''s owner (restoring its dump) add rows to idgen.node_origins.';
COMMENT ON FUNCTION idgen_internal.segments_guard() IS
  'Trigger function: refuses to move a business type''s max_id backwards.';
COMMENT ON FUNCTION idgen_internal.segments_retire() IS
  'Trigger function: remembers the highest ID of a business type deleted, renamed or truncated away from idgen.segments, in idgen.segments_retired.';
COMMENT ON FUNCTION idgen_internal.segments_resume() IS
  'Trigger function: a business type created (or renamed) under the name of a dropped one starts above the highest ID that one reached.';
COMMENT ON FUNCTION idgen_internal.key_type_of(oid, integer) IS
  'A column type as the key-type check sees it: its base type through every level of domains, whether it holds every bigint exactly, whether it rounds values it cannot hold.';
COMMENT ON FUNCTION idgen_internal.segments_moved() IS
  'Trigger function: when a business type''s max_id is moved by anyone but the allocator (idgen.segment_advance, an UPDATE by hand), this node forgets the ranges it has cached of it.';

-- Message IDs (RongCloud's format) and text forms.

-- UUIDv7 (RFC 9562) and ULIDs, from the node's third clock stream.

-- IDs at a past time (docs/backfill.md).

-- Worker-id leases (raindrop's worker table), on a coordinator database.
COMMENT ON FUNCTION idgen.worker_acquire(text, interval, integer, integer) IS
  'Lease a worker id in [min_id, max_id] (default: this layout''s worker range) for ttl. The same code gets its old id back first; a live lease is never handed out twice. Returns the id, the lease number (a fencing token that grows by a random step with each holder: pass it to heartbeat and release, it proves the holder), the expiry, and start_after: make IDs only later than it. Run it in autocommit mode.';
COMMENT ON FUNCTION idgen.worker_heartbeat(integer, text, timestamp with time zone, bigint) IS
  'Renew a worker-id lease for its ttl and report last_ts, the time of the last ID made; returns the new expiry. The lease number is required (42501 without it): it proves the holder. 55000 when the lease was lost (expired, released or taken): the caller must stop making IDs at once.';
COMMENT ON FUNCTION idgen.worker_release(integer, text, timestamp with time zone, bigint) IS
  'Give a worker-id lease back, with last_ts: the id is free at once and its next holder starts after last_ts. The lease number is required (42501 without it): it proves the holder. Returns false if it was already released.';
COMMENT ON FUNCTION idgen_internal.worker_start_after(idgen.workers) IS
  'The time the next holder of a lease starts after: the holder''s last reported time, or for an expired lease its expiry plus idgen.worker_lease_grace.';
COMMENT ON FUNCTION idgen_internal.worker_lease_lost(idgen.workers, integer, text, bigint) IS
  'Why a holder''s heartbeat or release on a lease row fails, or NULL if the lease is still theirs.';
COMMENT ON FUNCTION idgen_internal.worker_free_at(idgen.workers) IS
  'When a lease may be handed out again: at its release, or once its holder has surely stopped (last renewal + ttl, or expires_at if later) plus idgen.worker_lease_grace.';

COMMENT ON SCHEMA idgen IS
  'pg_idgen administration: segments, worker-id leases, status views. Generators and decoders are in the extension''s own schema.';
COMMENT ON SCHEMA idgen_internal IS
  'pg_idgen''s functions behind the idgen views and tables (set-returning functions, triggers, lease helpers): not for direct use.';

-- Columns, for \d+ (each view's and table's columns say what they hold).
COMMENT ON COLUMN idgen.layouts.name IS 'Preset name; for this node''s layout when it is no preset: custom, or the preset''s name followed by (customised) when the spec changes one (idgen.status.layout_spec shows the spec).';
COMMENT ON COLUMN idgen.layouts.is_node_layout IS 'True for the layout this node generates with (idgen.layout); that row comes first.';
COMMENT ON COLUMN idgen.layouts.unit IS 'Length of one tick of the time field: ms, s, min, hour, day, or a number of ms (10ms).';
COMMENT ON COLUMN idgen.layouts.epoch IS 'The instant the time field counts from.';
COMMENT ON COLUMN idgen.layouts.time_bits IS 'Bits of the time field (ticks since the epoch).';
COMMENT ON COLUMN idgen.layouts.datacenter_bits IS 'Bits of the data-centre field (0 when the layout has none).';
COMMENT ON COLUMN idgen.layouts.worker_bits IS 'Bits of the worker-id field.';
COMMENT ON COLUMN idgen.layouts.rollback_bits IS 'Bits of the rollback flag (0 or 1), flipped by clock_policy = rollback_flag when the clock steps back.';
COMMENT ON COLUMN idgen.layouts.sequence_bits IS 'Bits of the sequence within one tick.';
COMMENT ON COLUMN idgen.layouts.reserved_bits IS 'Bits with a fixed value (0 to 5).';
COMMENT ON COLUMN idgen.layouts.field_order IS 'The fields from the highest bits to the lowest, comma-separated.';
COMMENT ON COLUMN idgen.layouts.ids_per_tick IS 'IDs one worker can make per tick (2^sequence_bits).';
COMMENT ON COLUMN idgen.layouts.ids_per_second IS 'IDs one worker can make per second (its capacity).';
COMMENT ON COLUMN idgen.layouts.years IS 'Years from the epoch until the time field runs out (for a wrapping layout, its cycle).';
COMMENT ON COLUMN idgen.layouts.ends IS 'When the time field runs out; NULL when it wraps or lies beyond PostgreSQL''s timestamps.';
COMMENT ON COLUMN idgen.layouts.js_safe IS 'True when every ID stays below 2^53, so JavaScript numbers (JSON.parse) hold it exactly.';
COMMENT ON COLUMN idgen.layouts.can_generate IS 'True when a node could generate with it now (its time field has not run out and does not wrap).';
COMMENT ON COLUMN idgen.layouts.description IS 'The layout in words: fields, capacity and range.';

COMMENT ON COLUMN idgen.status.layout IS 'Name of this node''s layout (idgen.layout).';
COMMENT ON COLUMN idgen.status.layout_spec IS 'The layout as written in idgen.layout.';
COMMENT ON COLUMN idgen.status.worker_id IS 'The worker id in this node''s IDs; NULL in lease mode while no lease is held, and with idgen.worker_id_source = citus while this database''s Citus group id is not known (idgen.worker_status says why).';
COMMENT ON COLUMN idgen.status.datacenter_id IS 'The data-centre id in this node''s IDs (idgen.datacenter_id), for layouts with that field.';
COMMENT ON COLUMN idgen.status.worker_id_source IS 'Where the worker id comes from: the setting idgen.worker_id, a lease from the coordinator (with its code), or the node''s Citus group id.';
COMMENT ON COLUMN idgen.status.clock_policy IS 'What happens when the clock steps back (idgen.clock_policy): continue (count on from the last ID), wait, error or rollback_flag.';
COMMENT ON COLUMN idgen.status.max_drift_ms IS 'How far IDs may run ahead of the wall clock, in ms (idgen.max_drift).';
COMMENT ON COLUMN idgen.status.last_id IS 'The last Snowflake ID this node made; NULL before the first.';
COMMENT ON COLUMN idgen.status.last_id_time IS 'The time inside the last ID (start of its tick).';
COMMENT ON COLUMN idgen.status.wall_clock IS 'The wall clock when the row was read.';
COMMENT ON COLUMN idgen.status.drift_ms IS 'How far the logical clock runs ahead of the wall clock, in ms; 0 when it does not (never negative).';
COMMENT ON COLUMN idgen.status.persisted_mark IS 'The durable (WAL-logged) high-water mark, moved by every stream (Snowflake IDs, message IDs, UUIDv7s); on a standby, the one replayed from its primary: after a crash, restart or promotion, IDs start above it. NULL before the first reservation.';
COMMENT ON COLUMN idgen.status.ids_issued IS 'Snowflake IDs made since the server started.';
COMMENT ON COLUMN idgen.status.overflow_waits IS 'Times a caller waited for the next tick because a tick''s sequence was used up and idgen.max_drift allowed no borrowing.';
COMMENT ON COLUMN idgen.status.clock_behind_waits IS 'Times a caller waited for the wall clock to catch up after it stepped back (clock_policy = wait, or drift beyond idgen.max_drift).';
COMMENT ON COLUMN idgen.status.clock_errors IS 'Times snowflake_next() raised an error because the clock stepped back (clock_policy = error).';
COMMENT ON COLUMN idgen.status.backward_steps IS 'Times the wall clock was seen to step back.';
COMMENT ON COLUMN idgen.status.largest_backward_step_ms IS 'The largest backward step of the wall clock seen, in ms.';
COMMENT ON COLUMN idgen.status.rollback_flips IS 'Times the rollback flag was flipped (clock_policy = rollback_flag).';
COMMENT ON COLUMN idgen.status.segment_cache_used IS 'Business types that hold a slot of the shared segment cache now, all databases together.';
COMMENT ON COLUMN idgen.status.segment_cache_size IS 'Slots of the shared segment cache (idgen.segment_cache_size).';
COMMENT ON COLUMN idgen.status.segment_evictions IS 'Idle business types evicted from the segment cache to make room.';
COMMENT ON COLUMN idgen.status.problem IS 'Why this node cannot make IDs, or runs too far ahead of its clock; NULL when all is well. Alert on it.';

COMMENT ON COLUMN idgen.streams.stream IS 'snowflake (snowflake_next, snowflake_next_batch), msgid (msgid_next) or uuidv7 (uuidv7_next, uuidv7_next_batch, ulid_next).';
COMMENT ON COLUMN idgen.streams.ids_per_second IS 'The stream''s capacity: IDs a tick holds, per second.';
COMMENT ON COLUMN idgen.streams.last_tick_time IS 'The start of the tick of the stream''s last ID; NULL before the first since the server started.';
COMMENT ON COLUMN idgen.streams.drift_ms IS 'How far the stream''s logical clock runs ahead of the wall clock, in ms; 0 when it does not (never negative). At most idgen.max_drift.';
COMMENT ON COLUMN idgen.streams.reserved_until IS 'The end of what the durable mark covers for this stream: IDs up to it need no further write; after a crash the stream starts above it. NULL before the first reservation.';
COMMENT ON COLUMN idgen.streams.ids_issued IS 'IDs of the stream made since the server started.';
COMMENT ON COLUMN idgen.streams.overflow_waits IS 'Times a caller waited for the next tick because a tick was used up and idgen.max_drift allowed no borrowing.';
COMMENT ON COLUMN idgen.streams.clock_behind_waits IS 'Times a caller waited for the wall clock to catch up after it stepped back (clock_policy = wait, or drift beyond idgen.max_drift).';
COMMENT ON COLUMN idgen.streams.clock_errors IS 'Times a call raised an error because the clock stepped back (clock_policy = error).';
COMMENT ON COLUMN idgen.streams.backward_steps IS 'Times the wall clock was seen to step back by this stream.';
COMMENT ON COLUMN idgen.streams.largest_backward_step_ms IS 'The largest backward step of the wall clock this stream saw, in ms.';

COMMENT ON COLUMN idgen.worker_status.source IS 'Where this node''s worker id comes from: setting, lease or citus.';
COMMENT ON COLUMN idgen.worker_status.state IS 'fixed for a worker id from the setting; citus group, or no group (last_error says why), for the Citus group id; in lease mode the keeper''s state: starting, acquiring, leased, renewal failing, lapsed or stopped.';
COMMENT ON COLUMN idgen.worker_status.worker_id IS 'The worker id in use; NULL in lease mode while no valid lease is held, and with idgen.worker_id_source = citus while no group id is known.';
COMMENT ON COLUMN idgen.worker_status.code IS 'The code this node leases with (its holder name at the coordinator).';
COMMENT ON COLUMN idgen.worker_status.lease IS 'The lease number (fencing token) of the lease held: the proof of holding it at the coordinator, so NULL except for superusers and members of idgen_admin.';
COMMENT ON COLUMN idgen.worker_status.can_generate IS 'True when snowflake_next() can make IDs now.';
COMMENT ON COLUMN idgen.worker_status.valid_for_ms IS 'How long the lease stays valid without another renewal, in ms, on this node''s monotonic clock.';
COMMENT ON COLUMN idgen.worker_status.acquired_at IS 'When the lease held was acquired.';
COMMENT ON COLUMN idgen.worker_status.expires_at IS 'The lease''s expiry as the coordinator last answered it.';
COMMENT ON COLUMN idgen.worker_status.last_heartbeat IS 'When the lease was last renewed.';
COMMENT ON COLUMN idgen.worker_status.start_after IS 'The time this node''s IDs start after, as the coordinator gave it with the lease.';
COMMENT ON COLUMN idgen.worker_status.acquisitions IS 'Leases acquired since the server started.';
COMMENT ON COLUMN idgen.worker_status.renewals IS 'Heartbeats that renewed the lease.';
COMMENT ON COLUMN idgen.worker_status.failures IS 'Failed attempts to acquire or renew (coordinator unreachable, refused, lease lost).';
COMMENT ON COLUMN idgen.worker_status.first_lease_ms IS 'Time from the keeper''s start to its first lease, in ms.';
COMMENT ON COLUMN idgen.worker_status.last_error IS 'The keeper''s last error (hidden from roles that may not read idgen.worker_lease_conninfo); with idgen.worker_id_source = citus, why the Citus group id is not known.';

COMMENT ON COLUMN idgen.worker_leases.worker_id IS 'The worker id.';
COMMENT ON COLUMN idgen.worker_leases.code IS 'Its last holder''s code.';
COMMENT ON COLUMN idgen.worker_leases.state IS 'held, grace (expired, not yet free: its holder may still be running), expired (free) or released (free).';
COMMENT ON COLUMN idgen.worker_leases.lease IS 'The lease number (fencing token) of its last holder.';
COMMENT ON COLUMN idgen.worker_leases.host IS 'The client address its last holder acquired it from.';
COMMENT ON COLUMN idgen.worker_leases.pid IS 'The backend process id of its last holder''s acquire.';
COMMENT ON COLUMN idgen.worker_leases.ttl IS 'How long the lease lasts without a renewal.';
COMMENT ON COLUMN idgen.worker_leases.acquired_at IS 'When its last holder acquired it.';
COMMENT ON COLUMN idgen.worker_leases.heartbeat_at IS 'Its last renewal.';
COMMENT ON COLUMN idgen.worker_leases.expires_at IS 'When the lease expires without another renewal.';
COMMENT ON COLUMN idgen.worker_leases.released_at IS 'When its holder released it; NULL while not released.';
COMMENT ON COLUMN idgen.worker_leases.last_ts IS 'The time of the last ID its holder reported making.';
COMMENT ON COLUMN idgen.worker_leases.next_start_after IS 'The time the next holder''s IDs must start after.';

COMMENT ON COLUMN idgen.workers.worker_id IS 'The worker id.';
COMMENT ON COLUMN idgen.workers.code IS 'Its last holder''s code (for a node in lease mode: idgen.worker_lease_code, by default its system identifier and port).';
COMMENT ON COLUMN idgen.workers.host IS 'The client address its last holder acquired it from.';
COMMENT ON COLUMN idgen.workers.pid IS 'The backend process id of its last holder''s acquire.';
COMMENT ON COLUMN idgen.workers.lease IS 'The lease number: a fencing token, larger for each later holder by a random step; heartbeat and release take it as proof of the holder.';
COMMENT ON COLUMN idgen.workers.ttl IS 'How long the lease lasts without a renewal.';
COMMENT ON COLUMN idgen.workers.acquired_at IS 'When its last holder acquired it.';
COMMENT ON COLUMN idgen.workers.heartbeat_at IS 'Its last renewal.';
COMMENT ON COLUMN idgen.workers.expires_at IS 'When the lease expires without another renewal.';
COMMENT ON COLUMN idgen.workers.released_at IS 'When its holder released it; NULL while not released.';
COMMENT ON COLUMN idgen.workers.last_ts IS 'The time of the last ID its holder reported making: the next holder starts after it.';

COMMENT ON COLUMN idgen.segments.biz_type IS 'The business type (1 to 63 bytes).';
COMMENT ON COLUMN idgen.segments.max_id IS 'The highest ID of every range handed out so far (never moves back); the next range starts above it.';
COMMENT ON COLUMN idgen.segments.step IS 'The size of a range, in the type''s number space (the next range''s, when changed).';
COMMENT ON COLUMN idgen.segments.delta IS 'IDs of this database are = remainder (mod delta): the number of databases sharing the type.';
COMMENT ON COLUMN idgen.segments.remainder IS 'This database''s share of the type (0 to delta - 1).';
COMMENT ON COLUMN idgen.segments.version IS 'Ranges handed out so far (Tinyid''s optimistic-lock version).';
COMMENT ON COLUMN idgen.segments.description IS 'Free text.';
COMMENT ON COLUMN idgen.segments.created_at IS 'When the type was created.';
COMMENT ON COLUMN idgen.segments.updated_at IS 'When its last range was handed out, or it was last changed.';

COMMENT ON COLUMN idgen.segments_retired.biz_type IS 'The business type dropped, renamed away or truncated.';
COMMENT ON COLUMN idgen.segments_retired.max_id IS 'The highest ID it had reached: created again, the type goes on above it.';
COMMENT ON COLUMN idgen.segments_retired.retired_at IS 'When it was retired.';

COMMENT ON COLUMN idgen.segment_status.biz_type IS 'The business type.';
COMMENT ON COLUMN idgen.segment_status.max_id IS 'Its max_id in idgen.segments.';
COMMENT ON COLUMN idgen.segment_status.configured_step IS 'Its step in idgen.segments.';
COMMENT ON COLUMN idgen.segment_status.delta IS 'Its delta: IDs are = remainder (mod delta).';
COMMENT ON COLUMN idgen.segment_status.remainder IS 'Its remainder.';
COMMENT ON COLUMN idgen.segment_status.cached IS 'True when the shared cache holds ranges of it now.';
COMMENT ON COLUMN idgen.segment_status.current_step IS 'The step in use, raised and lowered with demand (dynamic step), or the configured one.';
COMMENT ON COLUMN idgen.segment_status.current_start IS 'The current range: IDs above current_start ...';
COMMENT ON COLUMN idgen.segment_status.current_end IS '... up to current_end.';
COMMENT ON COLUMN idgen.segment_status.current_next IS 'The next ID of the current range to hand out.';
COMMENT ON COLUMN idgen.segment_status.next_start IS 'The range fetched ahead of need: IDs above next_start ...';
COMMENT ON COLUMN idgen.segment_status.next_end IS '... up to next_end.';
COMMENT ON COLUMN idgen.segment_status.ids_left IS 'IDs left in the cached ranges.';
COMMENT ON COLUMN idgen.segment_status.refill IS 'The refill of the next range: idle, requested (no allocator has taken it yet) or inprogress (being committed).';
COMMENT ON COLUMN idgen.segment_status.refills_ahead IS 'Refills committed before they were needed.';
COMMENT ON COLUMN idgen.segment_status.refills_waited IS 'Refills a caller had to wait for; if it grows, raise the step or idgen.segment_prefetch.';
COMMENT ON COLUMN idgen.segment_status.ids_issued IS 'IDs of the type handed out from the cache since the server started.';
COMMENT ON COLUMN idgen.segment_status.last_refill_at IS 'When the last range was committed.';
COMMENT ON COLUMN idgen.segment_status.description IS 'Its description in idgen.segments.';

-- Privileges. Making and decoding IDs is for everyone who can connect. Administration (segments,
-- leases, the idgen tables) is for members of idgen_admin. Leasing worker ids and taking whole
-- segment ranges is for members of idgen_client (idgen_admin includes it). The roles are created
-- once per cluster and kept when the extension is dropped (other databases may use them).
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'idgen_admin') THEN
        CREATE ROLE idgen_admin NOLOGIN;
        COMMENT ON ROLE idgen_admin IS 'pg_idgen administration: segments, worker leases, the idgen tables.';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'idgen_client') THEN
        CREATE ROLE idgen_client NOLOGIN;
        COMMENT ON ROLE idgen_client IS 'pg_idgen clients: lease worker ids (idgen.worker_acquire/heartbeat/release) and take whole segment ranges (idgen.segment_alloc).';
    END IF;
    IF NOT pg_catalog.pg_has_role('idgen_admin', 'idgen_client', 'MEMBER') THEN
        GRANT idgen_client TO idgen_admin;
    END IF;
END
$roles$;

GRANT USAGE ON SCHEMA idgen, idgen_internal TO PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA idgen FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA idgen, idgen_internal FROM PUBLIC;

-- Everyone: how this node makes IDs. (Every caller of snowflake_next() and msgid_next() reads
-- idgen.node_origins once per session.)
GRANT SELECT ON idgen.layouts, idgen.status, idgen.streams, idgen.refusals, idgen.worker_status,
    idgen.segment_allocators, idgen.node_origins TO PUBLIC;
-- A database's owner restoring its dump (pg_restore --no-owner) brings its idgen.node_origins
-- rows, so that a restore onto another server is refused there too; the trigger
-- node_origins_insert lets nobody else add rows.
GRANT INSERT ON idgen.node_origins TO PUBLIC;
GRANT EXECUTE ON FUNCTION idgen_internal.layout_catalog(), idgen_internal.node_status(),
    idgen_internal.stream_status(), idgen_internal.refusal_counts(), idgen_internal.worker_lease_state(),
    idgen_internal.segment_allocator_usage() TO PUBLIC;
-- Readers that page by ID: the horizons and what holds them (pids as pg_stat_activity shows them
-- to everyone; the IDs are bounds of IDs anyone can make).
GRANT EXECUTE ON FUNCTION idgen.read_horizon(), idgen.read_horizon_uuid(),
    idgen_internal.read_horizon_holders() TO PUBLIC;
GRANT SELECT ON idgen.read_horizon_holders TO PUBLIC;

-- Public IDs: everyone may encrypt and decrypt with a key by its name, and see the keys' names,
-- versions and fingerprints; only superusers read the keys (idgen_internal.public_keys), and
-- administrators make, rotate and drop them (below, with everything in idgen).
GRANT EXECUTE ON FUNCTION idgen.encrypt_id(bigint, text, integer), idgen.decrypt_id(bigint, text, integer),
    idgen.encrypt_id_js_safe(bigint, text, integer), idgen.decrypt_id_js_safe(bigint, text, integer),
    idgen.encrypt_uuid(uuid, text, integer), idgen.decrypt_uuid(uuid, text, integer),
    idgen.id_to_public(bigint, text), idgen.public_to_id(text, text),
    idgen.uuid_to_public(uuid, text), idgen.public_to_uuid(text, text),
    idgen_internal.public_key_fingerprint(text, integer) TO PUBLIC;
GRANT SELECT ON idgen.public_keys TO PUBLIC;

-- Table owners: moving their key columns onto snowflake_next() (SECURITY INVOKER: ALTER TABLE's own
-- checks decide what a caller may change).
GRANT EXECUTE ON FUNCTION idgen.convert_to_snowflake(regclass, name, boolean, boolean, boolean),
    idgen.convert_schema_to_snowflake(name, boolean, boolean, boolean) TO PUBLIC;
-- What they and the key-type check (run by anyone's DDL) call: a type's base type, and a
-- column's largest value read as its table's owner, for a caller who may read the column.
GRANT EXECUTE ON FUNCTION idgen_internal.key_type_of(oid, integer), idgen_internal.column_max(oid, text) TO PUBLIC;
-- Sequence owners: adopting their sequences and giving them back (SECURITY INVOKER; the record
-- checks the caller owns the sequence). What an adopted sequence's draws become (rewritten into
-- every role's statements: each checks the sequence privileges PostgreSQL's own function would).
GRANT SELECT ON idgen.adopted_sequences TO PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.adopt_sequence(regclass, boolean), idgen.adopt_sequences(regnamespace, boolean),
    idgen.release_sequence(regclass), idgen_internal.adoption_record(regclass, boolean, bigint),
    idgen_internal.adoption_block_refusal(bigint), idgen_internal.sequence_columns(regclass),
    idgen_internal.sequence_next(regclass, bigint, boolean), idgen_internal.sequence_nextval(regclass),
    idgen_internal.sequence_currval(regclass), idgen_internal.sequence_setval(regclass, bigint),
    idgen_internal.sequence_setval(regclass, bigint, boolean), idgen_internal.sequence_lastval() TO PUBLIC;
-- Table owners: converting a key online (SECURITY INVOKER throughout; the worker runs as the
-- caller). The conversions' tables have row level security: a role sees and writes only the rows
-- of the conversions its roles started.
GRANT SELECT ON idgen.online_conversions TO PUBLIC;
GRANT SELECT, INSERT, UPDATE ON idgen_internal.online_conversions, idgen_internal.online_conversion_steps TO PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.convert_online(regclass, name, text, integer, interval, interval, boolean, boolean),
    idgen.convert_online_resume(regclass), idgen.convert_online_stop(regclass), idgen.convert_online_abort(regclass),
    idgen_internal.online_conversion_plan(regclass, name, text, bigint, boolean), idgen_internal.online_conversion_next(bigint),
    idgen_internal.online_conversion_step_done(bigint, integer), idgen_internal.online_conversion_lock_step(bigint, integer),
    idgen_internal.online_conversion_lock_held(bigint, integer, double precision, boolean),
    idgen_internal.online_conversion_copy_batch(bigint, integer), idgen_internal.online_conversion_index_leftover(bigint, integer),
    idgen_internal.online_conversion_run_step(bigint, integer), idgen_internal.online_conversion_finish(bigint, text, text),
    idgen_internal.online_conversion_launch(bigint), idgen_internal.online_conversion_of(regclass, text),
    idgen_internal.online_conversion_stop(bigint), idgen_internal.online_conversion_copy(),
    idgen_internal.online_conversion_worker(bigint), idgen_internal.online_conversion_latest_state(bigint),
    idgen_internal.online_conversion_state(bigint, text, timestamptz) TO PUBLIC;
GRANT EXECUTE ON PROCEDURE idgen.convert_online_wait(regclass, interval) TO PUBLIC;
-- The key bounds a condition on the time inside a key adds (idgen.time_conditions): they run in
-- every role's queries. Arithmetic of their arguments, nothing else (IMMUTABLE; STABLE those of a
-- timestamp or a date, and the time_local_/time_trunc_ ones, which read a zone's offsets as
-- PostgreSQL's comparisons and casts do); with them what it adds beside them: within_range and
-- key_range_estimate (their own values, estimated by their support functions, which only the
-- planner calls) and min_key/max_key (the min and max of a UUID key; their functions run as their
-- owner, as every aggregate's do).
GRANT EXECUTE ON FUNCTION idgen_internal.id_time_lower(timestamptz, boolean, text),
    idgen_internal.id_time_upper(timestamptz, boolean, text),
    idgen_internal.uuidv7_time_lower(timestamptz, boolean),
    idgen_internal.uuidv7_time_upper(timestamptz, boolean),
    idgen_internal.id_time_lower(timestamp, boolean, text),
    idgen_internal.id_time_upper(timestamp, boolean, text),
    idgen_internal.id_time_lower(date, boolean, text),
    idgen_internal.id_time_upper(date, boolean, text),
    idgen_internal.uuidv7_time_lower(timestamp, boolean),
    idgen_internal.uuidv7_time_upper(timestamp, boolean),
    idgen_internal.uuidv7_time_lower(date, boolean),
    idgen_internal.uuidv7_time_upper(date, boolean),
    idgen_internal.time_local_lower(timestamp, text, text),
    idgen_internal.time_local_upper(timestamp, text, text),
    idgen_internal.time_local_lower(date, text, text),
    idgen_internal.time_local_upper(date, text, text),
    idgen_internal.time_trunc_lower(timestamptz, text, text),
    idgen_internal.time_trunc_upper(timestamptz, text, text),
    idgen_internal.time_trunc_lower(timestamp, text, text),
    idgen_internal.time_trunc_upper(timestamp, text, text),
    idgen_internal.time_trunc_lower(date, text, text),
    idgen_internal.time_trunc_upper(date, text, text),
    idgen_internal.within_range(boolean),
    idgen_internal.key_range_estimate(uuid),
    idgen_internal.max_key(uuid), idgen_internal.min_key(uuid) TO PUBLIC;

-- Clients: leases and whole ranges. The lease functions are SECURITY DEFINER with a pinned
-- search_path; segment_alloc goes through the allocator worker.
GRANT EXECUTE ON FUNCTION idgen.worker_acquire(text, interval, integer, integer),
    idgen.worker_heartbeat(integer, text, timestamp with time zone, bigint),
    idgen.worker_release(integer, text, timestamp with time zone, bigint),
    idgen.segment_alloc(text) TO idgen_client;

-- Administrators: everything in idgen (and the functions behind its views).
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA idgen, idgen_internal TO idgen_admin;
-- IDs at a past time: administrators, and the roles they grant them to (docs/backfill.md).
REVOKE EXECUTE ON FUNCTION snowflake_at(timestamptz), snowflake_at_batch(timestamptz[]),
    uuidv7_at(timestamptz), uuidv7_at_batch(timestamptz[]) FROM PUBLIC;
-- WITH GRANT OPTION: a member of idgen_admin who is no superuser may grant them on.
GRANT EXECUTE ON FUNCTION snowflake_at(timestamptz), snowflake_at_batch(timestamptz[]),
    uuidv7_at(timestamptz), uuidv7_at_batch(timestamptz[]) TO idgen_admin WITH GRANT OPTION;
-- (Deleting a row of idgen.segments_retired is how an administrator lets a dropped type's IDs be
-- handed out again.)
GRANT SELECT, INSERT, UPDATE, DELETE ON idgen.segments, idgen.segments_retired, idgen.workers TO idgen_admin;
-- (idgen.snowflake_start_after() records this system in idgen.node_origins.)
GRANT SELECT, INSERT, DELETE ON idgen.node_origins TO idgen_admin;
GRANT SELECT ON idgen.segment_status, idgen.worker_leases TO idgen_admin;

-- Monitoring: pg_monitor, and so every standard monitoring role (postgres_exporter, sql_exporter,
-- CloudNativePG's exporter), reads every status view, with nothing secret in it: the segment
-- types and their ranges, and the leases without their lease numbers (a holder's proof at
-- heartbeat and release). The views run these functions with the reader's rights.
GRANT SELECT ON idgen.segment_status TO pg_monitor;
GRANT SELECT (worker_id, code, state, host, pid, ttl, acquired_at, heartbeat_at, expires_at,
    released_at, last_ts, next_start_after) ON idgen.worker_leases TO pg_monitor;
GRANT EXECUTE ON FUNCTION idgen_internal.segment_cache(), idgen_internal.worker_free_at(idgen.workers),
    idgen_internal.worker_start_after(idgen.workers) TO pg_monitor;
