-- pg_idgen 0.2.4 -> 0.2.5
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.2.5'" to load this file. \quit

-- Made by tools/upgrade_sql.py (make upgrade-sql) from sql/upgrade/0.2.4--0.2.5.sql, the part
-- written by hand: what changes in objects 0.2.4 already has. Everything new (UUIDv7s and ULIDs,
-- the key-type check, key conversion, idgen.streams, the read horizon, public IDs, idgen.refusals,
-- idgen.segment_allocators, partition bounds, IDs at a past time, node origins' trigger, adopted
-- sequences, online key conversion) is copied below from the install script (sql/install/ and the library's functions),
-- with every comment and the privileges of a fresh install.

-- The generators run only in the leader of a parallel query, so that the IDs of one statement
-- increase in the order its rows are produced (parallel workers interleaved them).
-- @replace function snowflake_next
-- @replace function snowflake_next_batch
-- @replace function msgid_next

-- idgen.worker_heartbeat and idgen.worker_release: the lease number is required (42501 without
-- it): the code is a name other roles can read, and with it alone any member of idgen_client
-- could end a live lease of another holder, whose worker id then went to a second holder. A lost
-- lease (55000, "lease lost: ...", as before) also names the condition idgen_lease_lost in the
-- error's CONSTRAINT field, which the lease keeper of a node reads instead of the message.
-- idgen.worker_acquire: its hint and a comment in its body named a design by its public name.
-- CREATE OR REPLACE keeps the functions' privileges and comments.
-- @replace function idgen.worker_heartbeat
-- @replace function idgen.worker_release
-- @replace function idgen.worker_acquire

-- @new objects

-- Online key conversion: row level security of its two new tables (created above, with the rest
-- of what is new): a role sees and writes only the conversions of its roles.
-- @changed statement ALTER TABLE idgen_internal.online_conversions: enables row level security of the new table, and its REPLICA trigger, below
-- @changed statement ALTER TABLE idgen_internal.online_conversion_steps: enables row level security of the new table, and its REPLICA trigger, below
-- @changed statement CREATE POLICY members_only: the policies of the new tables, below
ALTER TABLE idgen_internal.online_conversions ENABLE ROW LEVEL SECURITY;
ALTER TABLE idgen_internal.online_conversion_steps ENABLE ROW LEVEL SECURITY;
-- Their rows stop at a logical replication apply worker (the trigger fires only then).
ALTER TABLE idgen_internal.online_conversions ENABLE REPLICA TRIGGER not_applied;
ALTER TABLE idgen_internal.online_conversion_steps ENABLE REPLICA TRIGGER not_applied;
CREATE POLICY members_only ON idgen_internal.online_conversions
    USING (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'));
CREATE POLICY members_only ON idgen_internal.online_conversion_steps
    USING (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(CURRENT_USER, role, 'USAGE'));
