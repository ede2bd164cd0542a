"""An event whose query is not stored yet is answered "retry later" (nothing stored), not refused for good,
and is stored once its query has arrived."""

from studies.models import Event, Judgment
from studies.participation.way.steps import events_ingest


def test_an_open_and_a_judgment_before_their_query_wait_for_it(participant, session):
    early = [
        {
            "id": "o1",
            "type": "document_open",
            "session": session.pk,
            "data": {"doc": "1", "query_event": "q1"},
        },
        {
            "id": "j1",
            "type": "judgment",
            "session": session.pk,
            "data": {"doc": "1", "grade": 2, "query_event": "q1"},
        },
    ]
    acks = events_ingest(participant=participant, events=early)
    assert [a["ok"] for a in acks] == [False, False]
    assert all(a["retry_later"] == "Its query is not stored yet; send it again later." for a in acks)
    assert not Event.objects.filter(client_event_id__in=["o1", "j1"]).exists()

    query = {"id": "q1", "type": "query", "session": session.pk, "data": {"text": "wing"}}
    shown = events_ingest(participant=participant, events=[query])[0]
    assert "1" in {r["doc"] for r in shown["results"]}
    acks = events_ingest(participant=participant, events=early)
    assert [a["ok"] for a in acks] == [True, True]
    assert Judgment.objects.get(session=session).grade == 2
    assert Event.objects.filter(client_event_id__in=["o1", "j1"]).count() == 2


def test_in_one_batch_an_event_before_its_query_waits_and_the_query_is_stored(participant, session):
    judgment = {
        "id": "j1",
        "type": "judgment",
        "session": session.pk,
        "data": {"doc": "1", "grade": 1, "query_event": "q1"},
    }
    query = {"id": "q1", "type": "query", "session": session.pk, "data": {"text": "wing"}}
    acks = events_ingest(participant=participant, events=[judgment, query])
    assert "retry_later" in acks[0] and acks[1]["ok"]
    assert events_ingest(participant=participant, events=[judgment])[0]["ok"]


def test_a_query_event_that_is_no_query_of_this_session_is_refused_for_good(participant, session):
    events_ingest(participant=participant, events=[{"id": "t1", "type": "tab_hidden", "session": session.pk}])
    acks = events_ingest(
        participant=participant,
        events=[
            {
                "id": "j1",
                "type": "judgment",
                "session": session.pk,
                "data": {"doc": "1", "grade": 1, "query_event": "t1"},
            }
        ],
    )
    assert acks[0]["refused"] == "That query is not part of this search session."
