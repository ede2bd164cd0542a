# Each session score records what it was scored on, so whether a run is current is decided when
# read (scoring/freshness.py). Existing rows: a run on reference judgments that was not stale keeps its
# version on each row; a stale one leaves it unknown (null), shown stale until re-scored. A run on the
# participants' judgments that was not stale takes the checksum of the judgments as they are; a stale one
# leaves it unknown. Nothing is re-scored by the migration.

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery

CHECKSUM_MULTIPLIER = 2654435761  # as scoring/freshness.py (copied: a migration keeps its own)
CHECKSUM_MODULUS = 2147483647


def provenance_fill(apps, schema_editor):
    ScoringRun = apps.get_model("scoring", "ScoringRun")
    SessionScore = apps.get_model("scoring", "SessionScore")
    Judgment = apps.get_model("studies", "Judgment")
    fresh = ScoringRun.objects.filter(stale=False)
    SessionScore.objects.filter(run__in=fresh.filter(judgments="reference")).update(
        reference_version_id=Subquery(
            ScoringRun.objects.filter(pk=OuterRef("run_id")).values("reference_version_id")[:1]
        )
    )
    runs = fresh.filter(judgments="participant").values_list("pk", flat=True)
    for run_id in runs:
        rows = SessionScore.objects.filter(run_id=run_id)
        sums = {}
        for session_id, document_id, grade in Judgment.objects.filter(
            session_id__in=rows.values("session_id")
        ).values_list("session_id", "document_id", "grade"):
            term = (grade + 2) * ((document_id * CHECKSUM_MULTIPLIER) % CHECKSUM_MODULUS)
            sums[session_id] = sums.get(session_id, 0) + term
        for pk, session_id in rows.values_list("pk", "session_id"):
            SessionScore.objects.filter(pk=pk).update(judgments_checksum=sums.get(session_id, 0))


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0007_plan_population"),
        ("studies", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="sessionscore",
            name="reference_version",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="studies.referenceversion",
            ),
        ),
        migrations.AddField(
            model_name="sessionscore",
            name="judgments_checksum",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="scoringrun",
            name="stale",
            field=models.BooleanField(
                default=False,
                help_text="A re-score is owed (the work queue); not whether the scores are current.",
            ),
        ),
        migrations.RunPython(provenance_fill, migrations.RunPython.noop),
    ]
