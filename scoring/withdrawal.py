"""A participant's withdrawal reaches every scoring run (docs/study-life-cycle.md, "Withdrawal").

Withdrawal promises deletion, so scoring deletes what it holds of the participant in the withdrawal's own
transaction (studies.signals.participant_withdrawn; scoring/receivers.py calls this): their session scores in
every run of the study, default or not (their per-query rows went with their queries, by the foreign key),
and the stored power-plan data taken from them (scoring.planning.services.power_plans_withdraw). Every
figure of a run is computed from its rows when read, so a run without the rows shows what a fresh run would;
each touched run's chart cache generation is bumped so no cached chart, table or CSV still draws them. What
went is added to the withdrawal's audit row (detail["scores"]), without any of the scores. Anything failing
here fails the withdrawal: nothing is half done.

A chunk being scored while the participant withdraws cannot bring a row back: its query rows reference the
deleted queries, so its upsert fails on the foreign key and writes nothing (the next pass skips the session,
which is no longer scorable).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction
from django.db.models import F, Q

from studies.models import AuditEntry

from .models import QueryScore, ScoringRun, SessionScore
from .planning.services import power_plans_withdraw


@transaction.atomic
def participant_scores_delete(
    *, study_id: int, participant_id: int, session_ids: Sequence[int], audit_entry_id: int | None = None
) -> dict:
    """Delete the participant's session (and any left query) scores from every run of the study, bump those
    runs' chart generations, start again or recompute the power plans built on them; record the counts on
    the audit entry. Returns what went: {"runs": [run ids], "session_scores": n, "power_plans": [plan
    ids]}."""
    held = SessionScore.objects.filter(run__study_id=study_id).filter(
        Q(participant_id=participant_id) | Q(session_id__in=list(session_ids))
    )
    run_ids = sorted(set(held.values_list("run_id", flat=True)))
    session_scores = held.delete()[1].get("scoring.SessionScore", 0)
    QueryScore.objects.filter(run__study_id=study_id, session_id__in=list(session_ids)).delete()
    ScoringRun.objects.filter(pk__in=run_ids).update(generation=F("generation") + 1)
    went = {
        "runs": run_ids,
        "session_scores": session_scores,
        "power_plans": power_plans_withdraw(
            study_id=study_id, participant_id=participant_id, session_ids=session_ids
        ),
    }
    if audit_entry_id is not None:
        entry = AuditEntry.objects.select_for_update().get(pk=audit_entry_id)
        entry.detail = {**entry.detail, "scores": went}
        entry.save(update_fields=["detail"])
    return went
