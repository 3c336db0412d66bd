-- Worker-id leases: how a lease row reads (were #[pg_test]s of src/lease/sql.rs; workers.sql takes
-- leases in autocommit, and checks that acquire and heartbeat refuse a transaction block). Each
-- "-- check:" line starts one check (tests/all.sh counts them); each runs in a transaction that is
-- rolled back. A holder's row is written straight into the table by pg_temp.holder (inside a
-- transaction, where worker_acquire() refuses to run).
CREATE EXTENSION pg_idgen;
\set VERBOSITY default

CREATE FUNCTION pg_temp.holder(w int, state text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE expires timestamptz; released timestamptz;
BEGIN
  expires := CASE state WHEN 'expired' THEN now() - interval '5 s' ELSE now() + interval '50 s' END;
  released := CASE state WHEN 'released' THEN now() - interval '1 s' END;
  INSERT INTO idgen.workers (worker_id, code, lease, ttl, acquired_at, heartbeat_at, expires_at, released_at, last_ts)
  VALUES (w, 'app-' || w, 3, '60 s', now() - interval '2 min', expires - interval '60 s', expires, released,
          expires - interval '61 s');
END $$;

-- check: a released lease starts after the holder's last time or the release
BEGIN;
SELECT pg_temp.holder(1, 'released');
SELECT idgen_internal.worker_start_after(w) = w.released_at AS last_ts_older_than_the_release
  FROM idgen.workers w WHERE worker_id = 1;
UPDATE idgen.workers SET last_ts = now() + interval '3 s' WHERE worker_id = 1;
SELECT idgen_internal.worker_start_after(w) = w.last_ts AS a_holder_clock_ahead_is_believed
  FROM idgen.workers w WHERE worker_id = 1;
ROLLBACK;

-- check: an expired lease starts after its expiry plus the grace period
BEGIN;
SELECT pg_temp.holder(2, 'expired');
SET LOCAL idgen.worker_lease_grace = '4s';
SELECT idgen_internal.worker_start_after(w) = w.expires_at + interval '4 s' AS after_grace
  FROM idgen.workers w WHERE worker_id = 2;
-- A holder whose last ID was ahead of its heartbeat may have gone on that far ahead until the
-- lease ran out.
UPDATE idgen.workers SET last_ts = heartbeat_at + interval '10 s' WHERE worker_id = 2;
SELECT idgen_internal.worker_start_after(w) = w.expires_at + interval '14 s' AS after_its_lead
  FROM idgen.workers w WHERE worker_id = 2;
SELECT state FROM idgen.worker_leases WHERE worker_id = 2;
ROLLBACK;

-- check: a lease expired by hand is free only after its holder's own deadline
-- (an operator moves expires_at back: the holder's next heartbeat fails, but until then it may go
-- on to its own deadline, its last renewal + ttl)
BEGIN;
SELECT pg_temp.holder(5, 'held');
SET LOCAL idgen.worker_lease_grace = '2s';
UPDATE idgen.workers SET expires_at = now() - interval '1 h' WHERE worker_id = 5;
SELECT idgen_internal.worker_free_at(w) = w.heartbeat_at + w.ttl + interval '2 s' AS free_at_its_deadline,
       idgen_internal.worker_start_after(w) = w.heartbeat_at + w.ttl + interval '2 s' AS starts_after_it
  FROM idgen.workers w WHERE worker_id = 5;
SELECT state FROM idgen.worker_leases WHERE worker_id = 5;
ROLLBACK;

-- check: release is for the holder only, and runs in a transaction
BEGIN;
SELECT pg_temp.holder(3, 'held');
SELECT idgen.worker_release(3, 'app-3', now() + interval '1 s', 3) AS released;
SELECT state, last_ts = now() + interval '1 s' AS last_ahead FROM idgen.worker_leases WHERE worker_id = 3;
SELECT idgen.worker_release(3, 'app-3', lease => 3) AS released_again;
ROLLBACK;

-- check: release without the lease number is refused
-- (the code is a name anyone may read: without the lease number no one, not even a superuser,
-- ends a live lease)
BEGIN;
SELECT pg_temp.holder(6, 'held');
SELECT idgen.worker_release(6, 'app-6', clock_timestamp());
ROLLBACK;

-- check: release with a stale lease number is refused
BEGIN;
SELECT pg_temp.holder(4, 'held');
SELECT idgen.worker_release(4, 'app-4', lease => 2);
ROLLBACK;

-- check: a node with a worker id setting reports it
SELECT source, worker_id, can_generate FROM idgen.worker_status;

-- check: the table refuses rows that make no sense
BEGIN;
DO $$
DECLARE bad text; refused int := 0;
BEGIN
  FOREACH bad IN ARRAY ARRAY[
      $r$(-1, 'a', 1, '1 s', now(), now(), now())$r$,
      $r$(1, '', 1, '1 s', now(), now(), now())$r$,
      $r$(1, 'a', 0, '1 s', now(), now(), now())$r$,
      $r$(1, 'a', 1, '0 s', now(), now(), now())$r$] LOOP
    BEGIN
      EXECUTE 'INSERT INTO idgen.workers (worker_id, code, lease, ttl, acquired_at, heartbeat_at, expires_at) VALUES ' || bad;
    EXCEPTION WHEN check_violation THEN refused := refused + 1;
    END;
  END LOOP;
  RAISE NOTICE '% of 4 bad rows refused', refused;
END $$;
ROLLBACK;

DROP EXTENSION pg_idgen;
