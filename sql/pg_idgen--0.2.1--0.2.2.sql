-- pg_idgen 0.2.1 -> 0.2.2: idgen.node_origins, the database systems whose IDs a database may
-- hold, so that a database carried to another system (pg_upgrade, a restore onto another server,
-- a file copy) refuses Snowflake and message IDs until idgen.snowflake_start_after() has moved the
-- new system past its old IDs.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.2.2'" to load this file. \quit

CREATE FUNCTION idgen."node_system_identifier"() RETURNS bigint /* i64 */
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'node_system_identifier_wrapper';

CREATE TABLE idgen.node_origins (
    system_identifier bigint NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE idgen.node_origins IS 'The database systems (pg_control system identifiers) whose IDs this database may hold. When a row names another system (after pg_upgrade, a restore onto another server, a file copy), Snowflake and message IDs are refused here until idgen.snowflake_start_after() moves this node past the old IDs, which leaves only this system''s row.';
COMMENT ON COLUMN idgen.node_origins.system_identifier IS 'system_identifier of pg_control_system() on the system that made IDs here.';
COMMENT ON COLUMN idgen.node_origins.recorded_at IS 'When the row was written.';
SELECT pg_catalog.pg_extension_config_dump('idgen.node_origins', '');
-- An installation updated in place made its IDs on this system. (Update before pg_upgrade: run
-- after it, this would record the new system and not the old one.)
INSERT INTO idgen.node_origins (system_identifier) VALUES (idgen.node_system_identifier());

COMMENT ON FUNCTION idgen.node_system_identifier() IS
  'This database system''s identifier (system_identifier of pg_control_system()), as idgen.node_origins records it.';

REVOKE ALL ON idgen.node_origins FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION idgen.node_system_identifier() FROM PUBLIC;
GRANT SELECT ON idgen.node_origins TO PUBLIC;
GRANT EXECUTE ON FUNCTION idgen.node_system_identifier() TO idgen_admin;
GRANT SELECT, INSERT, DELETE ON idgen.node_origins TO idgen_admin;
