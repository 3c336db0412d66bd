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
-- ... and so does every column of the idgen views and tables, for \d+.
SELECT c.oid::regclass AS relation, a.attname AS undocumented_column
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
 WHERE c.relnamespace = 'idgen'::regnamespace AND c.relkind IN ('r', 'v')
   AND col_description(c.oid, a.attnum) IS NULL
 ORDER BY 1, 2;
SELECT count(*) AS documented_columns
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
 WHERE c.relnamespace = 'idgen'::regnamespace AND c.relkind IN ('r', 'v')
   AND col_description(c.oid, a.attnum) IS NOT NULL;
-- What \df idgen.* lists: the functions users call. Those behind the views and tables (view
-- rows, triggers, lease helpers) are in idgen_internal.
SELECT p.oid::regprocedure AS "\df idgen.*" FROM pg_proc p
 WHERE p.pronamespace = 'idgen'::regnamespace ORDER BY p.oid::regprocedure::text;
SELECT count(*) > 15 AS has_members FROM pg_depend
 WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen') AND deptype = 'e';
-- What \dx+ pg_idgen shows an operator: every object, each documented above (without the row
-- types of tables and views, which PostgreSQL 17 and later list too).
SELECT pg_describe_object(d.classid, d.objid, 0) AS "Object description"
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_idgen')
   AND d.deptype = 'e'
   AND NOT EXISTS (SELECT 1 FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem
                    WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                      AND (t.typrelid <> 0 OR e.typrelid <> 0))
 ORDER BY 1;
-- ... and \dx its description.
SELECT extname, obj_description(oid, 'pg_extension') AS description
  FROM pg_extension WHERE extname = 'pg_idgen';
DROP EXTENSION pg_idgen;
