"""Walks every refusal docs/reference.md lists (tests/system/refusals.sh): each line of
tests/system/refusals.tsv is caused on the node the shell test set up, and must give its SQLSTATE, a
message, and a HINT where the refusal is not of a bad argument (docs/operations.md's promise), and that SQLSTATE must stand in the
function's Errors line of the reference; every (function, SQLSTATE) of those lines must have a
line. Prints one line per refusal and exits 1 on any failure.

Usage: refusals.py PORT VARIABLES  (VARIABLES: name=value,... for psql's :name, :'name')
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PORT, VARS = sys.argv[1], dict(v.split("=", 1) for v in sys.argv[2].split(",") if v)
# The SQLSTATE classes pg_idgen raises; a five-digit number of another class is no SQLSTATE
# (a year in the text).
CLASSES = ("01", "22", "25", "3D", "3F", "40", "42", "53", "54", "55")
# Refusals of a bad argument say in the message what is wrong with it: data exceptions (class 22),
# and names of things that do not exist or exist already. Every other refusal (a state, a
# privilege, a resource, a transaction) says what to do in a HINT (docs/operations.md).
WITHOUT_HINT = ("42704", "42P01", "42703", "3F000", "42710")


def needs_hint(code):
    return not code.startswith("22") and code not in WITHOUT_HINT


def reference_pairs():
    text = (ROOT / "docs/reference.md").read_text()
    pairs = set()
    for m in re.finditer(r"^### (\S+)\n(.*?)^Errors:(.*?)$", text, re.M | re.S):
        for code in re.findall(r"\b([0-9][0-9A-Z]{4})\b", m.group(3)):
            if code.startswith(CLASSES):
                pairs.add((m.group(1), code))
    return pairs


def rows():
    for n, line in enumerate((ROOT / "tests/system/refusals.tsv").read_text().splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            function, code, how = line.split("\t")
            yield n, function, code, how


def cause(how):
    """The SQLSTATE, whether a HINT came, and the text, of what `how` (ROLE:SQL) prints."""
    role, sql = how.split(":", 1)
    cmd = ["psql", "-h", "127.0.0.1", "-p", PORT, "-U", role, "-d", "postgres", "-X", "-q", "-A", "-t"]
    for k, v in VARS.items():
        cmd += ["-v", f"{k}={v}"]
    out = subprocess.run(cmd, input=f"\\set VERBOSITY verbose\n{sql};\n", text=True, capture_output=True)
    text = out.stderr
    m = re.search(r"^(ERROR|WARNING):  ([0-9A-Z]{5}):", text, re.M)
    return (m.group(2) if m else None), bool(re.search(r"^HINT:  \S", text, re.M)), text


def check(function, code, how, reference):
    """What is wrong with one line, or None."""
    if (function, code) not in reference:
        return f"the reference's Errors line of {function} does not name {code}"
    if how.startswith("@"):
        path = ROOT / how[1:]
        if not path.exists() or code not in path.read_text():
            return f"{how[1:]} does not check {code}"
        return None
    got, hint, text = cause(how)
    if got != code:
        return f"gave {got or 'no error'}, not {code}: {text.strip()[:300]}"
    if needs_hint(code) and not hint:
        return f"{code} without a HINT: {text.strip()[:300]}"
    return None


def main():
    reference = reference_pairs()
    covered, failures, walked = set(), 0, 0
    for n, function, code, how in rows():
        covered.add((function, code))
        problem = check(function, code, how, reference)
        walked += 1
        if problem:
            failures += 1
            print(f"  FAIL: tests/system/refusals.tsv:{n}: {function} {code}: {problem}")
    for function, code in sorted(reference - covered):
        failures += 1
        print(f"  FAIL: the reference lists {code} for {function}, and tests/system/refusals.tsv has no line for it")
    # Control: a line that expects another SQLSTATE than the refusal gives must fail.
    control = check("id_decode", "42704", "postgres:SELECT * FROM id_decode(-1)", reference)
    print(f"  {'ok' if control else 'FAIL'}: control: a line expecting 42704 of id_decode(-1) fails ({control and control[:60]})")
    failures += 0 if control else 1
    print(f"  {'ok' if not failures else 'FAIL'}: {walked} refusals walked, {len(reference)} in the reference, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
