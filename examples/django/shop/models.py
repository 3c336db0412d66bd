from django.db import models


class Order(models.Model):
    # BigAutoField, so that Django expects the database to make the key and reads it back with
    # RETURNING (save() and bulk_create()); the migration replaces the identity Django creates with
    # DEFAULT snowflake_next().
    id = models.BigAutoField(primary_key=True)
    item = models.CharField(max_length=100)

    class Meta:
        app_label = "shop"


class Invoice(models.Model):
    # Django 5's db_default: the column gets DEFAULT snowflake_next() in the migration Django
    # writes itself, and save() / create() read the key back with RETURNING. bulk_create() does
    # not (Django 5.2 leaves a DatabaseDefault where each key should be): where keys of a bulk
    # insert are needed, use the BigAutoField recipe of Order above.
    id = models.BigIntegerField(
        primary_key=True,
        db_default=models.Func(function="snowflake_next", output_field=models.BigIntegerField()),
    )
    item = models.CharField(max_length=100)

    class Meta:
        app_label = "shop"


class MemberQuerySet(models.QuerySet):
    """TypeIDs at the edge of a model keyed by a UUIDv7 (docs/adopting.md, "TypeIDs")."""

    def with_typeid(self):
        """Each row with its TypeID, `member_01h...`, written by the database."""
        return self.annotate(typeid=models.Func(
            models.Value("member"), models.F("id"), function="typeid_from_uuid",
            output_field=models.TextField()))

    def by_typeid(self, text):
        """The member a TypeID names. A text that is no TypeID of a member (malformed, of another
        type) names none: Member.DoesNotExist, as for an unknown one, not the database's 22P02
        (a DataError, an HTTP 500 unless caught). The savepoint keeps an outer transaction usable."""
        from django.db import DataError, transaction
        key = models.Func(models.Value(text), models.Value("member"), function="typeid_to_uuid",
                          output_field=models.UUIDField())
        try:
            with transaction.atomic():
                return self.with_typeid().get(id=key)
        except DataError as e:
            if getattr(e.__cause__, "sqlstate", None) == "22P02":
                raise self.model.DoesNotExist(f"no member has the TypeID {text!r}") from None
            raise

    def bulk_create_keyed(self, objs, **kwargs):
        """bulk_create() whose objects come back with their keys: Django 5.2's bulk_create() does
        not read back a db_default key (a DatabaseDefault stays in its place), so the keys are
        taken first, in one round trip, from the node's UUIDv7 stream (uuidv7_next_batch(n): the
        same guarantees as the column's default), and sent with the rows."""
        from django.db import connections
        objs = list(objs)
        with connections[self.db].cursor() as cur:
            cur.execute("SELECT uuidv7_next_batch(%s)", [len(objs)])
            for obj, (key,) in zip(objs, cur.fetchall()):
                obj.id = key
        return self.bulk_create(objs, **kwargs)


class Member(models.Model):
    # A UUIDv7 key (16 bytes, time-ordered), the TypeID written at the edge (MemberQuerySet).
    id = models.UUIDField(
        primary_key=True,
        db_default=models.Func(function="uuidv7_next", output_field=models.UUIDField()),
    )
    name = models.CharField(max_length=100)

    objects = MemberQuerySet.as_manager()

    class Meta:
        app_label = "shop"
