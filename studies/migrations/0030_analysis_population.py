from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0028_reference_version_creator_name"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="analysis_population",
            field=models.CharField(blank=True, max_length=200, null=True),
        ),
    ]
