"""A session that ends re-scores the study's default run and grows the assessment pools, after the request
commits; a new reference version re-scores the run against it."""

import pytest

from scoring.models import ScoringRun, SessionScore
from scoring.services import scoring_run_create
from studies.assessment import pools, references
from studies.models import PoolDocument, ReferenceJudgment, ReferenceVersion
from studies.participation.way.steps import judgment_record, query_log, session_end

from .conftest import cid

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored_study(running_study, alice, django_capture_on_commit_callbacks):
    version = ReferenceVersion.objects.create(study=running_study, number=1)
    documents = running_study.collection.documents.order_by("pk")
    ReferenceJudgment.objects.bulk_create(
        ReferenceJudgment(version=version, topic_id=str(n), document=d, grade=3)
        for n in range(1, 5)
        for d in documents[:5]
    )
    with django_capture_on_commit_callbacks(execute=True):
        scoring_run_create(study=running_study, created_by=alice)
    pools.pool_build(study=running_study)  # the researcher built the pools once
    return running_study


def test_ending_a_session_scores_it_and_pools_what_the_participant_found(
    scored_study, session, alice, django_capture_on_commit_callbacks
):
    participant = session.assignment.participant
    run = ScoringRun.objects.get(study=scored_study, is_default=True)
    assert not SessionScore.objects.filter(run=run, session=session).exists()
    ack = query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    found = ack["results"][0]["doc"]
    judgment_record(participant=participant, session=session, doc=found, grade=2, client_event_id=cid())

    with django_capture_on_commit_callbacks(execute=True):
        session_end(participant=participant, session=session, reason="satisfied", client_event_id=cid())

    run.refresh_from_db()
    assert not run.stale and run.status == "done"
    assert SessionScore.objects.filter(run=run, session=session).count() == 1
    pool = session.assignment.scenario.assessment_pool
    assert PoolDocument.objects.filter(pool=pool, document__external_id=found).exists()


def test_a_new_reference_version_rescores_the_default_run_against_it(
    scored_study, session, alice, django_capture_on_commit_callbacks
):
    participant = session.assignment.participant
    query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    with django_capture_on_commit_callbacks(execute=True):
        session_end(participant=participant, session=session, reason="gave_up", client_event_id=cid())
    run = ScoringRun.objects.get(study=scored_study, is_default=True)
    before = SessionScore.objects.get(run=run, session=session).final
    assert before > 0

    scenario = session.assignment.scenario
    with django_capture_on_commit_callbacks(execute=True):
        version = references.reference_version_import_qrels(
            study=scored_study,
            lines=[f"{scenario.topic_id} 0 1 0\n"],
            path="none-relevant.qrels",
            created_by=alice,
        )

    run.refresh_from_db()
    assert run.reference_version_id == version.pk
    assert SessionScore.objects.get(run=run, session=session).final == 0
