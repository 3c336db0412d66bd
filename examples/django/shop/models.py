from django.db import models


class Order(models.Model):
    # BigAutoField, so that Django expects the database to make the key and reads it back with
    # RETURNING (save() and bulk_create()); the migration replaces the identity Django creates with
    # DEFAULT snowflake_next().
    id = models.BigAutoField(primary_key=True)
    item = models.CharField(max_length=100)

    class Meta:
        app_label = "shop"
