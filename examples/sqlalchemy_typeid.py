"""TypeIDs with SQLAlchemy 2 (docs/adopting.md, "TypeIDs"): two recipes, and what a malformed ID
from a URL does to each.

    python3 examples/sqlalchemy_typeid.py 'postgresql+psycopg://postgres@127.0.0.1:5432/postgres'

Prints one JSON line of what it found.

- A UUIDv7 key with the TypeID at the edge (`Member`): the key is 16 bytes and time-ordered
  (`server_default=uuidv7_next()`); `typeid` is a column property, `typeid_from_uuid('member', id)`,
  so every loaded member carries its `member_01h...`; `member_by_typeid()` finds one through
  `typeid_to_uuid(text, 'member')`. A text that is no TypeID of that type makes PostgreSQL raise
  22P02, which SQLAlchemy raises as `DataError` (an HTTP 500 unless caught) and which aborts the
  transaction around it: the lookup runs in a SAVEPOINT (`Session.begin_nested()`) and answers
  None for 22P02 only, so the caller answers 404 and the transaction goes on.
- A text key with a TypeID default (`Note`): `server_default=typeid_next('note')`; the key is the
  TypeID itself (27 to 90 bytes, compared as text), so a malformed one is simply not found.

Either way the ORM reads each new key back with INSERT ... RETURNING, for one object and for many
added at once (SQLAlchemy 2's "insertmanyvalues"), so unlike Django's bulk_create() no recipe is
needed for bulk inserts.
"""

import json
import sys
import uuid

from sqlalchemy import String, Text, Uuid, create_engine, func, literal, select, text
from sqlalchemy.exc import DataError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, column_property, mapped_column

PREFIX = "member"


class Base(DeclarativeBase):
    pass


class Member(Base):
    __tablename__ = "sa_members"
    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, server_default=text("uuidv7_next()"))
    name: Mapped[str] = mapped_column(String)
    # The TypeID at the edge: computed by the database on every load, never stored.
    typeid: Mapped[str] = column_property(func.typeid_from_uuid(literal(PREFIX), id))


class Note(Base):
    __tablename__ = "sa_notes"
    id: Mapped[str] = mapped_column(Text, primary_key=True, server_default=text("typeid_next('note')"))
    body: Mapped[str] = mapped_column(Text)


def member_by_typeid(session, typeid):
    """The member a TypeID names, or None for a text that is no TypeID of a member (a 404)."""
    try:
        with session.begin_nested():
            return session.scalars(
                select(Member).where(Member.id == func.typeid_to_uuid(typeid, literal(PREFIX)))
            ).one_or_none()
    except DataError as e:
        if getattr(e.orig, "sqlstate", None) == "22P02":
            return None
        raise


def main(url):
    engine = create_engine(url)
    found = {}
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        one = Member(name="one")
        session.add(one)
        session.flush()  # INSERT ... RETURNING id
        session.refresh(one)  # the column property, computed by the database
        found["member_key_version"] = one.id.version
        found["member_typeid_prefix"] = one.typeid.split("_")[0] + "_"
        many = [Member(name=f"m{i}") for i in range(10)]
        session.add_all(many)
        session.flush()
        found["member_bulk_keys"] = len({m.id for m in many if m.id is not None})
        session.commit()

        found["member_found"] = (member_by_typeid(session, one.typeid) or Member(name="none")).name
        refused = [member_by_typeid(session, t) for t in ("not-a-typeid", "user_" + one.typeid.split("_")[1], "")]
        found["member_refused"] = [r is None for r in refused]
        # The session's transaction went on: a plain query after the refusals works.
        found["member_transaction_goes_on"] = session.scalar(select(func.count()).select_from(Member))
        # Without the savepoint, 22P02 is a DataError that ends the transaction.
        try:
            session.scalars(select(Member).where(Member.id == func.typeid_to_uuid("nope", literal(PREFIX)))).all()
            found["member_unguarded"] = "found"
        except DataError as e:
            found["member_unguarded"] = f"DataError {e.orig.sqlstate}"
            session.rollback()

        note = Note(body="first")
        session.add(note)
        session.flush()
        found["note_key_prefix"] = note.id.split("_")[0] + "_"
        notes = [Note(body=f"n{i}") for i in range(10)]
        session.add_all(notes)
        session.flush()
        found["note_bulk_keys"] = len({n.id for n in notes if n.id is not None})
        session.commit()
        found["note_found"] = session.get(Note, note.id).body
        found["note_malformed"] = session.get(Note, "not-a-typeid") is None
        # The key is a TypeID PostgreSQL can read back as the UUIDv7 it was made of.
        found["note_uuid_version"] = session.scalar(select(func.typeid_to_uuid(note.id, literal("note")))).version
    print(json.dumps(found))


if __name__ == "__main__":
    main(sys.argv[1])
