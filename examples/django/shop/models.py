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
