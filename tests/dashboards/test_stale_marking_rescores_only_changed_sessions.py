"""New sessions, changed judgments and a new reference version mark the default run stale and re-score only
what changed, queued on commit (never inside the request that caused it)."""

import pytest

from scoring import services
from scoring.models import ScoringRun, SessionScore

from .conftest import build_study, make_session, reference_version

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored_with_a_missing_session(designed_study, collection_docs, django_capture_on_commit_callbacks):
    built = build_study(designed_study, collection_docs, skip={("P003", 2)})
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=designed_study)
    run.refresh_from_db()
    return built, run


def _passes(run):
    return dict(SessionScore.objects.filter(run=run).values_list("session_id", "pass_number"))


def test_a_new_session_is_scored_alone(
    scored_with_a_missing_session, collection_docs, django_capture_on_commit_callbacks
):
    built, run = scored_with_a_missing_session
    assert SessionScore.objects.filter(run=run).count() == 31
    before = _passes(run)
    generation = run.generation
    missing = next(s for s in built.sessions if s["id"] is None)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        session = make_session(missing["assignment"], missing["lists"], docs=collection_docs)
        assert services.study_scores_mark_stale(study_id=built.study.pk, session_ids=[session.pk]) == run
        run.refresh_from_db()
        assert run.stale  # marked at once; nothing scored yet
        assert SessionScore.objects.filter(run=run).count() == 31
    assert len(callbacks) == 1
    callbacks[0]()
    run.refresh_from_db()
    after = _passes(run)
    assert len(after) == 32 and after[session.pk] == run.current_pass
    assert {k: v for k, v in after.items() if k != session.pk} == before  # nobody else re-scored
    assert not run.stale and run.status == ScoringRun.Status.DONE
    assert run.progress_total == 1 and run.generation == generation + 1


def test_changed_participant_judgments_rescore_their_session(
    scored, collection_docs, django_capture_on_commit_callbacks
):
    built, run = scored
    target = built.sessions[5]["id"]
    before = _passes(run)
    with django_capture_on_commit_callbacks(execute=True):
        services.study_scores_mark_stale(study_id=built.study.pk, session_ids=[target])
    run.refresh_from_db()
    after = _passes(run)
    assert [k for k in after if after[k] != before[k]] == [target]


def test_a_new_reference_version_rescores_only_the_scenarios_whose_judgments_changed(
    scored, collection_docs, django_capture_on_commit_callbacks
):
    built, run = scored
    before = dict(SessionScore.objects.filter(run=run).values_list("session_id", "final"))
    passes = _passes(run)
    grades = {topic: dict(g) for topic, g in built.grades.items()}
    grades["2"] = {doc: 3 for doc in grades["2"]}  # every judged document of topic 2 now highly relevant
    with django_capture_on_commit_callbacks(execute=True):
        version = reference_version(built.study, grades, docs=collection_docs)
        services.reference_version_changed(study_id=built.study.pk)
    run.refresh_from_db()
    assert run.reference_version == version and not run.stale
    after = dict(SessionScore.objects.filter(run=run).values_list("session_id", "final"))
    new_passes = _passes(run)
    topic_2 = {s["id"] for s in built.sessions if s["topic"] == "2"}
    assert {k for k in new_passes if new_passes[k] != passes[k]} == topic_2
    assert all(after[k] == before[k] for k in after if k not in topic_2)
    assert any(after[k] > before[k] for k in topic_2)


def test_an_identical_reference_version_rescores_nothing(
    scored, collection_docs, django_capture_on_commit_callbacks
):
    built, run = scored
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        version = reference_version(built.study, built.grades, docs=collection_docs)
        services.reference_version_changed(study_id=built.study.pk)
    run.refresh_from_db()
    assert callbacks == [] and run.reference_version == version and not run.stale


def test_only_the_default_run_follows_the_study(scored, django_capture_on_commit_callbacks):
    built, run = scored
    with django_capture_on_commit_callbacks(execute=True):
        other = services.scoring_run_create(study=built.study, b=4.0)
    other.refresh_from_db()
    assert not other.is_default
    generation = other.generation
    with django_capture_on_commit_callbacks(execute=True):
        services.study_scores_mark_stale(study_id=built.study.pk)
    other.refresh_from_db()
    assert other.generation == generation  # an old run is kept as it was, for comparison


def test_a_study_without_a_default_run_has_nothing_to_mark(constructed):
    assert services.study_scores_mark_stale(study_id=constructed.study.pk) is None
    assert services.reference_version_changed(study_id=constructed.study.pk) is None
