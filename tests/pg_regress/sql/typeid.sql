-- TypeIDs: the TypeID specification's own examples (version 0.3.0: spec/valid.yml and
-- spec/invalid.yml of github.com/jetify-com/typeid, written here as data, each with the name the
-- specification gives it), read and written both ways; every invalid one refused with 22P02.
CREATE EXTENSION pg_idgen;

CREATE TEMP TABLE valid (name text, typeid text, prefix text, id uuid);
INSERT INTO valid VALUES
  ('nil', '00000000000000000000000000', '', '00000000-0000-0000-0000-000000000000'),
  ('one', '00000000000000000000000001', '', '00000000-0000-0000-0000-000000000001'),
  ('ten', '0000000000000000000000000a', '', '00000000-0000-0000-0000-00000000000a'),
  ('sixteen', '0000000000000000000000000g', '', '00000000-0000-0000-0000-000000000010'),
  ('thirty-two', '00000000000000000000000010', '', '00000000-0000-0000-0000-000000000020'),
  ('max-valid', '7zzzzzzzzzzzzzzzzzzzzzzzzz', '', 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
  ('valid-alphabet', 'prefix_0123456789abcdefghjkmnpqrs', 'prefix', '0110c853-1d09-52d8-d73e-1194e95b5f19'),
  ('valid-uuidv7', 'prefix_01h455vb4pex5vsknk084sn02q', 'prefix', '01890a5d-ac96-774b-bcce-b302099a8057'),
  ('prefix-underscore', 'pre_fix_00000000000000000000000000', 'pre_fix', '00000000-0000-0000-0000-000000000000');
SELECT name,
       typeid_to_uuid(typeid) = id AS decodes,
       typeid_to_uuid(typeid, prefix) = id AS decodes_with_its_prefix,
       typeid_prefix(typeid) = prefix AS prefix_read,
       typeid_from_uuid(prefix, id) = typeid AS encodes
  FROM valid ORDER BY name;

CREATE TEMP TABLE invalid (name text, typeid text);
INSERT INTO invalid VALUES
  ('prefix-uppercase', 'PREFIX_00000000000000000000000000'),
  ('prefix-numeric', '12345_00000000000000000000000000'),
  ('prefix-period', 'pre.fix_00000000000000000000000000'),
  ('prefix-non-ascii', 'préfix_00000000000000000000000000'),
  ('prefix-spaces', '  prefix_00000000000000000000000000'),
  ('prefix-64-chars', 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl_00000000000000000000000000'),
  ('separator-empty-prefix', '_00000000000000000000000000'),
  ('separator-empty', '_'),
  ('suffix-short', 'prefix_1234567890123456789012345'),
  ('suffix-long', 'prefix_123456789012345678901234567'),
  ('suffix-spaces', 'prefix_1234567890123456789012345 '),
  ('suffix-uppercase', 'prefix_0123456789ABCDEFGHJKMNPQRS'),
  ('suffix-hyphens', 'prefix_123456789-123456789-123456'),
  ('suffix-wrong-alphabet', 'prefix_ooooooiiiiiiuuuuuuulllllll'),
  ('suffix-ambiguous-crockford', 'prefix_i23456789ol23456789oi23456'),
  ('suffix-hyphens-crockford', 'prefix_123456789-0123456789-0123456'),
  ('suffix-overflow', 'prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz'),
  ('prefix-underscore-start', '_prefix_00000000000000000000000000'),
  ('prefix-underscore-end', 'prefix__00000000000000000000000000'),
  ('empty', ''),
  ('prefix-empty', 'prefix_');
CREATE FUNCTION refused(t text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE msg text;
BEGIN
  PERFORM typeid_to_uuid(t);
  RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
  RETURN SQLSTATE || ' ' || msg;
END $$;
SELECT name, refused(typeid) FROM invalid ORDER BY name;

-- Another type, a prefix no TypeID can have, NULLs.
SELECT typeid_to_uuid('order_01h455vb4pex5vsknk084sn02q', 'user');
SELECT typeid_from_uuid('User', '01890a5d-ac96-774b-bcce-b302099a8057');
SELECT typeid_next('api_key_') ;
SELECT typeid_next(NULL);
SELECT typeid_to_uuid(NULL) IS NULL AS null_in_null_out, typeid_from_uuid('user', NULL) IS NULL AS null_uuid;
-- Generated ones: the prefix, 26 characters, a UUIDv7 of the node, in order.
SELECT count(*) = 1000 AS all_made, bool_and(t ~ '^member_[0-7][0-9a-hjkmnp-tv-z]{25}$') AS well_formed,
       bool_and(substr(typeid_to_uuid(t)::text, 15, 1) = '7') AS uuidv7,
       array_agg(t ORDER BY g) = array_agg(t ORDER BY t COLLATE "C") AS in_order
  FROM (SELECT g, typeid_next('member') AS t FROM generate_series(1, 1000) g) x;
DROP FUNCTION refused(text);
DROP EXTENSION pg_idgen;
