"""After one live session was re-scored, the run status said "Done 1/1 sessions" while the run held
32 session scores. The status now says the run's size and what its last update re-scored."""

import pytest

from scoring import services
from scoring.selectors import run_progress_text
from tests.dashboards.conftest import build_study, collection_docs, make_session  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


def test_the_status_shows_the_run_and_its_last_update(
    client,
    alice,
    designed_study,
    collection_docs,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    built = build_study(designed_study, collection_docs, skip={("P003", 2)})
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=designed_study)
    run.refresh_from_db()
    assert run_progress_text(run) == "31 sessions scored"
    missing = next(s for s in built.sessions if s["id"] is None)
    with django_capture_on_commit_callbacks(execute=True):
        session = make_session(missing["assignment"], missing["lists"], docs=collection_docs)
        services.study_scores_mark_stale(study_id=designed_study.pk, session_ids=[session.pk])
    run.refresh_from_db()
    assert (run.progress_done, run.progress_total) == (1, 1)  # the pass: one session
    client.force_login(alice)
    page = client.get(f"/scoring/{designed_study.slug}/runs/{run.pk}/").content.decode()
    assert "32 sessions scored; the last update re-scored 1" in page and "1/1 sessions" not in page
    status = client.get(f"/scoring/{designed_study.slug}/runs/{run.pk}/status.json").json()
    assert status["scored"] == 32 and status["text"] == "32 sessions scored; the last update re-scored 1"
    runs = client.get(f"/scoring/{designed_study.slug}/").content.decode()
    assert "Done: 32 sessions; last update re-scored 1" in runs
