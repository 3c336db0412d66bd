"""An application written the ORMs' ordinary way, its sequences adopted by pg_idgen (docs/adopting.md,
"Adopting sequences"): not one line of it mentions pg_idgen.

    python3 examples/adopted_orms.py DSN create     # the schema, as the ORMs make it
    python3 examples/adopted_orms.py DSN run        # the application (after idgen.adopt_sequences)

DSN: a libpq URL (postgresql://user@host:port/db). `run` prints one JSON line of what it got:
- Django 5.2: models with a BigAutoField key (an IDENTITY column; an AutoField is 32-bit, which
  adoption refuses), a foreign key between them; create(), bulk_create() (keys back
  through RETURNING), a fixture loaded with loaddata (keys given, then Django's own sequence
  reset: setval(max(id)));
- SQLAlchemy 2: an Identity() key and a Sequence() key (nextval() default), one row, many rows, a
  bulk INSERT ... RETURNING, and the application's own nextval() call.
"""

import json
import os
import sys
import tempfile

DSN = sys.argv[1]
STEP = sys.argv[2]


def django_setup():
    import urllib.parse

    import django
    from django.conf import settings

    u = urllib.parse.urlparse(DSN)
    settings.configure(
        DATABASES={
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": u.path.lstrip("/"),
                "USER": u.username,
                "HOST": u.hostname,
                "PORT": u.port,
            }
        },
        INSTALLED_APPS=["django.contrib.contenttypes"],
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        USE_TZ=True,
    )
    django.setup()
    from django.db import models

    class Customer(models.Model):
        id = models.BigAutoField(primary_key=True)
        name = models.CharField(max_length=50)

        class Meta:
            app_label = "contenttypes"
            db_table = "dj_customer"

    class Invoice(models.Model):
        id = models.BigAutoField(primary_key=True)
        customer = models.ForeignKey(Customer, on_delete=models.CASCADE)
        total = models.IntegerField()

        class Meta:
            app_label = "contenttypes"
            db_table = "dj_invoice"

    return Customer, Invoice


def sqlalchemy_models():
    from sqlalchemy import BigInteger, Identity, Sequence, String
    from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

    class Base(DeclarativeBase):
        pass

    class Item(Base):
        __tablename__ = "sa_item"
        id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
        sku: Mapped[str] = mapped_column(String)

    class Event(Base):
        __tablename__ = "sa_event"
        id: Mapped[int] = mapped_column(BigInteger, Sequence("sa_event_id_seq"), primary_key=True)
        kind: Mapped[str] = mapped_column(String)

    return Base, Item, Event


def create():
    Customer, Invoice = django_setup()
    from django.db import connection

    with connection.schema_editor() as editor:
        editor.create_model(Customer)
        editor.create_model(Invoice)
    from sqlalchemy import create_engine

    Base, _, _ = sqlalchemy_models()
    Base.metadata.create_all(create_engine(DSN.replace("postgresql://", "postgresql+psycopg://")))
    print(json.dumps({"created": True}))


def run():
    out = {}
    Customer, Invoice = django_setup()
    from django.core.management import call_command

    one = Customer.objects.create(name="one")
    many = Customer.objects.bulk_create([Customer(name=f"c{i}") for i in range(100)])
    out["django_create_id"] = one.id
    out["django_bulk_ids"] = [c.id for c in many]
    Invoice.objects.bulk_create([Invoice(customer=c, total=i) for i, c in enumerate(many)])
    # A fixture with its own keys, as loaddata loads it; loaddata then resets the sequences
    # (setval(pg_get_serial_sequence(...), max(id))).
    fixture = [{"model": "contenttypes.customer", "pk": 7, "fields": {"name": "fixture"}}]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(fixture, f)
    call_command("loaddata", f.name, verbosity=0)
    os.unlink(f.name)
    out["django_fixture_kept"] = Customer.objects.filter(pk=7, name="fixture").exists()
    after = Customer.objects.create(name="after fixture")
    out["django_after_fixture_id"] = after.id
    out["django_invoices"] = Invoice.objects.count()

    from sqlalchemy import create_engine, insert, select, text
    from sqlalchemy.orm import Session

    _, Item, Event = sqlalchemy_models()
    engine = create_engine(DSN.replace("postgresql://", "postgresql+psycopg://"))
    with Session(engine) as s:
        item = Item(sku="one")
        s.add(item)
        s.flush()
        items = [Item(sku=f"s{i}") for i in range(100)]
        s.add_all(items)
        s.flush()
        event = Event(kind="one")
        s.add(event)
        s.flush()
        bulk = s.scalars(insert(Event).returning(Event.id), [{"kind": f"k{i}"} for i in range(100)]).all()
        own = s.execute(text("SELECT nextval('sa_event_id_seq')")).scalar_one()
        s.commit()
        out["sqlalchemy_identity_ids"] = [item.id] + [i.id for i in items]
        out["sqlalchemy_sequence_ids"] = [event.id] + list(bulk) + [own]
        out["sqlalchemy_rows"] = s.scalar(select(text("count(*)")).select_from(Item)) + s.scalar(
            select(text("count(*)")).select_from(Event)
        )
    print(json.dumps(out))


{"create": create, "run": run}[STEP]()
