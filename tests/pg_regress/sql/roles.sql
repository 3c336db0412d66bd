-- The hints of privilege errors: every object of the idgen schema that PUBLIC may not use is
-- refused to a plain role with a hint naming the role that may (were #[pg_test]s of src/roles.rs,
-- which compared src/roles.rs's lists with the catalog; here the refusal itself is tried, object by
-- object (its arguments NULL, from a subquery: a STRICT function called with a NULL constant is
-- folded to NULL by the planner before any privilege check), and its hint shown: the hook adds it
-- as the error is sent, so a PL/pgSQL handler would not see it). Each "-- check:" line starts one check (tests/all.sh counts them).
CREATE EXTENSION pg_idgen;
CREATE ROLE idgen_test_hints LOGIN;
CREATE TABLE idgen.my_own_table ();
-- check: the hints' roles match the grants
-- (a function is used by calling it, a view by reading it, a table by changing it too: everyone
-- may add rows to node_origins, through its trigger's check; only idgen_admin deletes them)
CREATE TEMP TABLE objects AS
SELECT p.proname::text AS object,
       CASE WHEN has_function_privilege('public', p.oid, 'EXECUTE') THEN 'PUBLIC'
            WHEN has_function_privilege('idgen_client', p.oid, 'EXECUTE') THEN 'idgen_client'
            ELSE 'idgen_admin' END AS grantee,
       has_function_privilege('idgen_admin', p.oid, 'EXECUTE') AS admin_may,
       format('SELECT idgen.%I(%s)', p.proname,
              (SELECT string_agg(format('(SELECT NULL::%s)', format_type(t, NULL)), ', ' ORDER BY n)
                 FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, n))) AS use
  FROM pg_proc p WHERE p.pronamespace = 'idgen'::regnamespace
UNION ALL
SELECT c.relname::text,
       CASE WHEN has_table_privilege('public', c.oid, 'SELECT')
                 AND (c.relkind = 'v' OR has_table_privilege('public', c.oid, 'DELETE')) THEN 'PUBLIC'
            WHEN has_table_privilege('idgen_client', c.oid, 'SELECT')
                 AND (c.relkind = 'v' OR has_table_privilege('idgen_client', c.oid, 'DELETE')) THEN 'idgen_client'
            ELSE 'idgen_admin' END,
       has_table_privilege('idgen_admin', c.oid, 'SELECT')
         AND (c.relkind = 'v' OR has_table_privilege('idgen_admin', c.oid, 'DELETE')),
       CASE WHEN has_table_privilege('public', c.oid, 'SELECT') THEN format('DELETE FROM idgen.%I WHERE false', c.relname)
            ELSE format('SELECT FROM idgen.%I LIMIT 0', c.relname) END
  FROM pg_class c
 WHERE c.relnamespace = 'idgen'::regnamespace AND c.relkind IN ('r', 'v') AND c.relname <> 'my_own_table';
GRANT SELECT ON objects TO idgen_test_hints;
SELECT object, grantee, admin_may FROM objects ORDER BY grantee, object;
\set VERBOSITY default
SET ROLE idgen_test_hints;
SELECT use FROM objects WHERE grantee <> 'PUBLIC' ORDER BY grantee, object \gexec
RESET ROLE;

-- check: a hint names only pg_idgen's own objects
SET ROLE idgen_test_hints;
SELECT FROM idgen.my_own_table;
RESET ROLE;

DROP TABLE objects, idgen.my_own_table;
DROP EXTENSION pg_idgen;
DROP ROLE idgen_test_hints;
