# A withdrawal deletes the participant's scores from every run (scoring/withdrawal.py). Before, only
# the default run dropped them when re-scored, so older runs kept them: this deletes, once, every session score
# and query score of a participant withdrawn before, bumps those runs' chart generations (no cached chart
# still draws them), and fails each pilot power plan whose stored sample holds them (its sample and chunks
# cleared; asking for the plan again computes it anew, since a failed plan is never reused). Nothing is
# queued by the migration. There is nothing to undo.

from django.db import migrations
from django.db.models import F

PLAN_ERROR = "a participant of its pilot withdrew: their sessions were removed; ask for the plan again"


def withdrawn_scores_delete(apps, schema_editor):
    ScoringRun = apps.get_model("scoring", "ScoringRun")
    SessionScore = apps.get_model("scoring", "SessionScore")
    QueryScore = apps.get_model("scoring", "QueryScore")
    PowerPlan = apps.get_model("scoring", "PowerPlan")
    PowerChunk = apps.get_model("scoring", "PowerChunk")
    Participant = apps.get_model("studies", "Participant")
    withdrawn = Participant.objects.filter(withdrawn_at__isnull=False)
    rows = SessionScore.objects.filter(participant__in=withdrawn)
    run_ids = sorted(set(rows.values_list("run_id", flat=True)))
    QueryScore.objects.filter(session__assignment__participant__in=withdrawn).delete()
    rows.delete()
    ScoringRun.objects.filter(pk__in=run_ids).update(generation=F("generation") + 1)
    gone = {str(pk) for pk in withdrawn.values_list("pk", flat=True)}
    if not gone:
        return
    # A pilot's sample names participants by id (plans stored before) or by code within its study.
    codes: dict[int, set[str]] = {}
    for study_id, code in withdrawn.values_list("study_id", "code"):
        codes.setdefault(study_id, set()).add(code)
    for plan in PowerPlan.objects.filter(effect="pilot").only("pk", "study_id", "sample"):
        labels = set((plan.sample or {}).get("participant", []))
        if gone & labels or codes.get(plan.study_id, set()) & labels:
            PowerChunk.objects.filter(plan_id=plan.pk).delete()
            PowerPlan.objects.filter(pk=plan.pk).update(status="failed", sample={}, error=PLAN_ERROR)


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0008_session_score_provenance"),
        ("studies", "0035_llm_audit_actions"),
    ]

    operations = [migrations.RunPython(withdrawn_scores_delete, migrations.RunPython.noop)]
