"""A reference version keeps its creator's user name beside the account (issue 29): an archive's creator who
has no account where it is imported is no longer lost, nor is a deleted account's name. Nullable with no
default, so SQLite adds the column in place; existing versions get their linked account's name."""

from django.db import migrations, models


def names_filled(apps, schema_editor):
    version_model = apps.get_model("studies", "ReferenceVersion")
    for version in version_model.objects.filter(created_by__isnull=False).select_related("created_by"):
        version.created_by_name = version.created_by.username
        version.save(update_fields=["created_by_name"])


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0025_read_depth"),
    ]

    operations = [
        migrations.AddField(
            model_name="referenceversion",
            name="created_by_name",
            field=models.CharField(blank=True, max_length=150, null=True),
        ),
        migrations.RunPython(names_filled, migrations.RunPython.noop),
    ]
