"""A reload (or the link opened on another device) shows the last list and the grades again, logs no query,
and is itself logged by the server as a page_reload event."""

from studies.models import Event, Query
from studies.participation.way.steps import events_ingest, judgment_record, query_log, results_page_log

from .conftest import cid


def restored_of(response):
    return response.context["client"]["restored"]


def test_a_search_page_before_any_query_restores_nothing_and_logs_no_reload(client, participant, session):
    response = client.get(f"/p/{participant.access_token}/")
    assert response.context["step"].kind == "search" and restored_of(response) is None
    assert not Event.objects.filter(type="page_reload").exists()


def test_a_reload_shows_the_last_page_and_the_grades_without_a_new_query(client, participant, session):
    query_log(participant=participant, session=session, text="heat", client_event_id=cid())
    query_log(participant=participant, session=session, text="wing", client_event_id="q-wing")
    results_page_log(
        participant=participant, session=session, query_position=2, page=2, client_event_id=cid()
    )
    shown = Query.objects.get(session=session, position=2).shown_results.filter(page=2).order_by("rank")
    doc = shown[0].document.external_id
    judgment_record(participant=participant, session=session, doc=doc, grade=2, client_event_id=cid())

    response = client.get(f"/p/{participant.access_token}/", HTTP_USER_AGENT="Tester/1.0")
    restored = restored_of(response)
    assert restored["query_event"] == "q-wing" and restored["query_text"] == "wing"
    assert (restored["query"], restored["page"], restored["total"]) == (2, 2, 25)
    assert [r["rank"] for r in restored["results"]] == list(range(11, 21))
    assert restored["results"][0]["doc"] == doc and restored["results"][0]["text"]
    assert restored["grades"] == {doc: 2}
    page = response.content.decode()
    assert 'value="wing"' in page and '"query_event": "q-wing"' in page  # json_script, read by participant.js
    assert Query.objects.filter(session=session).count() == 2

    reload_event = Event.objects.get(type="page_reload")
    assert reload_event.session == session and reload_event.sequence is None
    assert reload_event.payload["data"] == {
        "source": "server",
        "query": 2,
        "page": 2,
        "judged": 1,
        "user_agent": "Tester/1.0",
    }
    client.get(f"/p/{participant.access_token}/")
    assert Event.objects.filter(type="page_reload").count() == 2
    assert Query.objects.filter(session=session).count() == 2


def test_a_refused_page_does_not_replace_the_list_shown(client, participant, session):
    query_log(participant=participant, session=session, text="wing", client_event_id="q-1")
    events_ingest(
        participant=participant,
        events=[
            {
                "id": cid(),
                "type": "results_page",
                "session": session.pk,
                "data": {"query_event": "q-1", "page": 999},
            }
        ],
    )
    restored = restored_of(client.get(f"/p/{participant.access_token}/"))
    assert (restored["query_event"], restored["page"]) == ("q-1", 1)


def test_a_head_request_logs_no_reload(client, participant, session):
    query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    client.head(f"/p/{participant.access_token}/")
    assert not Event.objects.filter(type="page_reload").exists()
