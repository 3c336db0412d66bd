-- idgen.node_origins: the database systems whose IDs this database may hold (src/node/origin_check.rs).
CREATE TABLE idgen.node_origins (
    system_identifier bigint NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE idgen.node_origins IS 'The database systems (pg_control system identifiers) whose IDs this database may hold. When a row names another system (after pg_upgrade, a restore onto another server, a file copy), Snowflake IDs, message IDs and UUIDv7s are refused here until idgen.snowflake_start_after() moves this node past the old IDs, which leaves only this system''s row.';
COMMENT ON COLUMN idgen.node_origins.system_identifier IS 'system_identifier of pg_control_system() on the system that made IDs here.';
COMMENT ON COLUMN idgen.node_origins.recorded_at IS 'When the row was written.';
SELECT pg_catalog.pg_extension_config_dump('idgen.node_origins', '');
INSERT INTO idgen.node_origins (system_identifier) VALUES (idgen.node_system_identifier());
-- A database's owner restores its rows with the application's (pg_restore --no-owner, the
-- managed-database recipe), so that a restore onto another server is refused there too; nobody
-- else adds rows (a row naming another system refuses the database's time-based IDs).
CREATE FUNCTION idgen_internal.node_origins_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT (pg_has_role(current_user, 'idgen_admin', 'MEMBER')
            OR pg_has_role(current_user, (SELECT d.datdba FROM pg_database d WHERE d.datname = current_database()), 'MEMBER')) THEN
        RAISE EXCEPTION 'permission denied to add rows to idgen.node_origins'
            USING ERRCODE = '42501',
                  DETAIL = 'Only the database''s owner (restoring its dump) and members of idgen_admin record the systems whose IDs a database holds.',
                  HINT = 'Restore as the database''s owner or as a member of idgen_admin.';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER node_origins_insert BEFORE INSERT ON idgen.node_origins
    FOR EACH ROW EXECUTE FUNCTION idgen_internal.node_origins_insert();
