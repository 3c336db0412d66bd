"""What a pg_monitor member reads of a key given to idgen.public_key_create (tests/system/public_ids.sh):
an administrator (role admin) gives one key as a literal inside a DO block and another as a bind
parameter; a member of pg_monitor (role watcher) then looks for each key's bytes in
pg_stat_activity (the administrator's session is still open) and pg_stat_statements. Prints one
JSON object: for each form, the rows of each view that hold the key, and the WARNING given.

Usage: key_texts.py CONNINFO LITERAL_KEY_HEX BOUND_KEY_HEX
"""

import json
import sys

import psycopg

CONNINFO, LITERAL, BOUND = sys.argv[1], sys.argv[2], sys.argv[3]
admin = psycopg.connect(CONNINFO + " user=admin", autocommit=True)
watcher = psycopg.connect(CONNINFO + " user=watcher", autocommit=True)
warnings = []
admin.add_notice_handler(lambda d: warnings.append(d.message_primary))


def seen(key):
    # The pattern is a bind parameter too: the watcher's own statement text must not hold it.
    like = f"%{key[:24]}%"
    activity = watcher.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query ILIKE %s",
        (like,)).fetchone()[0]
    statements = watcher.execute(
        "SELECT count(*) FROM pg_stat_statements WHERE query ILIKE %s", (like,)).fetchone()[0]
    return [activity, statements]


def last_warning():
    return warnings.pop() if warnings else None


admin.execute(f"DO $$BEGIN PERFORM idgen.public_key_create('leaked', 'lk', '\\x{LITERAL}'::bytea); END$$")
literal = seen(LITERAL)
literal_warning = last_warning()
admin.execute("SELECT idgen.public_key_create(%s, %s, %s)", ("bound", "bd", bytes.fromhex(BOUND)))
bound = seen(BOUND)
bound_warning = last_warning()
print(json.dumps({"literal": literal, "literal_warning": literal_warning, "bound": bound,
                  "bound_warning": bound_warning}))
