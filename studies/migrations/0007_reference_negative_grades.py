"""Reference judgments keep negative grades as judged (-9..-1, e.g. TREC's -2 for spam): the scoring
formulations each have their own rule for them (docs/scoring-sessions.md), so clipping them at import changed
kanoulas2011 scores. The reference_grade_in_scale trigger is made again from 0002's (updated) rule; participants'
judgments stay inside the study's scale.
"""

import importlib

from django.db import migrations

_triggers = importlib.import_module("studies.migrations.0002_integrity_triggers")
_RULE = next(rule for rule in _triggers.RULES if rule[0] == "reference_grade_in_scale")
_OLD_CONDITION = (
    "NOT EXISTS (SELECT 1 FROM studies_gradelevel g WHERE g.value = NEW.grade AND g.study_id = "
    "(SELECT v.study_id FROM studies_referenceversion v WHERE v.id = NEW.version_id))"
)


def _remake(schema_editor, condition):
    vendor = schema_editor.connection.vendor
    name, table, timing, _condition, message = _RULE
    build = {"sqlite": _triggers._sqlite_sql, "postgresql": _triggers._postgres_sql}[vendor]
    for statement in _triggers._drop_sql(vendor, name, table, timing) + build(
        name, table, timing, condition, message
    ):
        schema_editor.execute(statement)


def admit_negative(apps, schema_editor):
    _remake(schema_editor, _RULE[3])


def refuse_negative(apps, schema_editor):
    _remake(schema_editor, _OLD_CONDITION)


class Migration(migrations.Migration):
    dependencies = [("studies", "0006_collection_owner")]
    operations = [migrations.RunPython(admit_negative, refuse_negative)]
