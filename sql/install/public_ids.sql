-- Public IDs (README, "Public IDs"): the keys. Only the table's owner (a superuser) may read
-- idgen_internal.public_keys; administrators (idgen_admin) create, rotate and drop keys through
-- the functions below, which never return a key; everyone may encrypt and decrypt with a key by
-- its name (src/public_id.rs), and see the keys' names, prefixes, versions and fingerprints in
-- idgen.public_keys.
CREATE TABLE idgen_internal.public_keys (
    name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{0,62}$'),
    version integer NOT NULL CHECK (version BETWEEN 1 AND 1023),
    prefix text NOT NULL CHECK (prefix ~ '^([a-z][a-z0-9]{0,15})?$'),
    -- NULL once the version is dropped: the row stays, so its number is never used again.
    key bytea CHECK (length(key) IN (16, 24, 32)),
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by name NOT NULL DEFAULT session_user,
    dropped_at timestamptz,
    PRIMARY KEY (name, version)
);
COMMENT ON TABLE idgen_internal.public_keys IS 'The keys of public IDs (AES keys for FF1). Readable by superusers only; back it up as a secret.';
-- pg_dump keeps the keys (a dump made by a superuser holds them: keep it as a secret); a dump
-- made by a role that may not read them fails on this table rather than leave them out.
SELECT pg_catalog.pg_extension_config_dump('idgen_internal.public_keys', '');
REVOKE ALL ON idgen_internal.public_keys FROM PUBLIC;
CREATE TRIGGER public_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON idgen_internal.public_keys
    FOR EACH STATEMENT EXECUTE FUNCTION idgen_internal.public_keys_changed();

-- The arguments are checked before the row is written, so that no constraint's error (whose
-- DETAIL shows the failing row) can ever print a key.
CREATE FUNCTION idgen_internal.public_key_check(name text, prefix text, key bytea) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF name IS NULL OR name !~ '^[a-z][a-z0-9_]{0,62}$' THEN
        RAISE EXCEPTION 'a public key''s name is 1 to 63 of a-z, 0-9 and _, starting with a letter: %', coalesce(quote_literal(name), 'NULL')
            USING ERRCODE = '22023';
    END IF;
    IF prefix IS NULL OR prefix !~ '^([a-z][a-z0-9]{0,15})?$' THEN
        RAISE EXCEPTION 'a public ID prefix is empty or 1 to 16 of a-z and 0-9, starting with a letter: %', coalesce(quote_literal(prefix), 'NULL')
            USING ERRCODE = '22023', HINT = 'The text form is prefix_ and 22 characters; the prefix names the kind of ID (inv, usr).';
    END IF;
    IF key IS NOT NULL AND length(key) NOT IN (16, 24, 32) THEN
        RAISE EXCEPTION 'an AES key is 16, 24 or 32 bytes, not %', length(key)
            USING ERRCODE = '22023', HINT = 'Leave key out for a random 32-byte key; give the same key on every node that must read the same public IDs.';
    END IF;
END
$$;

-- A key given as a literal stays in the statement's text, which pg_stat_activity (while the
-- session is in it) and pg_stat_statements (inside a DO block or a function, and with
-- track = all) show to every member of pg_monitor: warn, so that the caller passes it as a bind
-- parameter instead (docs/public-ids.md).
CREATE FUNCTION idgen_internal.public_key_in_statement(key bytea) RETURNS void
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    text_of_statement text := lower(coalesce(current_query(), ''));
BEGIN
    IF key IS NOT NULL AND (position(encode(key, 'hex') IN text_of_statement) > 0
                            OR position(lower(encode(key, 'base64')) IN text_of_statement) > 0) THEN
        RAISE WARNING 'the key''s bytes are in the text of the statement'
            USING ERRCODE = '01000',
                  DETAIL = 'pg_stat_activity and pg_stat_statements keep statement texts, and every member of pg_monitor reads them: whoever read this one has the key.',
                  HINT = 'Pass the key as a bind parameter (psql 16 or later: \bind; a driver''s query parameters), never as a literal; for this key, rotate it (idgen.public_key_rotate) with bytes given that way.';
    END IF;
END
$$;

CREATE FUNCTION idgen.public_key_create(name text, prefix text DEFAULT '', key bytea DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM idgen_internal.public_key_check(public_key_create.name, public_key_create.prefix, public_key_create.key);
    PERFORM idgen_internal.public_key_in_statement(public_key_create.key);
    PERFORM pg_advisory_xact_lock(hashtext('idgen.public_keys'), hashtext(public_key_create.name));
    IF EXISTS (SELECT FROM idgen_internal.public_keys k WHERE k.name = public_key_create.name) THEN
        RAISE EXCEPTION 'public key "%" exists', public_key_create.name
            USING ERRCODE = '42710', HINT = 'Make a new version with idgen.public_key_rotate(), or drop the key first with idgen.public_key_drop().';
    END IF;
    INSERT INTO idgen_internal.public_keys (name, version, prefix, key)
    VALUES (public_key_create.name, 1, public_key_create.prefix,
            coalesce(public_key_create.key, idgen_internal.public_key_random()));
    RETURN 1;
END
$$;

CREATE FUNCTION idgen.public_key_rotate(name text, key bytea DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    r idgen_internal.public_keys;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('idgen.public_keys'), hashtext(public_key_rotate.name));
    SELECT * INTO r FROM idgen_internal.public_keys k WHERE k.name = public_key_rotate.name ORDER BY k.version DESC LIMIT 1;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'public key "%" does not exist', public_key_rotate.name
            USING ERRCODE = '42704', HINT = 'Create it with idgen.public_key_create().';
    END IF;
    PERFORM idgen_internal.public_key_check(r.name, r.prefix, public_key_rotate.key);
    PERFORM idgen_internal.public_key_in_statement(public_key_rotate.key);
    IF r.version >= 1023 THEN
        RAISE EXCEPTION 'public key "%" has had 1023 versions, the most its text forms can name', r.name
            USING ERRCODE = '54000', HINT = 'Create a key under a new name for new IDs.';
    END IF;
    INSERT INTO idgen_internal.public_keys (name, version, prefix, key)
    VALUES (r.name, r.version + 1, r.prefix, coalesce(public_key_rotate.key, idgen_internal.public_key_random()));
    RETURN r.version + 1;
END
$$;

CREATE FUNCTION idgen.public_key_drop(name text, version integer DEFAULT NULL) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    newest integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('idgen.public_keys'), hashtext(public_key_drop.name));
    SELECT max(k.version) INTO newest FROM idgen_internal.public_keys k WHERE k.name = public_key_drop.name;
    IF newest IS NULL THEN
        RAISE EXCEPTION 'public key "%" does not exist', public_key_drop.name USING ERRCODE = '42704';
    END IF;
    IF public_key_drop.version IS NULL THEN
        DELETE FROM idgen_internal.public_keys k WHERE k.name = public_key_drop.name;
        RETURN;
    END IF;
    IF public_key_drop.version = newest THEN
        RAISE EXCEPTION 'version % is the current version of public key "%"', newest, public_key_drop.name
            USING ERRCODE = '55000', HINT = 'Rotate first (idgen.public_key_rotate()), then drop the old version; or drop the whole key.';
    END IF;
    UPDATE idgen_internal.public_keys k SET key = NULL, dropped_at = now()
     WHERE k.name = public_key_drop.name AND k.version = public_key_drop.version AND k.key IS NOT NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'public key "%" has no version %', public_key_drop.name, public_key_drop.version USING ERRCODE = '42704';
    END IF;
END
$$;

CREATE VIEW idgen.public_keys AS
SELECT k.name, k.prefix, k.version,
       k.version = max(k.version) OVER (PARTITION BY k.name) AS current,
       k.created_at, k.created_by, k.dropped_at,
       CASE WHEN k.key IS NOT NULL THEN idgen_internal.public_key_fingerprint(k.name, k.version) END AS fingerprint
  FROM idgen_internal.public_keys k;

COMMENT ON FUNCTION idgen.public_key_create(text, text, bytea) IS 'Creates a key for public IDs (version 1): random unless key (16, 24 or 32 bytes) is given, as every node that reads the same public IDs must. The text forms start with prefix_. Returns the version.';
COMMENT ON FUNCTION idgen.public_key_rotate(text, bytea) IS 'Makes a new version of a key, used from now on for new public IDs; public IDs of the older versions still decrypt. Returns the new version.';
COMMENT ON FUNCTION idgen.public_key_drop(text, integer) IS 'Drops one old version of a key (public IDs made with it no longer decrypt; its number is not used again), or with version NULL the whole key.';
COMMENT ON VIEW idgen.public_keys IS 'The keys of public IDs: name, prefix, versions, and a fingerprint to compare nodes by; never the keys themselves.';
COMMENT ON COLUMN idgen.public_keys.name IS 'The key''s name, which the functions take.';
COMMENT ON COLUMN idgen.public_keys.prefix IS 'What its text forms start with (before _); empty for none.';
COMMENT ON COLUMN idgen.public_keys.version IS 'The version: its text forms carry it; the highest is current.';
COMMENT ON COLUMN idgen.public_keys.created_at IS 'When the version was made.';
COMMENT ON FUNCTION idgen_internal.public_key_check(text, text, bytea) IS 'Checks a key''s name, prefix and bytes before they are written (so that no constraint''s error shows a key).';
COMMENT ON FUNCTION idgen_internal.public_key_in_statement(bytea) IS 'Warns when a key''s bytes stand in the text of the statement that gives them (pg_monitor reads statement texts).';
COMMENT ON COLUMN idgen.public_keys.current IS 'Whether new public IDs are made with this version.';
COMMENT ON COLUMN idgen.public_keys.created_by IS 'The session user who made the version.';
COMMENT ON COLUMN idgen.public_keys.dropped_at IS 'When the version was dropped (its key is gone; its public IDs no longer decrypt).';
COMMENT ON COLUMN idgen.public_keys.fingerprint IS 'idgen.encrypt_id(0, name, version) in hex: equal on two nodes if and only if they hold the same key (but for chance).';
