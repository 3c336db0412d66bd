"""Django 5.2's contrib apps (auth, admin, contenttypes, sessions), migrated into a database, as a
new project has them. Their models declare 32-bit keys (AutoField): a conversion to Snowflake IDs
must leave their tables alone (idgen.convert_to_snowflake warns about each).

    python3 examples/django/contrib_migrate.py 'host=127.0.0.1 port=5432 dbname=app user=postgres'

Prints one JSON line: the tables migrated and the key type Django declares for each model.
"""

import json
import sys

import django
from django.conf import settings


def main(conninfo):
    params = dict(kv.split("=", 1) for kv in conninfo.split())
    settings.configure(
        INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes",
                        "django.contrib.admin", "django.contrib.sessions"],
        DATABASES={"default": {
            "ENGINE": "django.db.backends.postgresql", "NAME": params.get("dbname", "postgres"),
            "USER": params.get("user", "postgres"), "HOST": params.get("host", "127.0.0.1"),
            "PORT": params.get("port", "5432")}},
        USE_TZ=True,
    )
    django.setup()
    from django.apps import apps
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    keys = {m._meta.db_table: type(m._meta.pk).__name__ for m in apps.get_models(include_auto_created=True)}
    print(json.dumps({"django": django.get_version(), "keys": keys}, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
