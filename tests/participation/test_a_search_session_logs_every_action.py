"""A search session: queries, later pages, documents opened and closed, judgments, a scan mark, the stop,
and the post-task questionnaire, each with its rows and its Event."""

import datetime as dt

import pytest
from django.utils import timezone

from studies.models import Event, Judgment, JudgmentChange, Query, SearchSession, ShownResult
from studies.participation.way.form_steps import post_task_save, session_start
from studies.participation.way.steps import (
    document_view_log,
    events_ingest,
    judgment_record,
    query_log,
    results_page_log,
    scan_mark_record,
    session_end,
)

from .conftest import cid


def test_starting_shows_the_search_page_of_the_first_scenario(client, participant, session):
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert 'id="search-app"' in page and session.assignment.scenario.text in page
    assert session.assignment.position == 1
    assert Event.objects.get(participant=participant, type="session_start").session == session


def test_a_query_stores_the_query_its_shown_results_and_its_event(participant, session):
    # A client clock a few minutes off: within the window (CLIENT_TIME_WINDOW_SECONDS), so a timestamp.
    sent = (timezone.now() - dt.timedelta(minutes=5)).replace(microsecond=0)
    ack = query_log(
        participant=participant,
        session=session,
        text="  wing  ",
        client_event_id="q-1",
        sequence=3,
        client_time=sent.isoformat(),
    )
    query = Query.objects.get(session=session)
    assert (query.position, query.text) == (1, "wing")
    assert list(ShownResult.objects.filter(query=query).values_list("rank", flat=True)) == list(range(1, 11))
    assert [r["rank"] for r in ack["results"]] == list(range(1, 11)) and ack["total"] == 25
    event = Event.objects.get(client_event_id="q-1")
    assert (event.type, event.session, event.sequence) == ("query", session, 3)
    assert event.client_time == sent
    assert event.payload["data"] == {"text": "wing"} and event.payload["ack"]["query_id"] == query.pk


def test_later_pages_add_shown_results_with_their_ranks(participant, session):
    query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    ack = results_page_log(
        participant=participant, session=session, query_position=1, page=2, client_event_id=cid()
    )
    assert [r["rank"] for r in ack["results"]] == list(range(11, 21)) and ack["total"] == 25
    assert ShownResult.objects.filter(page=2).count() == 10
    # Going back to page 1 shows what was stored (no new rows) and is still logged.
    again = results_page_log(
        participant=participant, session=session, query_position=1, page=1, client_event_id=cid()
    )
    assert again["total"] == 25 and len(again["results"]) == 10
    assert ShownResult.objects.count() == 20
    assert Event.objects.filter(type="results_page").count() == 2


def test_a_second_query_takes_the_next_position(participant, session):
    query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    query_log(participant=participant, session=session, text="heat transfer", client_event_id=cid())
    assert list(session.queries.values_list("position", "text")) == [(1, "wing"), (2, "heat transfer")]


def test_a_query_syntax_error_is_kept_as_the_querys_message(participant, session):
    ack = query_log(participant=participant, session=session, text='"wing', client_event_id=cid())
    assert "quotation mark is not closed" in ack["message"]
    assert "quotation mark" in Query.objects.get().system_message


def test_opening_a_document_returns_its_text_and_closing_logs_the_dwell_time(participant, session):
    q = query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    doc = q["results"][0]["doc"]
    opened = document_view_log(
        participant=participant,
        session=session,
        action="open",
        doc=doc,
        query_position=1,
        rank=1,
        client_event_id=cid(),
    )
    assert opened["document"]["doc"] == doc and "wing" in opened["document"]["text"]
    document_view_log(
        participant=participant,
        session=session,
        action="close",
        doc=doc,
        dwell_ms=4200,
        client_event_id="close-1",
    )
    assert Event.objects.get(client_event_id="close-1").payload["data"]["dwell_ms"] == 4200


def test_a_judgment_and_its_changes_are_kept(participant, session):
    q = query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    doc = q["results"][2]["doc"]
    judgment_record(participant=participant, session=session, doc=doc, grade=1, client_event_id=cid())
    ack = judgment_record(participant=participant, session=session, doc=doc, grade=3, client_event_id=cid())
    assert ack["previous"] == 1 and ack["grade"] == 3
    judgment = Judgment.objects.get()
    assert judgment.grade == 3
    assert list(JudgmentChange.objects.filter(judgment=judgment).values_list("grade", flat=True)) == [1, 3]


def test_the_scan_mark_keeps_the_deepest_rank_marked(participant, session):
    query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    scan_mark_record(
        participant=participant, session=session, query_position=1, rank=7, client_event_id=cid()
    )
    scan_mark_record(
        participant=participant, session=session, query_position=1, rank=4, client_event_id=cid()
    )
    assert Query.objects.get().scan_mark_rank == 7
    assert Event.objects.filter(type="scan_mark").count() == 2


@pytest.mark.parametrize("reason", ["satisfied", "gave_up"])
def test_both_ways_of_stopping_end_the_session_and_lead_to_the_post_task_questions(
    client, participant, session, reason
):
    session_end(participant=participant, session=session, reason=reason, client_event_id=cid())
    session.refresh_from_db()
    assert session.end_reason == reason and session.ended_at >= session.started_at
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert "How well did this search go?" in page


def test_the_post_task_answers_are_saved_and_the_next_scenario_follows(client, participant, session):
    session_end(participant=participant, session=session, reason="satisfied", client_event_id=cid())
    response = client.post(
        f"/p/{participant.access_token}/post-task/",
        {"session": session.pk, "search_went_well": "4", "client_event_id": cid()},
    )
    assert response.status_code == 302
    session.refresh_from_db()
    assert session.post_task_answers == {"search_went_well": 4}
    second = participant.assignments.get(position=2)
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert "Search task 2 of 4" in page and second.scenario.text in page


def test_after_the_last_scenario_the_closing_page_offers_withdrawal(client, participant, session):
    for assignment in participant.assignments.order_by("position"):
        current = session_start(participant=participant, assignment=assignment, client_event_id=cid())
        session_end(participant=participant, session=current, reason="gave_up", client_event_id=cid())
        post_task_save(
            participant=participant, session=current, answers={"search_went_well": 2}, client_event_id=cid()
        )
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert "You have finished all the search tasks" in page and "Withdraw and delete my data" in page
    assert SearchSession.objects.filter(assignment__participant=participant).count() == 4


def test_reopening_the_link_resumes_at_the_start_of_the_current_step(client, participant, session):
    query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert 'id="search-app"' in page and "Search task 1 of 4" in page
    assert f'"session": {session.pk}' in page


def test_one_batch_judging_ten_documents_twice_keeps_every_change_in_order(participant, session):
    """A batch's judgments and their history go to the database together at its end: twenty changes (more than
    one statement holds), new judgments and changes of them in the same batch, each naming its judgment."""
    ack = query_log(participant=participant, session=session, text="wing", client_event_id="q")
    docs = [r["doc"] for r in ack["results"]]
    first = [
        {"id": f"j1-{d}", "type": "judgment", "session": session.pk, "data": {"doc": d, "grade": 1}}
        for d in docs
    ]
    second = [
        {"id": f"j2-{d}", "type": "judgment", "session": session.pk, "data": {"doc": d, "grade": n % 4}}
        for n, d in enumerate(docs)
    ]
    acks = events_ingest(participant=participant, events=first + second)
    assert all(a["ok"] for a in acks)
    assert [a["previous"] for a in acks] == [None] * 10 + [1] * 10
    judgments = {j.document.external_id: j for j in Judgment.objects.filter(session=session)}
    assert {d: judgments[d].grade for d in docs} == {d: n % 4 for n, d in enumerate(docs)}
    for n, d in enumerate(docs):
        history = list(
            JudgmentChange.objects.filter(judgment=judgments[d])
            .order_by("id")
            .values_list("grade", flat=True)
        )
        assert history == ([1] if n % 4 == 1 else [1, n % 4])
    # A later batch changes them again: updates of existing judgments, history appended.
    events_ingest(
        participant=participant,
        events=[
            {"id": f"j3-{d}", "type": "judgment", "session": session.pk, "data": {"doc": d, "grade": 3}}
            for d in docs
        ],
    )
    assert set(Judgment.objects.filter(session=session).values_list("grade", flat=True)) == {3}
    assert (
        JudgmentChange.objects.count() == 10 + 7 + 8
    )  # the second batch changed 7 of 10, the third all but two


def test_a_later_batch_names_its_query_by_the_query_events_id(participant, session):
    """The page sends a page or a scan mark with the client id of the query event of an earlier batch; the
    position is found in that stored event, in this session only."""
    events_ingest(
        participant=participant,
        events=[
            {"id": "q1", "type": "query", "session": session.pk, "data": {"text": "wing"}},
            {"id": "q2", "type": "query", "session": session.pk, "data": {"text": "heat transfer"}},
            {"id": "bad", "type": "query", "session": session.pk, "data": {"text": " "}},
        ],
    )  # refused: no query
    acks = events_ingest(
        participant=participant,
        events=[
            {
                "id": "p",
                "type": "results_page",
                "session": session.pk,
                "data": {"query_event": "q1", "page": 2},
            },
            {
                "id": "m",
                "type": "scan_mark",
                "session": session.pk,
                "data": {"query_event": "q1", "rank": 14},
            },
            {
                "id": "m2",
                "type": "scan_mark",
                "session": session.pk,
                "data": {"query_event": "q2", "rank": 3},
            },
            {
                "id": "x",
                "type": "scan_mark",
                "session": session.pk,
                "data": {"query_event": "bad", "rank": 1},
            },
            {
                "id": "y",
                "type": "scan_mark",
                "session": session.pk,
                "data": {"query_event": "nope", "rank": 1},
            },
        ],
    )
    assert [a["ok"] for a in acks] == [True, True, True, False, False]
    assert acks[0]["query"] == 1 and [r["rank"] for r in acks[0]["results"]] == list(range(11, 21))
    assert acks[3]["refused"] == "That query is not part of this search session."
    # An id not stored (yet): only the order may be wrong, so it is to be sent again, not refused for good.
    assert (
        "not stored yet" in acks[4]["retry_later"] and not Event.objects.filter(client_event_id="y").exists()
    )
    assert dict(Query.objects.values_list("position", "scan_mark_rank")) == {1: 14, 2: 3}
