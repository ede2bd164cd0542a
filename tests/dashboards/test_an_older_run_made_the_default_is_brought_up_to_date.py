"""Making an older run the default (scored on reference v1 while v6 is the latest) points it at v6 and queues
the re-score of what it owes. Until that has run, its pages, status and API say it is not current, though its
status is "done"; after it, current, with the numbers a run scored on v6 has."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from scoring import services
from scoring.models import SessionScore

from .conftest import reference_version

pytestmark = pytest.mark.django_db


@pytest.fixture
def older_run(scored, collection_docs, django_capture_on_commit_callbacks):
    """Run 1 scored on v1; run 2, the default since, re-scored through v2..v6 (v6 regrades topics 1 and 2)."""
    built, first = scored
    with django_capture_on_commit_callbacks(execute=True):
        second = services.scoring_run_create(study=built.study, make_default=True)
    for number in range(2, 7):
        grades = {topic: dict(judged) for topic, judged in built.grades.items()}
        if number == 6:
            grades["1"] = {ext: 3 for ext in grades["1"]}
            grades["2"] = {ext: 0 for ext in grades["2"]}
        with django_capture_on_commit_callbacks(execute=True):
            reference_version(built.study, grades, docs=collection_docs)
            services.reference_version_changed(study_id=built.study.pk)
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.reference_version.number, second.reference_version.number) == (1, 6)
    return built, first, second


def _api(built, run):
    client = APIClient()
    client.force_authenticate(built.study.owner)
    return client.get(f"/api/studies/{built.study.pk}/scoring-runs/{run.pk}/").json()


def _finals(run):
    return dict(SessionScore.objects.filter(run=run).values_list("session_id", "final"))


def test_the_older_run_shows_stale_then_current_once_rescored(
    client, older_run, django_capture_on_commit_callbacks
):
    built, first, second = older_run
    client.force_login(built.study.owner)
    runs_page = client.get(reverse("scoring:runs", args=[built.study.slug])).content.decode()
    assert "not current: scored on reference v1, v6 is the latest" in runs_page
    assert _api(built, first)["freshness"]["reasons"] == ["scored on reference v1, v6 is the latest"]
    assert _api(built, second)["stale"] is False

    with django_capture_on_commit_callbacks(execute=False) as rescore:
        response = client.post(
            reverse("scoring:run_make_default", args=[built.study.slug, first.pk]), follow=True
        )
    assert "is being brought up to date" in response.content.decode()
    first.refresh_from_db()
    assert first.is_default and first.reference_version.number == 6 and first.status == "done"
    topics_one_two = SessionScore.objects.filter(run=first, scenario__topic_id__in=["1", "2"]).count()
    reason = f"{topics_one_two} sessions still scored on reference v1, v6 is the latest"
    detail = client.get(reverse("scoring:run_detail", args=[built.study.slug, first.pk])).content.decode()
    assert '<strong>Not current</strong>: <span class="freshness-reasons">' + reason + "</span>." in detail
    assert 'data-finished="0"' in detail  # the status box follows the re-score, then reloads the page
    status = client.get(reverse("scoring:run_status", args=[built.study.slug, first.pk])).json()
    assert (status["status"], status["stale"], status["reasons"], status["finished"]) == (
        "done",
        True,
        [reason],
        False,
    )
    second_page = client.get(reverse("scoring:run_detail", args=[built.study.slug, second.pk])).content
    assert b'data-finished="1"' in second_page
    assert _api(built, first)["stale"] is True

    for callback in rescore:
        callback()
    first.refresh_from_db()
    assert first.progress_total == topics_one_two  # only the regraded topics' sessions
    detail = client.get(reverse("scoring:run_detail", args=[built.study.slug, first.pk])).content.decode()
    assert (
        "Current: scored on the study's latest data (reference v6)" in detail
        and 'data-finished="1"' in detail
    )
    assert _api(built, first)["freshness"] == {
        "current": True,
        "reasons": [],
        "latest_reference_version_number": 6,
    }
    assert _finals(first) == _finals(second)
