-- UUIDv7 (RFC 9562) and ULIDs: golden output from fixed inputs (the RFC's and the ULID spec's own
-- examples), plus properties of generated ones.
CREATE EXTENSION pg_idgen;

-- check: RFC 9562 appendix A.6: 017F22E2-79B0-7CC3-98C4-DC0C0C07398F was made at
-- 2022-02-22 14:22:22 -05:00.
SELECT uuidv7_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F') AT TIME ZONE 'UTC' AS rfc_example_utc;
-- The ULID spec's example: ulid(1469918176385) begins 01ARYZ6S41.
SELECT ulid_timestamp('01ARYZ6S41TSV4RRFFQ69G5FAV') = to_timestamp(1469918176.385) AS ulid_spec_time,
       ulid_to_uuid('01ARYZ6S41TSV4RRFFQ69G5FAV') AS as_uuid,
       uuid_to_ulid(ulid_to_uuid('01aryz6s41tsv4rrffq69g5fav')) AS back_upper_case;
SELECT uuid_to_ulid('00000000-0000-0000-0000-000000000000') AS lowest,
       uuid_to_ulid('ffffffff-ffff-ffff-ffff-ffffffffffff') AS highest,
       ulid_to_uuid('7ZZZZZZZZZZZZZZZZZZZZZZZZZ') AS highest_back,
       ulid_to_uuid('0OOOOOOOOOOOOOOOOOOOOOOOOI') AS crockford_o_and_i;
-- The first UUIDv7 of a millisecond: version 7, variant 10, zeros; before 1970, the first of all.
SELECT uuidv7_from_timestamp('2022-02-22 19:22:22+00') AS first_of_rfc_ms,
       uuidv7_from_timestamp('2022-02-22 19:22:22+00') <= '017F22E2-79B0-7CC3-98C4-DC0C0C07398F' AS bounds_it,
       uuidv7_from_timestamp('1960-01-01') AS before_1970;

-- check: Generated ones: version 7, variant 10, unique and ascending, the same as ULIDs.
CREATE TEMP TABLE u AS SELECT g, uuidv7_next() AS id FROM generate_series(1, 5000) g;
SELECT count(*) AS uuids, count(DISTINCT id) AS distinct_uuids,
       bool_and(id::text ~ '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$') AS v7_form,
       bool_and(abs(extract(epoch FROM uuidv7_timestamp(id) - now())) < 60) AS time_is_now
  FROM u;
SELECT count(*) AS out_of_order FROM (SELECT id, lag(id) OVER (ORDER BY g) AS prev FROM u) x WHERE id <= prev;
SELECT count(*) AS batch, count(DISTINCT b) AS distinct_batch FROM uuidv7_next_batch(40000) b;
SELECT bool_and(l ~ '^[0-7][0-9A-HJKMNP-TV-Z]{25}$') AS ulid_form,
       bool_and(uuid_to_ulid(ulid_to_uuid(l)) = l) AS round_trip
  FROM (SELECT ulid_next() AS l FROM generate_series(1, 1000)) x;

-- check: Bad input is an ERROR with a SQLSTATE, never a crash; NULLs pass through.
\set VERBOSITY sqlstate
SELECT uuidv7_timestamp('550e8400-e29b-41d4-a716-446655440000');
SELECT uuidv7_timestamp('017F22E2-79B0-7CC3-18C4-DC0C0C07398F');
SELECT ulid_to_uuid('01ARYZ6S41');
SELECT ulid_to_uuid('81ARYZ6S41TSV4RRFFQ69G5FAV');
SELECT ulid_to_uuid('01ARYZ6S41TSV4RRFFQ69G5FAU');
SELECT ulid_timestamp('01ARYZ6S41-SV4RRFFQ69G5FAV');
SELECT uuidv7_from_timestamp('infinity');
SELECT uuidv7_from_timestamp('12000-01-01');
SELECT uuidv7_next_batch(0);
SELECT uuidv7_next_batch(NULL);
\set VERBOSITY default
SELECT uuidv7_timestamp(NULL) IS NULL AS null_ts, ulid_to_uuid(NULL) IS NULL AS null_uuid,
       uuid_to_ulid(NULL) IS NULL AS null_ulid, uuidv7_from_timestamp(NULL) IS NULL AS null_from;
DROP EXTENSION pg_idgen;
