-- idgen.worker_status, over idgen_internal.worker_lease_state() (src/lease/mod.rs).
CREATE VIEW idgen.worker_status AS SELECT * FROM idgen_internal.worker_lease_state();
COMMENT ON VIEW idgen.worker_status IS 'Where this node''s worker id comes from; in lease mode: the lease, whether IDs can be made now, how long it stays valid without renewal, expiry at the coordinator, last heartbeat, the time IDs start after, counters and the keeper''s last error.';
