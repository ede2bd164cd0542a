"""Every page and API that shows a run's state reads its freshness when asked, never ScoringRun.stale (the
re-score queue's mark): a run marked stale whose scores are current says current, an unmarked one on an old
reference version says not current. Freshness costs a fixed number of queries, whatever the number of runs."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from scoring import services
from scoring.freshness import runs_freshness
from scoring.models import ScoringRun
from studies.models import ReferenceVersion

pytestmark = pytest.mark.django_db


def _shown(client, built, run):
    """What the run list, the dashboard, the status JSON and the API say of `run`."""
    slug = built.study.slug
    api = APIClient()
    api.force_authenticate(built.study.owner)
    return {
        "list": client.get(reverse("scoring:runs", args=[slug])).content.decode(),
        "detail": client.get(reverse("scoring:run_detail", args=[slug, run.pk])).content.decode(),
        "status": client.get(reverse("scoring:run_status", args=[slug, run.pk])).json(),
        "api": api.get(f"/api/studies/{built.study.pk}/scoring-runs/{run.pk}/").json(),
        "api_stale": api.get(f"/api/studies/{built.study.pk}/scoring-runs/?stale=true").json()["results"],
    }


def test_the_remembered_flag_is_not_what_the_pages_say(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    ScoringRun.objects.filter(pk=run.pk).update(stale=True)  # a queue mark left behind: not the truth
    shown = _shown(client, built, run)
    assert (
        ">current</span>" in shown["list"] and "Current: scored on the study's latest data" in shown["detail"]
    )
    assert shown["status"]["stale"] is False and shown["api"]["stale"] is False and shown["api_stale"] == []

    ScoringRun.objects.filter(pk=run.pk).update(stale=False)
    ReferenceVersion.objects.create(study=built.study, number=2)  # committed; no hook has run
    shown = _shown(client, built, run)
    reason = "scored on reference v1, v2 is the latest"
    assert (
        f"not current: {reason}" in shown["list"]
        and f'<strong>Not current</strong>: <span class="freshness-reasons">{reason}</span>.'
        in shown["detail"]
    )
    assert shown["status"]["reasons"] == [reason] and shown["api"]["freshness"]["reasons"] == [reason]
    assert [row["id"] for row in shown["api_stale"]] == [run.pk]


def test_freshness_of_many_runs_is_three_queries(
    scored, django_capture_on_commit_callbacks, django_assert_num_queries
):
    built, run = scored
    with django_capture_on_commit_callbacks(execute=True):
        for judgments in ("reference", "participant", "reference"):
            services.scoring_run_create(study=built.study, judgments=judgments, make_default=False)
    runs = list(ScoringRun.objects.filter(study=built.study).select_related("reference_version"))
    assert len(runs) == 4
    with django_assert_num_queries(3):
        freshness = runs_freshness(built.study, runs)
    assert all(f.current for f in freshness.values())
