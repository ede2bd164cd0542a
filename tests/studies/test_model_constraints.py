"""The rules of the data model hold in the database itself, whatever writes the rows."""

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from studies.design import services
from studies.models import (
    Assignment,
    Collection,
    Document,
    Event,
    Judgment,
    Query,
    ReferenceJudgment,
    ReferenceVersion,
    SearchSession,
    ShownResult,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(designed_study):
    participant = services.participants_enrol(study=designed_study, count=1)[0]
    assignment = participant.assignments.get(position=1)
    return SearchSession.objects.create(assignment=assignment, started_at=timezone.now())


@pytest.fixture
def document(designed_study):
    collection = Collection.objects.create(name="c")
    return Document.objects.create(collection=collection, external_id="d1", title="t", text="x")


def refused(callable_, *args, **kwargs):
    with pytest.raises(IntegrityError), transaction.atomic():
        callable_(*args, **kwargs)


def test_it_refuses_two_results_at_the_same_rank_of_a_query(session, document):
    query = Query.objects.create(session=session, position=1, text="q", issued_at=timezone.now())
    ShownResult.objects.create(query=query, rank=1, document=document, shown_at=timezone.now())
    refused(ShownResult.objects.create, query=query, rank=1, document=document, shown_at=timezone.now())
    refused(ShownResult.objects.create, query=query, rank=0, document=document, shown_at=timezone.now())


def test_it_refuses_a_gap_in_query_positions(session):
    refused(Query.objects.create, session=session, position=2, text="q", issued_at=timezone.now())
    Query.objects.create(session=session, position=1, text="q1", issued_at=timezone.now())
    Query.objects.create(session=session, position=2, text="q2", issued_at=timezone.now())
    refused(Query.objects.create, session=session, position=4, text="q4", issued_at=timezone.now())
    refused(Query.objects.create, session=session, position=2, text="again", issued_at=timezone.now())
    refused(Query.objects.filter(position=2).update, position=5)


def test_it_refuses_a_participant_grade_outside_the_study_scale(session, document):
    now = timezone.now()
    Judgment.objects.create(session=session, document=document, grade=3, created_at=now, updated_at=now)
    refused(Judgment.objects.filter(session=session).update, grade=4)
    Judgment.objects.all().delete()
    refused(
        Judgment.objects.create, session=session, document=document, grade=-1, created_at=now, updated_at=now
    )


def test_it_refuses_a_reference_grade_outside_the_study_scale(designed_study, document):
    version = ReferenceVersion.objects.create(study=designed_study, number=1)
    ReferenceJudgment.objects.create(version=version, topic_id="1", document=document, grade=0)
    refused(ReferenceJudgment.objects.create, version=version, topic_id="2", document=document, grade=7)
    refused(ReferenceJudgment.objects.create, version=version, topic_id="1", document=document, grade=1)


def test_a_custom_scale_moves_the_bounds(alice, document):
    binary = services.study_create(owner=alice, name="Binary", grade_labels=["no", "yes"])
    version = ReferenceVersion.objects.create(study=binary, number=1)
    ReferenceJudgment.objects.create(version=version, topic_id="1", document=document, grade=1)
    refused(ReferenceJudgment.objects.create, version=version, topic_id="2", document=document, grade=2)


def test_a_participant_works_each_scenario_once_unless_a_retake_says_why(session):
    first = session.assignment
    participant = first.participant
    refused(
        Assignment.objects.create,
        participant=participant,
        position=9,
        scenario=first.scenario,
        system=first.system,
    )
    refused(
        Assignment.objects.create,
        participant=participant,
        position=9,
        scenario=first.scenario,
        system=first.system,
        retake_of=first,
    )
    retake = services.assignment_retake(assignment=first, reason="browser crashed")
    assert retake.position == 5 and retake.retake_of == first


def test_it_stores_a_client_event_id_once_per_participant(session):
    participant = session.assignment.participant
    Event.objects.create(participant=participant, session=session, type="query", client_event_id="e1")
    refused(
        Event.objects.create, participant=participant, session=session, type="query", client_event_id="e1"
    )


def test_the_event_log_refuses_updates(session):
    participant = session.assignment.participant
    event = Event.objects.create(participant=participant, session=session, type="query", client_event_id="e1")
    refused(Event.objects.filter(pk=event.pk).update, type="changed")


def test_a_session_end_needs_a_reason_and_a_session_runs_once(session):
    refused(SearchSession.objects.filter(pk=session.pk).update, ended_at=timezone.now())
    refused(SearchSession.objects.create, assignment=session.assignment, started_at=timezone.now())
    SearchSession.objects.filter(pk=session.pk).update(ended_at=timezone.now(), end_reason="gave_up")


def test_participant_tokens_are_long_and_distinct(designed_study):
    participants = services.participants_enrol(study=designed_study, count=20)
    tokens = {p.access_token for p in participants}
    assert len(tokens) == 20
    assert all(len(t) >= 43 for t in tokens)  # 32 random bytes, base64url: 256 bits
