"""pg_idgen from SQLModel (over SQLAlchemy 2 and psycopg 3).

    python3 examples/sqlmodel_app.py 'postgresql+psycopg://postgres@127.0.0.1:5432/postgres'

Prints one JSON line of what it found. The recipe: the key is an `int | None` field whose column
is BigInteger with server_default=text("snowflake_next()"); SQLModel leaves it out of the INSERT
and reads it back with RETURNING, for one object and for many added at once. In JSON (FastAPI's
responses), write the key as a string: JavaScript rounds numbers above 2^53.
"""

import json
import sys

from sqlalchemy import BigInteger, Column, text
from sqlmodel import Field, Session, SQLModel, create_engine, select


class Order(SQLModel, table=True):
    __tablename__ = "sqlmodel_orders"
    id: int | None = Field(
        default=None,
        sa_column=Column(BigInteger, primary_key=True, server_default=text("snowflake_next()")),
    )
    item: str


def main(url):
    engine = create_engine(url)
    SQLModel.metadata.drop_all(engine)
    SQLModel.metadata.create_all(engine)
    with Session(engine) as session:
        one = Order(item="one")
        session.add(one)
        session.commit()
        session.refresh(one)
        many = [Order(item=f"item {i}") for i in range(100)]
        session.add_all(many)
        session.flush()
        ids = [o.id for o in many]
        session.commit()
        rows = session.exec(select(Order)).all()
        in_table = sorted(o.id for o in rows)
        # The JSON a web API sends: the key as a string stays exact; as a number it does not
        # survive a JavaScript client above 2^53 (checked in Python: float rounds the same way).
        as_json = json.loads(json.dumps([{"id": str(o.id)} for o in rows]))
        found = {
            "one_id_is_snowflake": isinstance(one.id, int) and one.id > 2**53,
            "many_ids_distinct": len({i for i in ids if isinstance(i, int)}),
            "exact": sorted([one.id] + ids) == in_table,
            "rows": len(rows),
            "json_string_exact": sorted(int(r["id"]) for r in as_json) == in_table,
            "json_number_exact_in_javascript": sum(float(i) == i for i in in_table),
        }
    SQLModel.metadata.drop_all(engine)
    print(json.dumps(found))


if __name__ == "__main__":
    main(sys.argv[1])
