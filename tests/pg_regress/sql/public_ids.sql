-- Public IDs: known answers under fixed keys (the first is the key tests/system/public_ids.sh
-- checks against an independent FF1 on 10,000 values per form), round trips and refusals.
CREATE EXTENSION pg_idgen;
SELECT idgen.public_key_create('golden', 'inv', '\x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'::bytea);
SELECT idgen.public_key_create('golden128', '', '\x2b7e151628aed2a6abf7158809cf4f3c'::bytea);
SELECT x, idgen.encrypt_id(x, 'golden') AS e, idgen.encrypt_id_js_safe(x & 9007199254740991, 'golden') AS js,
       idgen.id_to_public(x, 'golden') AS public, idgen.id_to_public(x, 'golden128') AS no_prefix
  FROM unnest(ARRAY[0, 1, 2, -1, 9223372036854775807, -9223372036854775808, 1700000000000000000]::bigint[]) x;
SELECT idgen.encrypt_uuid('01890a5d-ac96-774b-bcce-b302099a8057', 'golden') AS e,
       idgen.uuid_to_public('01890a5d-ac96-774b-bcce-b302099a8057', 'golden') AS public;
-- Round trips.
SELECT count(*) FILTER (WHERE idgen.decrypt_id(idgen.encrypt_id(x, 'golden'), 'golden') <> x
                           OR idgen.public_to_id(idgen.id_to_public(x, 'golden'), 'golden') <> x) AS wrong
  FROM generate_series(-1000, 1000) x;
SELECT idgen.decrypt_uuid(idgen.encrypt_uuid('01890a5d-ac96-774b-bcce-b302099a8057', 'golden'), 'golden'),
       idgen.public_to_uuid(idgen.uuid_to_public('01890a5d-ac96-774b-bcce-b302099a8057', 'golden'), 'golden');
-- Refusals.
\set VERBOSITY terse
SELECT idgen.encrypt_id_js_safe(-1, 'golden');
SELECT idgen.encrypt_uuid('6ba7b810-9dad-41d1-80b4-00c04fd430c8', 'golden');
SELECT idgen.public_to_id('usr_01abcdefghjkmnpqrstvwx', 'golden');
SELECT idgen.public_to_id('inv_01abcdefghjkmnpqrstvwx', 'golden');
SELECT idgen.encrypt_id(1, 'missing');
SELECT idgen.public_key_create('golden');
\set VERBOSITY default
SELECT name, prefix, version, current, fingerprint FROM idgen.public_keys ORDER BY name, version;
SELECT idgen.public_key_drop('golden');
SELECT idgen.public_key_drop('golden128');
DROP EXTENSION pg_idgen;
