"""What a participant cannot do: each refusal is a plain message, and changes nothing."""

import pytest

from studies.errors import Refused
from studies.models import Event, Judgment, Query
from studies.participation.way.form_steps import consent_record, session_start
from studies.participation.way.steps import (
    document_view_log,
    events_ingest,
    judgment_record,
    participant_withdraw,
    query_log,
    scan_mark_record,
    session_end,
)

from .conftest import cid, ready


def test_a_forged_token_is_a_404_everywhere(client, participant):
    forged = participant.access_token[:-4] + "AAAA"
    for path in ("", "consent/", "questionnaire/", "start/", "post-task/", "events/", "withdraw/"):
        method = client.get if path in ("", "withdraw/") else client.post
        assert method(f"/p/{forged}/{path}").status_code == 404, path


def test_another_participants_session_is_refused_in_a_batch(participant, session, other_session):
    acks = events_ingest(
        participant=participant,
        events=[
            {"id": "x1", "type": "query", "session": other_session.pk, "data": {"text": "wing"}},
        ],
    )
    assert acks[0]["ok"] is False and acks[0]["refused"] == "This is not one of your search sessions."
    assert not Query.objects.exists()
    stored = Event.objects.get(client_event_id="x1")
    assert stored.participant == participant and stored.session is None  # logged, tied to nothing of theirs


@pytest.mark.parametrize("named", ["9" * 30, "٣", 0, -1, True, 3.0, "", None, [1], "1 "])
def test_a_session_id_that_is_no_id_is_refused_not_an_error(participant, session, named):
    """Too long for a database integer, digits of another script, no number at all: the same plain refusal."""
    acks = events_ingest(
        participant=participant,
        events=[
            {"id": "x1", "type": "query", "session": named, "data": {"text": "wing"}},
            {"id": "x2", "type": "query", "session": session.pk, "data": {"text": "wing"}},
        ],
    )
    assert acks[0]["ok"] is False and acks[0]["refused"] == "This is not one of your search sessions."
    assert acks[1]["ok"] is True  # the batch goes on
    assert Query.objects.count() == 1


def test_another_participants_session_is_refused_by_the_services(participant, other_session):
    ready(participant)
    with pytest.raises(Refused, match="not one of your search sessions"):
        query_log(participant=participant, session=other_session, text="wing", client_event_id=cid())


def test_another_participants_post_task_form_is_refused(
    client, participant, session, other_participant, other_session
):
    session_end(
        participant=other_participant, session=other_session, reason="satisfied", client_event_id=cid()
    )
    response = client.post(
        f"/p/{participant.access_token}/post-task/",
        {"session": other_session.pk, "search_went_well": "5", "client_event_id": cid()},
    )
    assert response.status_code == 404  # the same answer as a session that does not exist
    other_session.refresh_from_db()
    assert other_session.post_task_answers == {}


def test_another_participants_assignment_cannot_be_started(client, participant, other_participant):
    ready(participant)
    ready(other_participant)
    theirs = other_participant.assignments.order_by("position").first()
    response = client.post(
        f"/p/{participant.access_token}/start/", {"assignment": theirs.pk, "client_event_id": cid()}
    )
    assert response.status_code == 404 and not hasattr(theirs, "session")


def test_a_finished_scenario_cannot_be_worked_again(client, participant, session):
    query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    session_end(participant=participant, session=session, reason="gave_up", client_event_id=cid())
    with pytest.raises(Refused, match="finished and cannot be worked again"):
        query_log(participant=participant, session=session, text="heat", client_event_id=cid())
    with pytest.raises(Refused, match="finished"):
        judgment_record(participant=participant, session=session, doc="1", grade=1, client_event_id=cid())
    with pytest.raises(Refused, match="finished"):
        session_start(participant=participant, assignment=session.assignment, client_event_id=cid())
    acks = events_ingest(
        participant=participant,
        events=[
            {"id": "late", "type": "session_end", "session": session.pk, "data": {"reason": "satisfied"}}
        ],
    )
    assert "finished" in acks[0]["refused"]
    session.refresh_from_db()
    assert session.end_reason == "gave_up" and session.queries.count() == 1


def test_scenarios_are_worked_in_order(participant):
    ready(participant)
    second = participant.assignments.get(position=2)
    with pytest.raises(Refused, match="in the order given"):
        session_start(participant=participant, assignment=second, client_event_id=cid())


@pytest.mark.parametrize("grade", [4, -1, 9, "2", True, None])
def test_a_grade_outside_the_scale_is_refused(participant, session, grade):
    q = query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    with pytest.raises(Refused, match="A grade is one of 0, 1, 2, 3"):
        judgment_record(
            participant=participant,
            session=session,
            doc=q["results"][0]["doc"],
            grade=grade,
            client_event_id=cid(),
        )
    assert not Judgment.objects.exists()


def test_a_document_never_shown_cannot_be_opened_or_judged(participant, session):
    query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    unseen = "40"  # does not mention "wing": never in the results
    with pytest.raises(Refused, match="not shown"):
        document_view_log(
            participant=participant, session=session, action="open", doc=unseen, client_event_id=cid()
        )
    with pytest.raises(Refused, match="not shown"):
        judgment_record(participant=participant, session=session, doc=unseen, grade=2, client_event_id=cid())


def test_a_scan_mark_on_a_rank_not_shown_is_refused(participant, session):
    query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    with pytest.raises(Refused, match="Mark a result that was shown"):
        scan_mark_record(
            participant=participant, session=session, query_position=1, rank=11, client_event_id=cid()
        )


def test_a_withdrawn_participant_can_do_nothing_more(participant, session):
    participant_withdraw(participant=participant)
    participant.refresh_from_db()
    session.refresh_from_db()
    with pytest.raises(Refused, match="withdrawn"):
        query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    acks = events_ingest(
        participant=participant,
        events=[{"id": "after", "type": "query", "session": session.pk, "data": {"text": "wing"}}],
    )
    assert "withdrawn" in acks[0]["refused"]
    assert not Event.objects.filter(participant=participant).exists()


def test_the_search_needs_the_questionnaire_first(participant):
    consent_record(participant=participant, consent_version="1", client_event_id=cid())
    first = participant.assignments.get(position=1)
    with pytest.raises(Refused, match="questionnaire first"):
        session_start(participant=participant, assignment=first, client_event_id=cid())


def test_a_malformed_event_is_answered_not_stored(participant, session):
    acks = events_ingest(
        participant=participant,
        events=[
            {"type": "query"},
            {"id": "has space", "type": "query"},
            {"id": "ok-id", "type": "Bad Type"},
            "nope",
        ],
    )
    assert [a["ok"] for a in acks] == [False] * 4 and all("error" in a for a in acks)
    assert not Event.objects.filter(participant=participant, type="query").exists()
    assert not Event.objects.filter(client_event_id__in=["has space", "ok-id"]).exists()
