"""A run's sRBP for a session is the same whether the session is scored alone or in a chunk with other topics'
sessions: its largest grade is the study's scale's (stored in the run's measure_params), never the largest
grade among the topics of the chunk. A run keeps the top grade it stored, so its numbers do not change."""

import pytest

from scoring import services
from scoring.models import SessionScore

from .conftest import reference_version

pytestmark = pytest.mark.django_db


@pytest.fixture
def srbp_run(constructed, collection_docs, django_capture_on_commit_callbacks):
    """Topic 1 judged up to grade 2 only (the others up to 3), on the study's 0..3 scale, in version 2."""
    grades = {topic: dict(judged) for topic, judged in constructed.grades.items()}
    grades["1"] = {doc: min(grade, 2) for doc, grade in grades["1"].items()}
    grades["1"]["d0"] = 2
    reference_version(constructed.study, grades, docs=collection_docs)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=constructed.study, measures=["srbp"])
    run.refresh_from_db()
    assert run.status == "done" and run.measure_params["grade_max"] == 3
    return constructed, run


def _srbp(run):
    return dict(SessionScore.objects.filter(run=run).values_list("session_id", "measures__srbp"))


def _alone(run, session_ids):
    for session_id in session_ids:
        assert services.scoring_chunk_score(
            run_id=run.pk, pass_number=run.current_pass, session_ids=[session_id]
        )


def test_each_session_scored_alone_has_the_srbp_it_has_in_the_whole_study(srbp_run):
    built, run = srbp_run
    together = _srbp(run)
    topic_one = [s["id"] for s in built.sessions if s["topic"] == "1" and s["id"] is not None]
    assert len(together) == 32 and topic_one and any(together[s] > 0 for s in topic_one)
    _alone(run, together)
    assert _srbp(run) == pytest.approx(together, rel=1e-12)  # sums over other batch sizes: last-ulp only


def test_a_run_stored_without_a_top_grade_takes_the_scales_not_its_chunks(srbp_run):
    built, run = srbp_run
    together = _srbp(run)
    run.measure_params.pop("grade_max")
    run.save(update_fields=["measure_params"])
    _alone(run, together)
    assert _srbp(run) == pytest.approx(together, rel=1e-12)


def test_a_run_keeps_the_top_grade_it_was_created_with(srbp_run):
    built, run = srbp_run
    together = _srbp(run)
    run.measure_params["grade_max"] = 2  # as created on an older 0..2 scale
    run.save(update_fields=["measure_params"])
    _alone(run, together)
    assert _srbp(run) == pytest.approx({s: value * 3 / 2 for s, value in together.items()}, rel=1e-12)
