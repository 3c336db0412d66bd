-- Every function, table and view of the extension carries a COMMENT, so \dx+ and \df+ explain
-- themselves; an object added without one shows up here.
CREATE EXTENSION pg_idgen;
SELECT pg_describe_object(d.classid, d.objid, 0) AS undocumented
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen')
   AND d.deptype = 'e'
   AND d.classid IN ('pg_proc'::regclass, 'pg_class'::regclass)
   AND obj_description(d.objid, d.classid::regclass::text) IS NULL
 ORDER BY 1;
SELECT count(*) > 15 AS has_members FROM pg_depend
 WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen') AND deptype = 'e';
DROP EXTENSION pg_idgen;
