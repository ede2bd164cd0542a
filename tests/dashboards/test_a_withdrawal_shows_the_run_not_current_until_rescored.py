"""A participant who withdraws after the run was scored: their sessions are no longer the study's finished
sessions, so the run is not current until the re-score drops them."""

import pytest

from scoring.freshness import run_freshness
from studies.participation.steps import participant_withdraw

pytestmark = pytest.mark.django_db


def test_withdrawn_sessions_make_the_run_stale_until_the_rescore_drops_them(
    scored, django_capture_on_commit_callbacks
):
    built, run = scored
    participant = built.study.participants.get(code=built.sessions[0]["participant"])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        participant_withdraw(participant=participant, by="researcher")
    assert run_freshness(run).reasons == ("4 scored sessions no longer count (withdrawn since)",)
    for callback in callbacks:
        callback()
    run.refresh_from_db()
    assert run_freshness(run).current and run.session_scores.count() == 28
