"""Audit actions enumerated (studies.models.AuditAction): the stored strings are unchanged, only the choices."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0014_pre_task_questionnaire"),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditentry",
            name="action",
            field=models.CharField(
                choices=[
                    ("study_status_changed", "Study status changed"),
                    ("preview_started", "Preview started"),
                    ("preview_deleted", "Preview deleted"),
                    ("consent_changed", "Consent changed"),
                    ("recruitment_changed", "Recruitment changed"),
                    ("participant_joined", "Participant joined"),
                    ("participant_state", "Participant state"),
                    ("participant_withdrawn", "Participant withdrawn"),
                    ("exclusion_marked", "Exclusion marked"),
                    ("exclusion_cleared", "Exclusion cleared"),
                ],
                max_length=60,
            ),
        ),
    ]
