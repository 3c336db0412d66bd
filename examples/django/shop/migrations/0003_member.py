# Written as makemigrations writes it (Django 5.2).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('shop', '0002_invoice_db_default'),
    ]

    operations = [
        migrations.CreateModel(
            name='Member',
            fields=[
                ('id', models.UUIDField(db_default=models.Func(function='uuidv7_next', output_field=models.UUIDField()), primary_key=True, serialize=False)),
                ('name', models.CharField(max_length=100)),
            ],
        ),
    ]
