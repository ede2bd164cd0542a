"""A participant who withdraws after the run was scored: their session scores leave the run in the
withdrawal's own transaction, so the run holds only the study's finished sessions and is current at once,
before any re-score runs (it once showed "4 scored sessions no longer count" until a worker dropped them)."""

import pytest

from scoring.freshness import run_freshness
from studies.participation.way.steps import participant_withdraw

pytestmark = pytest.mark.django_db


def test_withdrawn_sessions_leave_the_default_run_before_any_rescore(
    scored, django_capture_on_commit_callbacks
):
    built, run = scored
    participant = built.study.participants.get(code=built.sessions[0]["participant"])
    with django_capture_on_commit_callbacks(execute=False):
        participant_withdraw(participant=participant, by="researcher")
    assert run.session_scores.count() == 28
    assert not run.session_scores.filter(participant=participant).exists()
    assert run_freshness(run).current
