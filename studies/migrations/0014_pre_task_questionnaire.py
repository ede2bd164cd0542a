"""The questions before each task: the study's pre-task questionnaire and each assignment's answers to it.

On SQLite, adding a field with a default rebuilds the table, and rebuilding studies_assignment fails while
0002's triggers name it in their bodies; so they are dropped first and made again afterwards (as 0005 does; the
same statements on PostgreSQL).
"""

import importlib

from django.db import migrations, models

_triggers = importlib.import_module("studies.migrations.0002_integrity_triggers")


def triggers_remake(apps, schema_editor):
    _triggers.drop_triggers(apps, schema_editor)
    _triggers.create_triggers(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0013_agreement_exclusion"),
    ]

    operations = [
        migrations.RunPython(_triggers.drop_triggers, triggers_remake),
        migrations.AddField(
            model_name="assignment",
            name="pre_task_answers",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="study",
            name="pre_task_questionnaire",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(triggers_remake, _triggers.drop_triggers),
    ]
