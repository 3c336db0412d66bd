"""pg_idgen from Python: psycopg 3, SQLAlchemy 2 and Alembic.

    python3 examples/sqlalchemy_app.py 'postgresql+psycopg://postgres@127.0.0.1:5432/postgres' [converted_table]

Prints one JSON line of what it found. The recipe:
- the key column: BigInteger, primary_key=True, server_default=text("snowflake_next()"); the ORM
  gets each new id back with INSERT ... RETURNING, one row or many;
- Alembic autogenerate with include_schemas=True sees pg_idgen's own tables (idgen.segments,
  idgen.workers, ...) and proposes dropping them: leave pg_idgen's schemas out with include_name;
- psycopg: a lost worker-id lease is SQLSTATE 55000 whose diag.constraint_name is
  "idgen_lease_lost".
"""

import json
import sys

import psycopg
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import BigInteger, String, create_engine, insert, select, text
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class Order(Base):
    __tablename__ = "py_orders"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, server_default=text("snowflake_next()"))
    item: Mapped[str] = mapped_column(String)


def include_name(name, type_, parent_names):
    """Alembic: leave pg_idgen's schemas (and everything in them) alone."""
    if type_ == "schema":
        return name not in ("idgen", "idgen_internal")
    return True


def main(url):
    engine = create_engine(url)
    found = {}
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        one = Order(item="one")
        session.add(one)
        session.flush()  # INSERT ... RETURNING id
        found["orm_id_after_flush"] = one.id is not None and one.id > 2**53
        many = [Order(item=f"item {i}") for i in range(100)]
        session.add_all(many)
        session.flush()
        found["orm_ids_distinct"] = len({o.id for o in many})
        rows = session.execute(insert(Order).returning(Order.id), [{"item": f"bulk {i}"} for i in range(100)])
        found["bulk_returning_ids"] = len({r.id for r in rows})
        session.commit()
        found["rows"] = session.scalar(select(text("count(*)")).select_from(Order))

    with engine.connect() as conn:
        def drops(opts):
            ctx = MigrationContext.configure(conn, opts=opts)
            # (Only pg_idgen's tables: other tables of the database are not this app's concern.)
            return sorted(
                f"{d[1].schema}.{d[1].name}" for d in compare_metadata(ctx, Base.metadata)
                if isinstance(d, tuple) and d[0] == "remove_table" and d[1].schema in ("idgen", "idgen_internal"))
        found["alembic_drops_plain"] = drops({"include_schemas": True})
        found["alembic_drops_with_include_name"] = drops({"include_schemas": True, "include_name": include_name})

    # psycopg 3 directly: the new id from RETURNING, and a lost lease told by its condition name.
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        found["psycopg_returning"] = conn.execute(
            "INSERT INTO py_orders (item) VALUES (%s) RETURNING id", ["psycopg"]).fetchone()[0] > 2**53
        try:
            conn.execute("SELECT idgen.worker_heartbeat(1, 'nobody holds this', lease => 1)")
            found["lease_lost_condition"] = None
        except psycopg.errors.ObjectNotInPrerequisiteState as e:
            found["lease_lost_condition"] = e.diag.constraint_name
        # A table converted from serial (idgen.convert_to_snowflake), if one is named: one more row.
        if len(sys.argv) > 2:
            found["converted_table_id"] = conn.execute(
                f"INSERT INTO {sys.argv[2]} DEFAULT VALUES RETURNING id").fetchone()[0]
    Base.metadata.drop_all(engine)
    print(json.dumps(found))


if __name__ == "__main__":
    main(sys.argv[1])
