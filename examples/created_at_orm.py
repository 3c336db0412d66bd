"""A free created_at as ORMs ask for it (docs/snowflake.md#a-free-created_at): the times they send.

    python3 examples/created_at_orm.py 'host=127.0.0.1 port=5432 dbname=postgres user=postgres'

A table keyed by Snowflake IDs and a view that names the time inside the key `created_at`; then
the queries by time that the clients write by default, each with naive datetimes (no time zone:
SQLAlchemy's `Mapped[datetime]`, Django with USE_TZ = False, psycopg 3 binding a naive datetime
or a date, which it sends as a `timestamp` or a `date`). Prints one JSON line: for each, the rows
it found, the rows the same condition finds with idgen.time_conditions off, and whether its plan
read the key's index by the range alone (an Index Cond on the key, no time left to check on each
row); and "on a given day" as they write it (Django's __date and TruncDay, SQLAlchemy's cast to
Date and date_trunc), whose plans read the day's key range alone too where the session's zone
does not change its clocks within a week of the day (Asia/Kathmandu's never does), its bounds
computed while planning.
"""

import datetime
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "django"))

import psycopg  # noqa: E402
from sqlalchemy import BigInteger, Date, cast, create_engine, func, select  # noqa: E402
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column  # noqa: E402


def served(plan):
    """The plan reads a key range (by the bound function, or its bounds as numbers where they were
    computed while planning), and checks no time on each row."""
    return re.search(r"Index Cond: .*\bid [<>]= ", plan) is not None and "id_timestamp(" not in plan


def main(conninfo):
    found = {}
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("""
            DROP VIEW IF EXISTS orm_orders_v; DROP TABLE IF EXISTS orm_orders;
            CREATE TABLE orm_orders (id bigint PRIMARY KEY, v int);
            INSERT INTO orm_orders SELECT id_from_timestamp(now() - g * interval '1 minute') + g % 1000, g
              FROM generate_series(1, 60000) g;
            CREATE VIEW orm_orders_v AS SELECT *, id_timestamp(id) AS created_at FROM orm_orders;
            ANALYZE orm_orders""")
        # The session's TimeZone is the client's to choose; a zone of odd offset shows that the
        # range reads a naive time as PostgreSQL's comparison does.
        conn.execute("SET TimeZone = 'Asia/Kathmandu'")
        since = conn.execute("SELECT localtimestamp(0) - interval '3 days'").fetchone()[0]
        day = conn.execute("SELECT current_date - 10").fetchone()[0]

        def off_count(where, params):
            conn.execute("SET idgen.time_conditions = off")
            n = conn.execute(f"SELECT count(*) FROM orm_orders_v WHERE {where}", params).fetchone()[0]
            conn.execute("RESET idgen.time_conditions")
            return n

        # psycopg 3: a naive datetime and a date, bound as a timestamp and a date parameter.
        for name, where, params in [
            ("psycopg_naive_datetime", "created_at >= %s", [since]),
            ("psycopg_date", "created_at >= %s AND created_at < %s", [day, day + datetime.timedelta(days=1)]),
        ]:
            n = conn.execute(f"SELECT count(*) FROM orm_orders_v WHERE {where}", params).fetchone()[0]
            plan = "\n".join(r[0] for r in conn.execute(f"EXPLAIN SELECT * FROM orm_orders_v WHERE {where}", params))
            found[name] = {"rows": n, "rows_off": off_count(where, params), "served": served(plan)}

    # SQLAlchemy 2: a declarative model over the view, its created_at a naive datetime.
    class Base(DeclarativeBase):
        pass

    class Order(Base):
        __tablename__ = "orm_orders_v"
        id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
        v: Mapped[int]
        created_at: Mapped[datetime.datetime]

    params = dict(kv.split("=", 1) for kv in conninfo.split())
    engine = create_engine(f"postgresql+psycopg://{params.get('user', 'postgres')}@{params.get('host', '127.0.0.1')}:"
                           f"{params.get('port', '5432')}/{params.get('dbname', 'postgres')}",
                           connect_args={"options": "-c TimeZone=Asia/Kathmandu"})
    with Session(engine) as session:
        query = select(func.count()).select_from(Order).where(Order.created_at >= since)
        n = session.execute(query).scalar_one()
        compiled = select(Order).where(Order.created_at >= since).compile(engine)
        plan = "\n".join(r[0] for r in session.connection().exec_driver_sql(f"EXPLAIN {compiled}", compiled.params))
        found["sqlalchemy_naive_datetime"] = {"rows": n, "served": served(plan),
                                              "sql": str(compiled).replace("\n", " ")}
        # "On a day": cast(created_at, Date) == day, and date_trunc('day', created_at) == midnight.
        midnight = datetime.datetime.combine(day, datetime.time())
        for name, condition in [("sqlalchemy_cast_date", cast(Order.created_at, Date) == day),
                                ("sqlalchemy_date_trunc", func.date_trunc("day", Order.created_at) == midnight)]:
            n = session.execute(select(func.count()).select_from(Order).where(condition)).scalar_one()
            compiled = select(Order).where(condition).compile(engine)
            plan = "\n".join(r[0] for r in session.connection().exec_driver_sql(f"EXPLAIN {compiled}", compiled.params))
            found[name] = {"rows": n, "served": served(plan), "sql": str(compiled).replace("\n", " "),
                           "where": str(condition.compile(engine, compile_kwargs={"literal_binds": True}))}
    engine.dispose()

    # Django 5.2 with USE_TZ = False: naive datetimes, a model over the view.
    import django
    from django.conf import settings

    settings.configure(
        INSTALLED_APPS=["shop"],
        DATABASES={"default": {
            "ENGINE": "django.db.backends.postgresql", "NAME": params.get("dbname", "postgres"),
            "USER": params.get("user", "postgres"), "HOST": params.get("host", "127.0.0.1"),
            "PORT": params.get("port", "5432")}},
        # Without USE_TZ, Django sets the session's TimeZone to TIME_ZONE and sends naive datetimes.
        USE_TZ=False, TIME_ZONE="Asia/Kathmandu",
    )
    django.setup()
    from django.db import connection, models

    class RecentOrder(models.Model):
        id = models.BigIntegerField(primary_key=True)
        v = models.IntegerField()
        created_at = models.DateTimeField()

        class Meta:
            app_label = "shop"
            managed = False
            db_table = "orm_orders_v"

    recent = RecentOrder.objects.filter(created_at__gte=since)
    between = RecentOrder.objects.filter(created_at__range=(datetime.datetime.combine(day, datetime.time()),
                                                             datetime.datetime.combine(day, datetime.time(23, 59, 59))))
    # "On a day": __date (::date = day) and TruncDay (date_trunc('day', created_at) = midnight).
    from django.db.models.functions import TruncDay

    on_day = RecentOrder.objects.filter(created_at__date=day)
    trunc_day = RecentOrder.objects.annotate(d=TruncDay("created_at")).filter(
        d=datetime.datetime.combine(day, datetime.time()))
    found["django_naive_datetime"] = {"rows": recent.count(), "served": served(recent.explain())}
    found["django_range"] = {"rows": between.count(), "served": served(between.explain())}
    found["django_date"] = {"rows": on_day.count(), "served": served(on_day.explain()), "sql": str(on_day.query)}
    found["django_trunc_day"] = {"rows": trunc_day.count(), "served": served(trunc_day.explain()),
                                 "sql": str(trunc_day.query)}
    with connection.cursor() as cur:
        cur.execute("SET idgen.time_conditions = off")
    for name, query in [("django_naive_datetime", recent), ("django_range", between), ("django_date", on_day),
                        ("django_trunc_day", trunc_day)]:
        found[name]["rows_off"] = query.count()
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'Asia/Kathmandu'; SET idgen.time_conditions = off")
        found["sqlalchemy_naive_datetime"]["rows_off"] = conn.execute(
            "SELECT count(*) FROM orm_orders_v WHERE created_at >= %s", [since]).fetchone()[0]
        for name in ["sqlalchemy_cast_date", "sqlalchemy_date_trunc"]:
            found[name]["rows_off"] = conn.execute(
                f"SELECT count(*) FROM orm_orders_v WHERE {found[name]['where']}").fetchone()[0]
        conn.execute("DROP VIEW orm_orders_v; DROP TABLE orm_orders")
    print(json.dumps(found, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
