"""Participant tokens are looked up by their SHA-256 digest (an indexed column), never by the token itself:
the database's comparison time then says nothing about a guessed token (docs/security.md).

A nullable, indexed column: on SQLite anything stricter means rebuilding the participant table, which the
triggers of 0002 (they name the table) do not allow. Every ORM path fills it (Participant.save, bulk_create)."""

import hashlib

from django.db import migrations, models


def fill_digests(apps, schema_editor):
    Participant = apps.get_model("studies", "Participant")
    rows = list(Participant.objects.only("pk", "access_token"))
    for row in rows:
        row.access_token_digest = hashlib.sha256(row.access_token.encode("utf-8")).hexdigest()
    Participant.objects.bulk_update(rows, ["access_token_digest"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("studies", "0003_assessment")]

    operations = [
        migrations.AddField(
            model_name="participant",
            name="access_token_digest",
            field=models.CharField(db_index=True, editable=False, max_length=64, null=True),
        ),
        migrations.RunPython(fill_digests, migrations.RunPython.noop),
    ]
