-- IDs at a past time (docs/backfill.md): the counters of backfill blocks. A row is a bucket of
-- 1,024 ticks of one stream (a backfill worker id, or -1 for UUIDv7s); next_seq is the first
-- sequence number no block of it has had. Only the allocator worker writes it, committing
-- before any number of a block is used (src/backfill/counters.rs). Readable by superusers
-- only; the counters only move forward and rows are never deleted.
CREATE TABLE idgen_internal.backfill_counters (
    stream     integer NOT NULL CHECK (stream >= -1),
    bucket     bigint NOT NULL CHECK (bucket >= 0),
    next_seq   integer NOT NULL CHECK (next_seq >= 0),
    updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (stream, bucket)
);
COMMENT ON TABLE idgen_internal.backfill_counters IS 'IDs at a past time (snowflake_at, uuidv7_at): per stream (the backfill worker id, -1 for UUIDv7s) and bucket of 1,024 ticks, the first sequence number no backfill has had. Written only by the allocator worker; never move a counter back or delete a row.';
REVOKE ALL ON idgen_internal.backfill_counters FROM PUBLIC;
-- pg_dump keeps the counters, so backfills after a restore continue above them.
SELECT pg_catalog.pg_extension_config_dump('idgen_internal.backfill_counters', '');

-- A counter moved back, or a row deleted, would hand its numbers out again.
CREATE FUNCTION idgen_internal.backfill_counters_guard() RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.stream <> OLD.stream OR NEW.bucket <> OLD.bucket OR NEW.next_seq < OLD.next_seq THEN
            RAISE EXCEPTION 'a backfill counter can only move forward'
                USING ERRCODE = '22023',
                      HINT = 'Its numbers may have been handed out; to start over, set idgen.backfill_worker_id to a worker id no node has used.';
        END IF;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'the rows of idgen_internal.backfill_counters cannot be deleted'
        USING ERRCODE = '55000',
              HINT = 'Their numbers may have been handed out; to start over, set idgen.backfill_worker_id to a worker id no node has used.';
END $$;
COMMENT ON FUNCTION idgen_internal.backfill_counters_guard() IS 'Trigger of idgen_internal.backfill_counters: a counter only moves forward, and no row is deleted (their numbers may have been handed out).';
CREATE TRIGGER backfill_counters_forward BEFORE UPDATE OR DELETE ON idgen_internal.backfill_counters
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.backfill_counters_guard();
CREATE TRIGGER backfill_counters_keep BEFORE TRUNCATE ON idgen_internal.backfill_counters
    FOR EACH STATEMENT EXECUTE FUNCTION idgen_internal.backfill_counters_guard();
