"""A withdrawal and the deletion of the participant's scores are one transaction: if scoring's
part fails, nothing of the withdrawal is kept (their data, state and scores all stay, no audit row, nothing
queued), so a retry finds the participant as before, never half withdrawn."""

import pytest

from scoring import withdrawal
from scoring.models import ScoringRun, SessionScore
from studies.models import AuditEntry, Query, SearchSession
from studies.participation.way.steps import participant_withdraw

pytestmark = pytest.mark.django_db


def test_a_failing_scoring_part_keeps_everything(scored, monkeypatch, django_capture_on_commit_callbacks):
    built, run = scored
    code = built.sessions[0]["participant"]
    participant = built.study.participants.get(code=code)
    generation = ScoringRun.objects.get(pk=run.pk).generation

    def broken(**kwargs):
        raise RuntimeError("the scoring database is gone")

    monkeypatch.setattr(withdrawal, "power_plans_withdraw", broken)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        with pytest.raises(RuntimeError, match="scoring database"):
            participant_withdraw(participant=participant, by="researcher")
    assert callbacks == []  # no re-score, no pool growth queued
    participant.refresh_from_db()
    assert participant.withdrawn_at is None and participant.state != "withdrawn"
    sessions = SearchSession.objects.filter(assignment__participant=participant)
    assert sessions.count() == 4 and not sessions.filter(end_reason="withdrawn").exists()
    assert Query.objects.filter(session__in=sessions).exists()
    assert SessionScore.objects.filter(run=run, participant=participant).count() == 4
    assert ScoringRun.objects.get(pk=run.pk).generation == generation
    assert not AuditEntry.objects.filter(action="participant_withdrawn").exists()
    # The withdrawal can be done again, whole.
    monkeypatch.undo()
    participant_withdraw(participant=participant, by="researcher")
    assert not SessionScore.objects.filter(participant=participant).exists()
    assert AuditEntry.objects.get(action="participant_withdrawn").detail["scores"]["session_scores"] == 4
