-- Worker-id leases (raindrop's worker table): golden tests of the coordinator's SQL surface. Times are shown
-- only as comparisons, so the output does not depend on the clock.
CREATE EXTENSION pg_idgen;
\set VERBOSITY default

-- check: Fresh ids come in order; a new id has no earlier holder to start after.
SELECT worker_id, lease > 0 AS has_lease, start_after IS NULL AS fresh,
       expires_at BETWEEN now() + interval '59 s' AND now() + interval '61 s' AS ttl_60s
  FROM idgen.worker_acquire('10.0.0.1:8080#a4:5e:60:b2:1c:01');
SELECT worker_id FROM idgen.worker_acquire('10.0.0.2:8080#a4:5e:60:b2:1c:02');
SELECT lease AS first_lease FROM idgen.workers WHERE worker_id = 0 \gset

-- check: A live lease is never handed out again, not even to its own code: that code gets another id.
SELECT worker_id FROM idgen.worker_acquire('10.0.0.1:8080#a4:5e:60:b2:1c:01');

-- check: Release, then the same code gets its old id back first (PriorityEqualCodeWorkId), with a
-- larger lease number (by a random step: only the holder knows it), told to start after the
-- release.
SELECT idgen.worker_release(0, '10.0.0.1:8080#a4:5e:60:b2:1c:01', lease => :first_lease) AS released;
SELECT idgen.worker_release(0, '10.0.0.1:8080#a4:5e:60:b2:1c:01', lease => :first_lease) AS released_again;
SELECT worker_id FROM idgen.worker_acquire('another code');
SELECT worker_id, lease - :first_lease BETWEEN 1 AND 1099511627776 AS grew_by_a_random_step,
       start_after IS NOT NULL AND start_after <= clock_timestamp() AS starts_after_release
  FROM idgen.worker_acquire('10.0.0.1:8080#a4:5e:60:b2:1c:01');
SELECT lease AS second_lease FROM idgen.workers WHERE worker_id = 0 \gset

-- check: Heartbeats renew and carry last_ts; a stale lease number (fencing) or another code is refused.
SELECT idgen.worker_heartbeat(0, '10.0.0.1:8080#a4:5e:60:b2:1c:01', clock_timestamp(), :second_lease) > clock_timestamp() AS renewed;
SELECT idgen.worker_heartbeat(0, '10.0.0.1:8080#a4:5e:60:b2:1c:01', lease => :second_lease) IS NOT NULL AS renewed_with_lease;
-- No error names another holder's code or lease number (they prove a holder).
\set VERBOSITY terse
SELECT idgen.worker_heartbeat(0, '10.0.0.1:8080#a4:5e:60:b2:1c:01', lease => :first_lease);
SELECT idgen.worker_heartbeat(0, 'someone else', lease => :second_lease);
SELECT idgen.worker_heartbeat(999, 'nobody', lease => 1);
\set VERBOSITY default
SELECT idgen.worker_release(1, 'someone else', lease => 1);
SELECT idgen.worker_release(999, 'nobody', lease => 1);
-- Without the lease number neither renews nor ends a lease, whoever calls: the code is a name that
-- other roles can read, not a proof (the lease stays held).
SELECT idgen.worker_heartbeat(0, '10.0.0.1:8080#a4:5e:60:b2:1c:01');
SELECT idgen.worker_release(0, '10.0.0.1:8080#a4:5e:60:b2:1c:01', clock_timestamp());
SELECT state FROM idgen.worker_leases WHERE worker_id = 0;

-- check: Exhaustion in a tiny range says so, and how many are held (terse: the detail has a time).
SELECT worker_id FROM idgen.worker_acquire('dc2-a', '10 s', 100, 101);
SELECT worker_id FROM idgen.worker_acquire('dc2-b', '10 s', 100, 101);
\set VERBOSITY terse
SELECT worker_id FROM idgen.worker_acquire('dc2-c', '10 s', 100, 101);

-- check: Expiry with a 1-second ttl: the lapsed holder's heartbeat is an ERROR; the id stays unusable
-- for the grace period, then goes to the next code, which starts after the old holder's time.
SET idgen.worker_lease_grace = '700ms';
SELECT worker_id, lease AS short_lease FROM idgen.worker_acquire('short-lived', '1 second', 200, 200) \gset
SELECT :worker_id AS worker_id;
SELECT idgen.worker_heartbeat(200, 'short-lived', clock_timestamp(), :short_lease) IS NOT NULL AS renewed;
SELECT pg_sleep(1.2);
SELECT idgen.worker_heartbeat(200, 'short-lived', lease => :short_lease);
SELECT worker_id FROM idgen.worker_acquire('successor', '1 second', 200, 200);
\set VERBOSITY default
SELECT state FROM idgen.worker_leases WHERE worker_id = 200;
SELECT pg_sleep(0.6);
SELECT worker_id, lease > 0 AS has_lease,
       start_after >= (SELECT last_ts FROM idgen.workers WHERE worker_id = 200) AS after_old_holder
  FROM idgen.worker_acquire('successor', '1 second', 200, 200);
RESET idgen.worker_lease_grace;

-- check: The table and the view.
SELECT worker_id, code, state FROM idgen.worker_leases ORDER BY worker_id;
SELECT count(*) AS rows_in_table FROM idgen.workers;

-- check: Bad arguments: each an ERROR with its SQLSTATE.
\set VERBOSITY sqlstate
SELECT * FROM idgen.worker_acquire(NULL);
SELECT * FROM idgen.worker_acquire('');
SELECT * FROM idgen.worker_acquire('x', '500 ms');
SELECT * FROM idgen.worker_acquire('x', '8 days');
SELECT * FROM idgen.worker_acquire('x', '1 min', 5, 4);
SELECT * FROM idgen.worker_acquire('x', '1 min', -1, 4);
-- A range up to the largest integer: no overflow on the way (it was 22003 inside the function).
SELECT worker_id FROM idgen.worker_acquire('wide', '1 min', 2147483646, 2147483647);
SELECT worker_id FROM idgen.worker_acquire('wide2', '1 min', 2147483646, 2147483647);
SELECT * FROM idgen.worker_acquire('wide3', '1 min', 2147483646, 2147483647);
SELECT idgen.worker_heartbeat(NULL, 'x');
SELECT idgen.worker_heartbeat(0, '10.0.0.1:8080#a4:5e:60:b2:1c:01', now() + interval '2 hours', :second_lease);
BEGIN;
SELECT * FROM idgen.worker_acquire('in a transaction');
ROLLBACK;
BEGIN;
SELECT idgen.worker_heartbeat(0, '10.0.0.1:8080#a4:5e:60:b2:1c:01');
ROLLBACK;
\set VERBOSITY default

-- check: This server takes its worker id from the setting: the status says so.
SELECT source, state, worker_id, can_generate FROM idgen.worker_status;
SELECT worker_id, worker_id_source FROM idgen.status;
DROP EXTENSION pg_idgen;
