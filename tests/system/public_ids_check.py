"""Public IDs against an independent FF1 implementation: the `cyphera` package from PyPI (pure
Python over the `cryptography` package's AES), on 10,000 random values of each form, as
tests/system/public_ids.sh runs it. The reference is first checked on NIST's FF1 samples, so a
disagreement can only be ours.

Usage: public_ids_check.py CONNINFO KEY_NAME KEY_HEX PREFIX
Prints one JSON object: per form, how many values were compared and how many disagreed.
"""

import json
import random
import sys
import uuid

import psycopg
from cyphera.ff1 import FF1

CONNINFO, NAME, KEY, PREFIX = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3]), sys.argv[4]
N = 10_000
ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
rnd = random.Random(20261125)


def nist_samples_pass():
    """Samples 1, 2 and 3 of NIST's FF1 examples (AES-128; radix 10, with and without a tweak,
    and radix 36)."""
    k = bytes.fromhex("2B7E151628AED2A6ABF7158809CF4F3C")
    ok = FF1(k, b"", "0123456789").encrypt("0123456789") == "2433477484"
    ok &= FF1(k, bytes.fromhex("39383736353433323130"), "0123456789").encrypt("0123456789") == "6124200773"
    ok &= FF1(k, bytes.fromhex("3737373770717273373737")).encrypt("0123456789abcdefghi") == "a9tv40mll9kdu509eum"
    return ok


def ff1_bits(bits, n, tweak=b""):
    """FF1 of the n-bit number `bits` (most significant bit first), radix 2."""
    return int(FF1(KEY, tweak, "01").encrypt(format(bits, f"0{n}b")), 2)


def payload(u):
    """The 122 bits of a UUID other than its version and variant."""
    return ((u >> 80) << 74) | (((u >> 64) & 0xFFF) << 62) | (u & ((1 << 62) - 1))


def with_version(p, version):
    return ((p >> 74) << 80) | (version << 76) | (((p >> 62) & 0xFFF) << 64) | (0b10 << 62) | (p & ((1 << 62) - 1))


def b32(x, chars):
    return "".join(ALPHABET[(x >> (5 * i)) & 31] for i in reversed(range(chars)))


def main():
    out = {"reference_passes_nist_samples": nist_samples_pass()}
    conn = psycopg.connect(CONNINFO, autocommit=True)
    version = conn.execute("SELECT max(version) FROM idgen.public_keys WHERE name = %s", (NAME,)).fetchone()[0]
    tweak = PREFIX.encode() + b"\x00" + version.to_bytes(2, "big")
    head = (PREFIX + "_" if PREFIX else "") + b32(version, 2)

    ids = [rnd.randrange(-(1 << 63), 1 << 63) for _ in range(N)]
    js = [rnd.randrange(0, 1 << 53) for _ in range(N)]
    uuids = [with_version(payload(rnd.getrandbits(128)), 7) for _ in range(N)]

    def ours(func, values, cast):
        """func(value, key) in SQL for each value, in order."""
        q = f"SELECT idgen.{func}(x, %s) FROM unnest(%s::{cast}[]) WITH ORDINALITY t(x, i) ORDER BY i"
        return [r[0] for r in conn.execute(q, (NAME, values))]

    def signed(x):
        return x - (1 << 64) if x >= 1 << 63 else x

    uuid_values = [uuid.UUID(int=u) for u in uuids]
    forms = {
        "bigint": (ours("encrypt_id", ids, "bigint"), [signed(ff1_bits(x % (1 << 64), 64)) for x in ids]),
        "js_safe": (ours("encrypt_id_js_safe", js, "bigint"), [ff1_bits(x, 53) for x in js]),
        "uuid": (ours("encrypt_uuid", uuid_values, "uuid"),
                 [uuid.UUID(int=with_version(ff1_bits(payload(u), 122), 4)) for u in uuids]),
        "bigint_text": (ours("id_to_public", ids, "bigint"),
                        [head + b32(ff1_bits((x % (1 << 64)) << 36, 100, tweak), 20) for x in ids]),
        "uuid_text": (ours("uuid_to_public", uuid_values, "uuid"),
                      [head + b32(ff1_bits(payload(u) << 38, 160, tweak), 32) for u in uuids]),
    }
    for name, (got, want) in forms.items():
        out[name] = {"compared": len(got), "disagreed": sum(a != b for a, b in zip(got, want)) + abs(len(got) - len(want))}
    print(json.dumps(out))


main()
