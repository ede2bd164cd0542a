"""Right after each kind of change has committed, with no on-commit hook run (so ScoringRun.stale is still
False and the re-score not queued), the run's page, the runs list, the status JSON and the API all say the
run is not current, and its status is never a bare "Done": publishing by merge, merging into an
older version, replacing, a qrels import, a qrels round trip, a session ended since, an older run made the
default. Once the hooks have run and the re-score is done, the run reads current and "Done", and its
scores are those of a fresh run."""

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from scoring import services
from scoring.freshness import NOT_CURRENT_TEXT, UPDATING_TEXT
from scoring.models import ScoringRun, SessionScore
from studies.assessment import references
from studies.models import AdjudicationDecision, AssessmentPool, PoolDocument
from tests.factories import study_scored

from .conftest import build_study, make_session

pytestmark = pytest.mark.django_db


def _decide(built, docs, grades):
    """Adjudication decisions for S-scenario topics, {scenario code: {doc ext: grade}}."""
    for code, decided in grades.items():
        scenario = built.study.scenarios.get(code=code)
        pool, _ = AssessmentPool.objects.get_or_create(scenario=scenario)
        for ext, grade in decided.items():
            document = PoolDocument.objects.create(pool=pool, document=docs[ext], source="manual")
            AdjudicationDecision.objects.create(
                pool_document=document, grade=grade, method="researcher", decided_at=timezone.now()
            )


def _first_scenario_doc(built):
    scenario = built.study.scenarios.filter(practice=False).order_by("id").first()
    ext = next(iter(built.grades[scenario.topic_id]))
    return scenario, ext


def _publish_merge(built, docs, owner):
    scenario, ext = _first_scenario_doc(built)
    _decide(built, docs, {scenario.code: {ext: 3}})
    references.reference_version_publish(study=built.study, created_by=owner, mode="merge")


def _merge_into_a_version(built, docs, owner):
    references.reference_version_import_qrels(
        study=built.study,
        lines=references.reference_version_qrels(version=built.study.reference_versions.get()).splitlines(),
        path="v2.qrels",
        created_by=owner,
    )
    scenario, ext = _first_scenario_doc(built)
    _decide(built, docs, {scenario.code: {ext: 0}})
    references.reference_version_publish(study=built.study, created_by=owner, mode="merge", base_number=1)


def _replace(built, docs, owner):
    scenario, ext = _first_scenario_doc(built)
    _decide(built, docs, {scenario.code: {ext: 2}})
    references.reference_version_publish(study=built.study, created_by=owner, mode="replace")


def _qrels_import(built, docs, owner):
    scenario, ext = _first_scenario_doc(built)
    references.reference_version_import_qrels(
        study=built.study, lines=[f"{scenario.topic_id} 0 {ext} 3"], path="new.qrels", created_by=owner
    )


def _qrels_round_trip(built, docs, owner):
    exported = references.reference_version_qrels(version=built.study.reference_versions.get())
    references.reference_version_import_qrels(
        study=built.study, lines=exported.splitlines(), path="again.qrels", created_by=owner
    )


CHANGES = {
    "publish by merge": _publish_merge,
    "merge into a version": _merge_into_a_version,
    "replace": _replace,
    "qrels import": _qrels_import,
    "qrels round trip": _qrels_round_trip,
}


def _shown(client, built, run):
    slug = built.study.slug
    api = APIClient()
    api.force_authenticate(built.study.owner)
    return {
        "detail": client.get(reverse("scoring:run_detail", args=[slug, run.pk])).content.decode(),
        "list": client.get(reverse("scoring:runs", args=[slug])).content.decode(),
        "status": client.get(reverse("scoring:run_status", args=[slug, run.pk])).json(),
        "api": api.get(f"/api/studies/{built.study.pk}/scoring-runs/{run.pk}/").json(),
    }


def _assert_not_current(shown, status_text, *, followed=True):
    """`followed`: the page polls the status until the re-score is done (the default run's; no re-score
    comes for another run, so its page has nothing to follow)."""
    assert shown["status"]["stale"] is True and shown["status"]["current"] is False
    assert shown["status"]["status_text"] == status_text and shown["status"]["finished"] is not followed
    assert f'<span class="status-text">{status_text}</span>' in shown["detail"]
    assert "<strong>Not current</strong>" in shown["detail"]
    assert f'data-finished="{0 if followed else 1}"' in shown["detail"]
    assert f'<td class="run-status-text">{status_text}: ' in shown["list"]
    assert shown["api"]["stale"] is True and shown["api"]["freshness"]["current"] is False


def _assert_current(shown):
    assert shown["status"]["stale"] is False and shown["status"]["status_text"] == "Done"
    assert '<span class="status-text">Done</span>' in shown["detail"]
    assert shown["api"]["stale"] is False


def _finals(run):
    return dict(SessionScore.objects.filter(run=run).values_list("session_id", "final"))


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_reference_change_reads_not_current_before_its_hook(
    change, client, scored, collection_docs, django_capture_on_commit_callbacks
):
    built, run = scored
    owner = built.study.owner
    client.force_login(owner)
    _assert_current(_shown(client, built, run))
    with django_capture_on_commit_callbacks(execute=False) as hooks:
        CHANGES[change](built, collection_docs, owner)
    run.refresh_from_db()
    assert hooks and run.status == "done" and run.stale is False  # committed; no hook has run
    _assert_not_current(_shown(client, built, run), UPDATING_TEXT)

    with django_capture_on_commit_callbacks(execute=True):
        for hook in hooks:
            hook()
    run.refresh_from_db()
    _assert_current(_shown(client, built, run))
    with django_capture_on_commit_callbacks(execute=True):
        fresh = services.scoring_run_create(study=built.study, make_default=False)
    assert _finals(run) == _finals(fresh)


def test_a_session_ended_since_reads_not_current_before_its_hook(
    client, designed_study, collection_docs, django_capture_on_commit_callbacks
):
    built = build_study(designed_study, collection_docs, skip={("P003", 2)})
    run = study_scored(designed_study, django_capture_on_commit_callbacks)
    client.force_login(designed_study.owner)
    _assert_current(_shown(client, built, run))
    missing = next(s for s in built.sessions if s["id"] is None)
    with django_capture_on_commit_callbacks(execute=False) as hooks:
        make_session(missing["assignment"], missing["lists"], docs=collection_docs)
    run.refresh_from_db()
    assert run.stale is False
    _assert_not_current(_shown(client, built, run), UPDATING_TEXT)
    del hooks


def test_an_older_run_made_default_reads_not_current_before_its_hook(
    client, scored, collection_docs, django_capture_on_commit_callbacks
):
    built, first = scored
    owner = built.study.owner
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        second = services.scoring_run_create(study=built.study, make_default=True)
        _qrels_import(built, collection_docs, owner)
    second.refresh_from_db()
    first.refresh_from_db()
    assert second.reference_version.number == 2 and first.reference_version.number == 1
    # Not the default: nothing re-scores it, and it says so.
    _assert_not_current(_shown(client, built, first), NOT_CURRENT_TEXT, followed=False)
    # Made the default with the bringing up to date not run (as if its hook were lost).
    ScoringRun.objects.filter(pk=second.pk).update(is_default=False)
    ScoringRun.objects.filter(pk=first.pk).update(is_default=True)
    first.refresh_from_db()
    assert first.stale is False
    _assert_not_current(_shown(client, built, first), UPDATING_TEXT)
