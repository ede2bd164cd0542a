"""Builders of a study in one populated state each, for the fixtures of tests/<area>/conftest.py.

Each builder takes what the state before it gives and writes through the real services where there are
some (studies.design.services); rows no service writes yet (a session's queries, shown results, events,
judgments as a client logged them) are created directly. The fixtures stay thin wrappers, so test bodies
keep their fixture names.

- study_designed(study): the paper's design, four scenarios and two systems, no participants.
- study_enrolled(study, count, collection=None): over `collection`, `count` participants enrolled by the
  study's own Latin square (services.participants_enrol); the design is fixed from then on.
- study_with_sessions(study, collection): 2 enrolled participants, P001 has worked two assignments.
- study_judged(study, collection): 2 participants over `collection`; P001 consented, answered the
  questionnaire, started its first session, was shown d1 for "wing" and judged it 2 (participation's steps).
- study_scored(study, capture_on_commit): the study's default scoring run, done (eager Celery).
"""

import datetime as dt
import uuid

from django.utils import timezone

from studies.design import services
from studies.models import Event, Judgment, JudgmentChange, Query, SearchSession, ShownResult


def study_designed(study):
    """The study with the paper's design: four scenarios, two systems, no participants yet."""
    for n in range(1, 5):
        services.scenario_add(
            study=study, code=f"S{n}", title=f"Scenario {n}", text=f"Scenario text {n}", topic_id=str(n)
        )
    services.system_add(study=study, code="A", name="System A", config={"configuration": "bm25_title_text"})
    services.system_add(study=study, code="B", name="System B", config={"configuration": "bm25_text"})
    return study


def study_enrolled(study, count, *, collection=None):
    """`count` participants enrolled in `study` (over `collection` when given) by the real service."""
    if collection is not None:
        study.collection = collection
        study.save(update_fields=["collection"])
    services.participants_enrol(study=study, count=count)
    return study


def study_with_sessions(study, collection):
    """A designed study with 2 enrolled participants; P001 has worked its first two assignments: queries,
    shown results, clicks (document open/close events), judgments with a change, a scan mark."""
    already = study.participants.count()
    study_enrolled(study, 2, collection=collection)
    participants = list(study.participants.order_by("enrolment_index"))[already:]
    # Client times an hour before now, within CLIENT_TIME_WINDOW_SECONDS of the events' server times (which
    # are now): an archive's import keeps a client time further off only as text
    # (studies/participation/events/event_checks.py).
    base = (timezone.now() - dt.timedelta(hours=1)).replace(microsecond=123456)
    documents = {d.external_id: d for d in collection.documents.all()}
    participant = participants[0]
    participant.consented_at, participant.consent_version = base, "1"
    participant.questionnaire_answers = {"search_skill": 4}
    participant.save()
    for offset, assignment in enumerate(participant.assignments.order_by("position")[:2]):
        t0 = base + dt.timedelta(minutes=10 * offset)
        session = SearchSession.objects.create(
            assignment=assignment,
            started_at=t0,
            ended_at=t0 + dt.timedelta(minutes=5),
            end_reason="satisfied",
        )
        Event.objects.create(
            participant=participant,
            session=session,
            type="session_start",
            client_event_id=f"c{offset}.start",
            client_time=t0,
            origin="server",  # the session's start is the server's row
            payload={"data": {"assignment": assignment.position}, "ack": {"ok": True, "session": session.pk}},
        )
        for position in (1, 2):
            issued = t0 + dt.timedelta(seconds=30 * position)
            query = Query.objects.create(
                session=session,
                position=position,
                text=f"query {offset} {position}",
                issued_at=issued,
                scan_mark_rank=3 if position == 1 else None,
            )
            ShownResult.objects.bulk_create(
                ShownResult(
                    query=query,
                    rank=rank,
                    document=documents[f"d{(rank + position + offset) % 8 + 1}"],
                    title=f"T{rank}",
                    snippet=f"snippet {rank}",
                    shown_at=issued,
                )
                for rank in range(1, 5)
            )
            Event.objects.create(
                participant=participant,
                session=session,
                type="query",
                client_event_id=f"c{offset}.q{position}",
                client_time=issued,
                payload={
                    "data": {"text": query.text},
                    "ack": {"ok": True, "query": position, "query_id": query.pk, "page": 1},
                },
            )
            doc = query.shown_results.get(rank=2).document
            opened = issued + dt.timedelta(seconds=5)
            Event.objects.create(
                participant=participant,
                session=session,
                type="document_open",
                client_event_id=f"c{offset}.q{position}.open",
                client_time=opened,
                payload={
                    "data": {"doc": doc.external_id, "query": position, "rank": 2},
                    "ack": {"ok": True, "doc": doc.external_id, "open_document_id": doc.pk},
                },
            )
            Event.objects.create(
                participant=participant,
                session=session,
                type="document_close",
                client_event_id=f"c{offset}.q{position}.close",
                client_time=opened + dt.timedelta(seconds=7),
                payload={
                    "data": {"doc": doc.external_id, "query": position, "rank": 2, "dwell_ms": 7000},
                    "ack": {"ok": True, "doc": doc.external_id},
                },
            )
            judgment, _ = Judgment.objects.get_or_create(
                session=session,
                document=doc,
                defaults={"grade": 1, "created_at": opened, "updated_at": opened},
            )
            JudgmentChange.objects.create(judgment=judgment, grade=1, changed_at=opened)
            if position == 2:
                judgment.grade, judgment.updated_at = 3, opened + dt.timedelta(seconds=9)
                judgment.save()
                JudgmentChange.objects.create(judgment=judgment, grade=3, changed_at=judgment.updated_at)
    return study


def study_judged(study, collection):
    """Two participants enrolled over `collection` (which has a document "d1"); the first consented, answered
    the questionnaire and judged d1 a 2 in its first session, all through studies.participation.way.steps (the
    query and its shown result are written directly: the engine is not run). Returns (participant,
    other_participant, session)."""
    from studies.participation.way.form_steps import consent_record, questionnaire_save, session_start
    from studies.participation.way.steps import judgment_record

    def cid():
        return uuid.uuid4().hex

    already = study.participants.count()
    study_enrolled(study, 2, collection=collection)
    participant, other_participant = list(study.participants.order_by("enrolment_index"))[already:]
    consent_record(participant=participant, consent_version=study.consent_version, client_event_id=cid())
    questionnaire_save(
        participant=participant,
        client_event_id=cid(),
        answers={"search_engine_years": 7, "domain_years": 21, "search_skill": 2},
    )
    assignment = participant.assignments.order_by("position").first()
    session = session_start(participant=participant, assignment=assignment, client_event_id=cid())
    query = Query.objects.create(session=session, position=1, text="wing", issued_at=timezone.now())
    ShownResult.objects.create(
        query=query, rank=1, document=collection.documents.get(external_id="d1"), shown_at=timezone.now()
    )
    judgment_record(participant=participant, session=session, doc="d1", grade=2, client_event_id=cid())
    participant.refresh_from_db()
    return participant, other_participant, session


def study_scored(study, capture_on_commit):
    """The study's default run, created by scoring.services and scored (eager Celery; the on-commit callbacks
    run through pytest-django's `django_capture_on_commit_callbacks`, passed as `capture_on_commit`)."""
    from scoring import services as scoring_services

    with capture_on_commit(execute=True):
        run = scoring_services.scoring_run_create(study=study)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run
