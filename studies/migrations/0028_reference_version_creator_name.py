"""A reference version keeps its creator's user name beside the account, and a reference judgment its judge's:
an archive's creator or judge who has no account where it is imported is no longer lost, nor is a
deleted account's name. Nullable with no default, so SQLite adds the columns in place; existing rows get
their linked account's name."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def names_filled(apps, schema_editor):
    version_model = apps.get_model("studies", "ReferenceVersion")
    judgment_model = apps.get_model("studies", "ReferenceJudgment")
    users = version_model._meta.get_field("created_by").related_model
    username = Subquery(users.objects.filter(pk=OuterRef("created_by_id")).values("username")[:1])
    version_model.objects.filter(created_by__isnull=False).update(created_by_name=username)
    judge = Subquery(users.objects.filter(pk=OuterRef("judged_by_id")).values("username")[:1])
    judgment_model.objects.filter(judged_by__isnull=False).update(judged_by_name=judge)


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0027_study_draft_one_status"),
    ]

    operations = [
        migrations.AddField(
            model_name="referenceversion",
            name="created_by_name",
            field=models.CharField(blank=True, max_length=150, null=True),
        ),
        migrations.AddField(
            model_name="referencejudgment",
            name="judged_by_name",
            field=models.CharField(blank=True, max_length=150, null=True),
        ),
        migrations.RunPython(names_filled, migrations.RunPython.noop),
    ]
