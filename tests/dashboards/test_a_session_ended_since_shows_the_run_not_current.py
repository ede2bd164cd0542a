"""A session that ends after a run was scored makes the run not current, said with the count, until the
re-score has run; shown so whether or not the hook that queues the re-score has run yet."""

import pytest

from scoring import services
from scoring.freshness import run_freshness
from tests.factories import study_scored

from .conftest import build_study, make_session

pytestmark = pytest.mark.django_db


def test_a_session_ended_since_is_counted_until_scored(
    designed_study, collection_docs, django_capture_on_commit_callbacks
):
    built = build_study(designed_study, collection_docs, skip={("P003", 2)})
    run = study_scored(designed_study, django_capture_on_commit_callbacks)
    assert run_freshness(run).current
    missing = next(s for s in built.sessions if s["id"] is None)
    session = make_session(missing["assignment"], missing["lists"], docs=collection_docs)
    # Ended, the hook not yet run: the run says so at once.
    assert run_freshness(run).reasons == ("1 session ended since",)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.study_scores_mark_stale(study_id=designed_study.pk, session_ids=[session.pk])
    run.refresh_from_db()
    assert run.status == "done" and not run_freshness(run).current  # "done", but not current
    assert len(callbacks) == 1
    callbacks[0]()
    run.refresh_from_db()
    assert run_freshness(run).current and run.session_scores.count() == 32
