"""SessionScore.unjudged: a session whose scenario has no judgment in what the run scores against. Rows
scored before it say False until their run is scored again (a new run, or a change that re-scores it)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("scoring", "0001_initial")]
    operations = [
        migrations.AddField(
            model_name="sessionscore", name="unjudged", field=models.BooleanField(default=False)
        ),
    ]
