"""The plain SQL of the events endpoint and a participant's pages (sessionlab/plain_sql.py) gives what the ORM
gives, on SQLite (pass 1 of CI) and PostgreSQL (pass 2)."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sessionlab import plain_sql
from studies.design import selectors, services
from studies.kernel import steps, tokens
from studies.models import Assignment, Collection, Document, Event, Judgment, Participant, SearchSession

pytestmark = pytest.mark.django_db
EVENT_COLUMNS = (
    "participant",
    "session",
    "type",
    "client_event_id",
    "sequence",
    "client_time",
    "server_time",
    "payload",
)


@pytest.fixture
def participant(designed_study):
    participant = services.participants_enrol(study=designed_study, count=1)[0]
    Participant.objects.filter(pk=participant.pk).update(
        consented_at=timezone.now(),
        consent_version="v1",
        questionnaire_answers={"search_skill": 3, "note": "é 'quoted'"},
    )
    return Participant.objects.get(pk=participant.pk)


def _fields(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def test_many_rows_go_in_statements_of_at_most_50_parameters_and_all_arrive(participant):
    now = timezone.now()
    rows = [
        (
            participant.pk,
            None,
            "note",
            f"c{n}",
            n if n % 2 else None,
            now - timedelta(seconds=n),
            now,
            {"n": n, "text": 'it\'s "quoted" ✓'},
        )
        for n in range(23)
    ]
    with CaptureQueriesContext(connection) as queries:
        plain_sql.run_all(plain_sql.insert_statements(Event, EVENT_COLUMNS, rows))
    assert len(queries) == 4  # 8 columns: 6 rows per statement
    stored = {e.client_event_id: e for e in Event.objects.filter(participant=participant)}
    assert len(stored) == 23
    for n in range(23):
        event = stored[f"c{n}"]
        assert (event.sequence, event.client_time, event.server_time, event.payload) == (
            n if n % 2 else None,
            now - timedelta(seconds=n),
            now,
            {"n": n, "text": 'it\'s "quoted" ✓'},
        )


def test_the_participant_read_by_token_is_the_one_the_orm_reads(participant):
    found = tokens.participant_by_token(participant.access_token)
    expected = Participant.objects.select_related("study").get(pk=participant.pk)
    assert _fields(found) == _fields(expected)
    assert _fields(found.study) == _fields(expected.study)
    assert found.questionnaire_answers == {"search_skill": 3, "note": "é 'quoted'"}
    assert tokens.participant_by_token(participant.access_token[:-1] + "x") is None
    assert tokens.participant_by_token("") is None


def test_the_assignments_are_those_of_the_orm_with_their_sessions_or_none(participant):
    first = participant.assignments.get(position=1)
    SearchSession.objects.create(assignment=first, started_at=timezone.now(), post_task_answers={"ok": True})
    # As the pages call it: with the participant read by their token, study included.
    found = steps.participant_assignments(participant=tokens.participant_by_token(participant.access_token))
    expected = list(
        Assignment.objects.filter(participant=participant)
        .select_related("scenario", "system", "session")
        .order_by("position")
    )
    assert [_fields(a) for a in found] == [_fields(a) for a in expected]
    for got, want in zip(found, expected, strict=True):
        assert _fields(got.scenario) == _fields(want.scenario)
        assert _fields(got.system) == _fields(want.system)
        assert (_fields(got.session) if hasattr(got, "session") else None) == (
            _fields(want.session) if hasattr(want, "session") else None
        )
    assert found[0].session.post_task_answers == {"ok": True}
    assert not hasattr(found[1], "session")  # no session yet, as with the ORM
    with CaptureQueriesContext(connection) as queries:
        assert found[0].scenario.study.pk == found[0].system.study.pk == participant.study_id
        assert found[0].participant.pk == participant.pk
    assert len(queries) == 0


def test_the_grade_scale_is_the_study_s_lowest_first(participant):
    levels = selectors.grade_levels(study=participant.study)
    assert [(g.value, g.label) for g in levels] == list(
        participant.study.grade_levels.order_by("value").values_list("value", "label")
    )
    assert [g.value for g in levels] == [0, 1, 2, 3]


def _event_row(participant, client_id, now):
    return (participant.pk, None, "note", client_id, None, now, now, {"n": client_id})


def test_writes_run_together_in_their_order(participant):
    session = SearchSession.objects.create(
        assignment=participant.assignments.get(position=1), started_at=timezone.now()
    )
    collection = Collection.objects.create(name="plain")
    documents = Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{n}") for n in range(12)
    )
    now = timezone.now()
    statements = plain_sql.insert_statements(
        Judgment,
        ("session", "document", "grade", "created_at", "updated_at"),
        [(session.pk, d.pk, 1, now, now) for d in documents],
    )
    assert len(statements) == 2  # 5 columns: 10 rows per statement
    # An update of a row inserted by an earlier statement of the same run sees it: they run in order.
    statements.append(
        (f"UPDATE {plain_sql.table(Judgment)} SET grade = %s WHERE document_id = %s", [3, documents[-1].pk])
    )
    plain_sql.run_all(statements)
    assert sorted(Judgment.objects.values_list("grade", flat=True)) == [1] * 11 + [3]


def test_a_failing_write_is_djangos_integrity_error_and_its_transaction_keeps_nothing(participant):
    now = timezone.now()
    statements = plain_sql.insert_statements(Event, EVENT_COLUMNS, [_event_row(participant, "dup", now)]) * 2
    with pytest.raises(IntegrityError), transaction.atomic():  # (participant, client event id) is unique
        plain_sql.run_all(
            plain_sql.insert_statements(Event, EVENT_COLUMNS, [_event_row(participant, "first", now)])
            + statements
        )
    assert not Event.objects.filter(client_event_id__in=["first", "dup"]).exists()
    # The connection is usable again afterwards.
    plain_sql.run_all(statements[:1])
    assert Event.objects.filter(client_event_id="dup").count() == 1
