"""pg_idgen with Django 5.2: the migration that works (shop/migrations/0001_initial.py).

    python3 examples/django/run.py 'host=127.0.0.1 port=5432 dbname=postgres user=postgres'

Migrates the app shop, saves one order and bulk-creates 100, and prints one JSON line: every new
key is a Snowflake ID read back by Django (save() and bulk_create() both use RETURNING). The same
with Django 5's db_default (shop.Invoice, migration 0002, written by makemigrations): create()
reads the key back, bulk_create() leaves DatabaseDefault objects in its place.
Segment types: a type made with idgen.segment_create() inside a transaction is seen by the
allocator (which commits ranges in its own transactions) only after that transaction commits, so
create types in a migration, not inside a TestCase, whose transaction never commits: there
segment_next() of the new type fails (42704, unknown type).
"""

import json
import os
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django  # noqa: E402
from django.conf import settings  # noqa: E402


def main(conninfo):
    params = dict(kv.split("=", 1) for kv in conninfo.split())
    settings.configure(
        INSTALLED_APPS=["shop"],
        DATABASES={"default": {
            "ENGINE": "django.db.backends.postgresql", "NAME": params.get("dbname", "postgres"),
            "USER": params.get("user", "postgres"), "HOST": params.get("host", "127.0.0.1"),
            "PORT": params.get("port", "5432")}},
        USE_TZ=True,
    )
    django.setup()
    from django.core.management import call_command
    from django.db import DatabaseError, connection, transaction

    from shop.models import Invoice, Member, Order

    call_command("migrate", "shop", verbosity=0)
    one = Order.objects.create(item="one")
    many = Order.objects.bulk_create([Order(item=f"item {i}") for i in range(100)])
    with connection.cursor() as cur:
        cur.execute("SELECT count(*), count(DISTINCT id), min(id) > 2^53 FROM shop_order")
        rows, distinct, snowflake = cur.fetchone()
    found = {
        "django": django.get_version(),
        "create_id_is_snowflake": isinstance(one.pk, int) and one.pk > 2**53,
        "bulk_create_ids": len({o.pk for o in many if isinstance(o.pk, int)}),
        "rows": rows, "distinct": distinct, "all_snowflake": snowflake,
    }
    # Django 5's db_default (Invoice): create() reads the key back; bulk_create() does not.
    inv = Invoice.objects.create(item="one")
    inv_many = Invoice.objects.bulk_create([Invoice(item=f"item {i}") for i in range(10)])
    with connection.cursor() as cur:
        cur.execute("SELECT count(*), bool_and(id > 2^53) FROM shop_invoice")
        inv_rows, inv_snowflake = cur.fetchone()
    found.update({
        "db_default_create_id_is_snowflake": isinstance(inv.pk, int) and inv.pk > 2**53
        and Invoice.objects.get(pk=inv.pk).item == "one",
        "db_default_bulk_create_ids": len({o.pk for o in inv_many if isinstance(o.pk, int)}),
        "db_default_rows": inv_rows, "db_default_all_snowflake": inv_snowflake,
    })
    # TypeIDs at the edge of a UUIDv7 key (Member): bulk_create() leaves DatabaseDefault objects,
    # bulk_create_keyed() gives every object its key; a malformed TypeID or one of another type is
    # Member.DoesNotExist, and the transaction around it goes on.
    plain = Member.objects.bulk_create([Member(name=f"m{i}") for i in range(3)])
    keyed = Member.objects.bulk_create_keyed([Member(name=f"k{i}") for i in range(10)])
    first = Member.objects.with_typeid().get(pk=keyed[0].pk)
    found_by = Member.objects.by_typeid(first.typeid)

    def lookup(text):
        try:
            return Member.objects.by_typeid(text).name
        except Member.DoesNotExist:
            return "DoesNotExist"
    with transaction.atomic():
        refused = [lookup(t) for t in ("member_bad", first.typeid.replace("member_", "user_"), "")]
        still = Member.objects.filter(name="k1").count()
    found.update({
        "typeid_plain_bulk_create_keys": len([o for o in plain if isinstance(o.pk, uuid.UUID)]),
        "typeid_keyed_bulk_create_keys": len({o.pk for o in keyed if isinstance(o.pk, uuid.UUID)}),
        "typeid_keyed_rows": Member.objects.filter(pk__in=[o.pk for o in keyed]).count(),
        "typeid": first.typeid[:7], "typeid_found": found_by.name,
        "typeid_refused": refused, "typeid_transaction_goes_on": still,
    })
    # The caveat: a segment type created in a transaction that has not committed (as in a TestCase)
    # cannot be used in it yet.
    try:
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute("SET LOCAL idgen.segment_wait_timeout = '1s'")
            cur.execute("SELECT idgen.segment_create('django_orders')")
            cur.execute("SELECT segment_next('django_orders')")
        found["segment_in_open_transaction"] = "worked"
    except DatabaseError as e:
        found["segment_in_open_transaction"] = getattr(e.__cause__, "sqlstate", str(e))
    with connection.cursor() as cur:  # autocommit: committed at once, then usable
        cur.execute("SELECT idgen.segment_create('django_orders')")
        cur.execute("SELECT segment_next('django_orders')")
        found["segment_after_commit"] = cur.fetchone()[0]
        cur.execute("SELECT idgen.segment_drop('django_orders')")
    call_command("migrate", "shop", "zero", verbosity=0)
    print(json.dumps(found))


if __name__ == "__main__":
    main(sys.argv[1])
