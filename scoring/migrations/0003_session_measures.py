# The other session measures a run computes, and their per-session values.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0002_unjudged"),
    ]

    operations = [
        migrations.AddField(
            model_name="scoringrun",
            name="measures",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Names of the other session measures this run computes, in order.",
            ),
        ),
        migrations.AddField(
            model_name="scoringrun",
            name="measure_params",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="The MeasureParams fields the measures were computed with.",
            ),
        ),
        migrations.AddField(
            model_name="sessionscore",
            name="measures",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="The run's other session measures for this session, keyed by measure name: "
                '{"sdcg_per_query": 1.23, "nsdcg": 0.41, ...}, one float each (0 for an empty recall base, '
                "never NaN); only the measures the run selected (ScoringRun.measures) are present. Names and "
                "meanings: scoring.lib.session_measures.MEASURES and docs/scoring-sessions.md.",
            ),
        ),
    ]
