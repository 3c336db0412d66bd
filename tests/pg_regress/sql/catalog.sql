-- Every function, table and view of the extension carries a COMMENT, so \dx+ and \df+ explain
-- themselves; an object added without one shows up here.
CREATE EXTENSION pg_idgen;
SELECT pg_describe_object(d.classid, d.objid, 0) AS undocumented
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen')
   AND d.deptype = 'e'
   AND d.classid IN ('pg_proc'::regclass, 'pg_class'::regclass, 'pg_namespace'::regclass)
   AND obj_description(d.objid, d.classid::regclass::text) IS NULL
 ORDER BY 1;
SELECT count(*) > 15 AS has_members FROM pg_depend
 WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen') AND deptype = 'e';
-- What \dx+ pg_idgen shows an operator: every object, each documented above.
\dx+ pg_idgen
-- ... and \dx its description.
SELECT extname, obj_description(oid, 'pg_extension') AS description
  FROM pg_extension WHERE extname = 'pg_idgen';
DROP EXTENSION pg_idgen;
