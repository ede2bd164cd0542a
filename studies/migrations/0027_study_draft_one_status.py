"""One study status: a draft state before the set-up checklist passes, and the recruitment page's
two switches (public link open, closed to new arrivals) folded into the study's open/paused/closed.

Existing studies keep working:
- a study with no status yet (read as open) becomes a draft only if it could take nobody anyway: no real
  participant and no scenario or no system; every other one is written "open";
- an open study whose public link had been closed by the researcher (the "closed to new arrivals" box, or
  the link switched off after panel participants had come through it) becomes "paused", so that nobody new
  arrives through a link the researcher had closed; the study page's "Open again" undoes it. Each such change
  is in the study's audit log.
A study whose public link was never used (switched off, no panel participant) is left open: the link now
takes arrivals while the study is open, and nobody has been given it.
"""

from django.db import migrations, models
from django.utils import timezone

WHY = "migration 0027: the recruitment page's closing switch folded into the study's status"


def one_status(apps, schema_editor):
    Study = apps.get_model("studies", "Study")
    Participant = apps.get_model("studies", "Participant")
    Recruitment = apps.get_model("studies", "Recruitment")
    AuditEntry = apps.get_model("studies", "AuditEntry")
    for study in Study.objects.filter(status__isnull=True).iterator():
        real = Participant.objects.filter(study=study, preview_at__isnull=True).exists()
        designed = study.scenarios.exists() and study.systems.exists()
        study.status = "open" if real or designed else "draft"
        study.save(update_fields=["status"])
    for found in Recruitment.objects.filter(study__status="open").select_related("study").iterator():
        used = Participant.objects.filter(study=found.study, panel_id__isnull=False).exists()
        if found.closed_at is None and (found.public_link_open or not used):
            continue
        Study.objects.filter(pk=found.study_id).update(status="paused", status_changed_at=timezone.now())
        AuditEntry.objects.create(
            study_id=found.study_id,
            action="study_status_changed",
            detail={"from": "open", "to": "paused", "by": "", "why": WHY},
        )


def two_switches(apps, schema_editor):
    """Back: a draft reads as no status (open, as before), and the link is open where the study is."""
    Study = apps.get_model("studies", "Study")
    Recruitment = apps.get_model("studies", "Recruitment")
    Study.objects.filter(status="draft").update(status=None)
    Recruitment.objects.filter(models.Q(study__status="open") | models.Q(study__status__isnull=True)).update(
        public_link_open=True
    )


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0026_designs"),
    ]

    operations = [
        migrations.AlterField(
            model_name="study",
            name="status",
            field=models.CharField(
                blank=True,
                choices=[("draft", "Draft"), ("open", "Open"), ("paused", "Paused"), ("closed", "Closed")],
                max_length=10,
                null=True,
            ),
        ),
        migrations.RunPython(one_status, two_switches),
        migrations.RemoveField(
            model_name="recruitment",
            name="closed_at",
        ),
        migrations.RemoveField(
            model_name="recruitment",
            name="public_link_open",
        ),
        migrations.AlterField(
            model_name="auditentry",
            name="action",
            field=models.CharField(
                choices=[
                    ("study_status_changed", "Study status changed"),
                    ("study_copied", "Study copied"),
                    ("preview_started", "Preview started"),
                    ("preview_deleted", "Preview deleted"),
                    ("consent_changed", "Consent changed"),
                    ("recruitment_changed", "Recruitment changed"),
                    ("participant_joined", "Participant joined"),
                    ("participant_state", "Participant state"),
                    ("participant_withdrawn", "Participant withdrawn"),
                    ("exclusion_marked", "Exclusion marked"),
                    ("exclusion_cleared", "Exclusion cleared"),
                    ("events_archived", "Events archived"),
                    ("events_restored", "Events restored"),
                ],
                max_length=60,
            ),
        ),
    ]
