-- Privileges: making and decoding IDs is for everyone; administration is for idgen_admin;
-- leasing worker ids and whole ranges for idgen_client. Each refusal is tried, not assumed.
CREATE EXTENSION pg_idgen;
CREATE ROLE idgen_test_plain LOGIN;
CREATE ROLE idgen_test_app LOGIN IN ROLE idgen_client;
CREATE ROLE idgen_test_admin LOGIN IN ROLE idgen_admin;
SELECT idgen.segment_create('priv');

-- check: A plain role makes and decodes IDs, and reads how the node makes them.
SET ROLE idgen_test_plain;
SELECT snowflake_next() > 0 AS snowflake, segment_next('priv') AS segment,
       length(msgid_next(1, 'x')) AS msgid_length, id_to_text(1) AS text_form;
SELECT worker_id FROM id_decode(snowflake_next());
SELECT count(*) > 5 AS layouts FROM idgen.layouts;
SELECT worker_id_source FROM idgen.status;
SELECT source FROM idgen.worker_status;

-- check: ... but cannot change any idgen.* setting, by any means.
\set VERBOSITY sqlstate
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    RETURN 'allowed';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;
SELECT name, context, pg_temp.try(format('SET %s = %L', name, setting)) AS "SET",
       pg_temp.try(format('SELECT set_config(%L, %L, false)', name, setting)) AS set_config,
       pg_temp.try(format('ALTER ROLE idgen_test_plain SET %s = %L', name, setting)) AS alter_role
  FROM pg_settings WHERE name LIKE 'idgen.%' ORDER BY name;
ALTER SYSTEM SET idgen.max_drift = '1s';

-- check: ... nor write the idgen tables.
SELECT t, pg_temp.try(format('INSERT INTO %s DEFAULT VALUES', t)) AS ins,
       pg_temp.try(format('UPDATE %s SET %s = %s', t, c, c)) AS upd,
       pg_temp.try(format('DELETE FROM %s', t)) AS del,
       pg_temp.try(format('TRUNCATE %s', t)) AS trunc,
       pg_temp.try(format('SELECT * FROM %s', t)) AS sel
  FROM unnest(ARRAY['idgen.segments', 'idgen.segments_retired', 'idgen.workers'], ARRAY['max_id', 'max_id', 'worker_id']) u(t, c);

-- check: ... nor call an administration function, nor read the admin views.
SELECT f, pg_temp.try('SELECT ' || f) AS result FROM unnest(ARRAY[
    $$idgen.segment_create('x')$$, $$idgen.segment_alter('priv', 10)$$, $$idgen.segment_drop('priv')$$,
    $$idgen.segment_alloc('priv')$$, $$idgen_internal.segment_cache()$$,
    $$idgen.worker_acquire('x')$$, $$idgen.worker_heartbeat(0, 'x')$$, $$idgen.worker_release(0, 'x')$$,
    $$idgen_internal.worker_lease_precheck('x')$$,
    $$count(*) FROM idgen.segment_status$$, $$count(*) FROM idgen.worker_leases$$]) f;
RESET ROLE;

-- check: An application role in idgen_client leases worker ids and takes whole ranges, nothing more.
SET ROLE idgen_test_app;
SELECT worker_id, lease > 0 AS has_lease FROM idgen.worker_acquire('app-1');
SELECT worker_id AS app_worker, lease AS app_lease FROM idgen.worker_acquire('app-2') \gset
-- Another client's lease, named by its code: neither renewed nor ended without its lease number.
SELECT idgen.worker_heartbeat(0, 'app-1');
SELECT idgen.worker_release(0, 'app-1');
SELECT idgen.worker_heartbeat(:app_worker, 'app-2', lease => :app_lease) > now() AS renewed;
SELECT idgen.worker_release(:app_worker, 'app-2', lease => :app_lease) AS released;
SELECT start_id, end_id FROM idgen.segment_alloc('priv');
SELECT pg_temp.try($$SELECT idgen.segment_create('x')$$) AS segment_create,
       pg_temp.try($$DELETE FROM idgen.workers$$) AS delete_workers,
       pg_temp.try($$SELECT * FROM idgen.worker_leases$$) AS read_leases;
RESET ROLE;

-- check: An administrator (not a superuser) does everything in idgen.
SET ROLE idgen_test_admin;
SELECT idgen.segment_create('admin-made', step => 5);
SELECT idgen.segment_alter('admin-made', 7);
SELECT segment_next('admin-made');
SELECT biz_type, configured_step FROM idgen.segment_status WHERE biz_type = 'admin-made';
SELECT worker_id, code, state FROM idgen.worker_leases;
UPDATE idgen.workers SET host = 'retired' WHERE worker_id = 0;
SELECT idgen.segment_drop('admin-made');
SELECT biz_type, max_id >= 7 AS remembered FROM idgen.segments_retired WHERE biz_type = 'admin-made';
SELECT pg_temp.try($$SET idgen.segment_wait_timeout = '1s'$$) AS admin_sets_wait_timeout;
RESET ROLE;

-- check: A superuser may let a role change the one per-session setting.
GRANT SET ON PARAMETER idgen.segment_wait_timeout TO idgen_test_app;
SET ROLE idgen_test_app;
SET idgen.segment_wait_timeout = '2s';
SHOW idgen.segment_wait_timeout;
RESET ROLE;
RESET idgen.segment_wait_timeout;
REVOKE SET ON PARAMETER idgen.segment_wait_timeout FROM idgen_test_app;
\set VERBOSITY default

-- check: Every SECURITY DEFINER function of the extension pins its search_path.
SELECT p.oid::regprocedure AS security_definer_function,
       EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%') AS pins_search_path
  FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen')
   AND d.deptype = 'e' AND d.classid = 'pg_proc'::regclass AND p.prosecdef
 ORDER BY p.oid::regprocedure::text;

-- check: What PUBLIC may execute in schemas idgen and idgen_internal: the functions behind the status
-- views, the read horizons, and the conversion of a key column (SECURITY INVOKER: ALTER TABLE's
-- own checks decide what a caller may change); nothing else.
SELECT p.oid::regprocedure AS public_function
  FROM pg_proc p WHERE p.pronamespace IN ('idgen'::regnamespace, 'idgen_internal'::regnamespace)
   AND has_function_privilege('idgen_test_plain', p.oid, 'EXECUTE')
 ORDER BY p.oid::regprocedure::text;

-- check: In the extension's own schema PUBLIC may execute every function but the backfills (IDs at a
-- past time use up the node's backfill counters: idgen_admin, and the roles it grants them to).
SELECT p.oid::regprocedure AS not_for_public
  FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen') AND d.deptype = 'e'
   AND d.classid = 'pg_proc'::regclass
   AND p.pronamespace NOT IN ('idgen'::regnamespace, 'idgen_internal'::regnamespace)
   AND NOT has_function_privilege('idgen_test_plain', p.oid, 'EXECUTE')
 ORDER BY p.oid::regprocedure::text;

-- check: A refusal names the role to grant (PostgreSQL raises it before pg_idgen's code runs; the hint
-- is added on its way to the client). A table or view gets it only if it is pg_idgen's: a user's
-- own tables called workers or segments get none, nor do other privilege errors.
SET ROLE idgen_test_plain;
SELECT idgen.segment_create('x');
SELECT count(*) FROM idgen.segment_status;
DELETE FROM idgen.node_origins;
SELECT * FROM idgen.worker_acquire('x');
SELECT snowflake_at(now());
RESET ROLE;
CREATE TABLE priv_own (id int);
CREATE TABLE public.workers (id int);
CREATE SCHEMA app;
CREATE TABLE app.segments (id int);
GRANT USAGE ON SCHEMA app TO PUBLIC;
REVOKE ALL ON priv_own, public.workers, app.segments FROM PUBLIC;
SET ROLE idgen_test_app;
SELECT * FROM idgen.worker_leases;
SELECT * FROM priv_own;
SELECT * FROM workers;
SELECT * FROM app.segments;
DELETE FROM app.segments;
SELECT * FROM idgen.segments;
RESET ROLE;
DROP TABLE priv_own, public.workers;
DROP SCHEMA app CASCADE;

-- check: Monitoring roles (pg_monitor) read every status view, and of idgen.worker_leases every column
-- but the lease numbers, a holder's proof; they change nothing.
CREATE ROLE idgen_test_monitor IN ROLE pg_monitor;
SET ROLE idgen_test_monitor;
SELECT count(*) >= 0 AS reads FROM idgen.status, idgen.streams, idgen.refusals, idgen.worker_status,
    idgen.segment_status, idgen.segment_allocators, idgen.read_horizon_holders;
SELECT count(*) AS refusal_rows, sum(refusals) AS refusals FROM idgen.refusals;
SELECT count(*) AS leases FROM (SELECT worker_id, code, state, host, pid, ttl, acquired_at,
    heartbeat_at, expires_at, released_at, last_ts, next_start_after FROM idgen.worker_leases) l;
SELECT worker_id, code, state FROM idgen.worker_leases ORDER BY worker_id;
SELECT lease FROM idgen.worker_leases;
SELECT idgen.segment_create('x');
SELECT count(*) FROM idgen.segments;
RESET ROLE;
DROP ROLE idgen_test_monitor;

DROP FUNCTION pg_temp.try(text);
DROP EXTENSION pg_idgen;
DROP ROLE idgen_test_plain, idgen_test_app, idgen_test_admin;
