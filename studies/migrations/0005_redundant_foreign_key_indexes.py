"""No index of their own for four foreign keys that a unique constraint already leads with: one index less to
write for every event, result shown, query and judgment (docs/performance-load.md). A shown result's document is
indexed with its query, so "was this document shown in this session?" reads the index alone.

SQLite cannot drop an index by altering a field: Django rebuilds the table, and the rebuild loses the triggers
0002 made on it. So the triggers are made again afterwards (on PostgreSQL too, where they were kept: the same
statements either way).
"""

import importlib

import django.db.models.deletion
from django.db import migrations, models

_triggers = importlib.import_module("studies.migrations.0002_integrity_triggers")


def triggers_remake(apps, schema_editor):
    _triggers.drop_triggers(apps, schema_editor)
    _triggers.create_triggers(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0004_token_digest"),
    ]

    operations = [
        # Undone last when the migration is reversed: the rebuilt tables get their triggers back.
        migrations.RunPython(migrations.RunPython.noop, triggers_remake),
        migrations.AlterField(
            model_name="event",
            name="participant",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="events",
                to="studies.participant",
            ),
        ),
        migrations.AlterField(
            model_name="judgment",
            name="session",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="judgments",
                to="studies.searchsession",
            ),
        ),
        migrations.AlterField(
            model_name="query",
            name="session",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="queries",
                to="studies.searchsession",
            ),
        ),
        migrations.AlterField(
            model_name="shownresult",
            name="query",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="shown_results",
                to="studies.query",
            ),
        ),
        # The document's own index becomes (document, query), which "shown in this session?" reads alone.
        migrations.AlterField(
            model_name="shownresult",
            name="document",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="studies.document",
            ),
        ),
        migrations.AddIndex(
            model_name="shownresult",
            index=models.Index(fields=["document", "query"], name="shown_result_document_query"),
        ),
        migrations.RunPython(triggers_remake, triggers_remake),
    ]
