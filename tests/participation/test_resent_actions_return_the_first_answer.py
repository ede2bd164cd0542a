"""A re-sent action (same client event id) answers what the first one produced and changes nothing."""

from studies.models import Event, JudgmentChange, Query, ShownResult
from studies.participation.events import search_costs
from studies.participation.way.form_steps import consent_record, questionnaire_save
from studies.participation.way.steps import events_ingest, query_log
from studies.search import systems as search_systems

from .conftest import cid


def test_a_resent_query_returns_the_stored_results_without_searching_again(participant, session, monkeypatch):
    first = query_log(participant=participant, session=session, text="wing", client_event_id="q-1")
    calls = []
    monkeypatch.setattr(
        search_costs, "system_search", lambda **kw: calls.append(kw) or search_systems.system_search(**kw)
    )
    again = query_log(participant=participant, session=session, text="wing", client_event_id="q-1")
    assert again == first and calls == []
    assert Query.objects.count() == 1 and ShownResult.objects.count() == 10
    assert Event.objects.filter(client_event_id="q-1").count() == 1


def test_a_resent_batch_stores_each_event_once_and_acknowledges_it_the_same_way(participant, session):
    batch = [
        {"id": "e1", "seq": 1, "type": "query", "session": session.pk, "data": {"text": "wing"}},
        {
            "id": "e2",
            "seq": 2,
            "type": "results_page",
            "session": session.pk,
            "data": {"query_event": "e1", "page": 2},
        },
        {
            "id": "e3",
            "seq": 3,
            "type": "scan_mark",
            "session": session.pk,
            "data": {"query_event": "e1", "rank": 12},
        },
    ]
    first = events_ingest(participant=participant, events=batch)
    doc = first[0]["results"][0]["doc"]
    batch += [
        {
            "id": "e4",
            "seq": 4,
            "type": "document_open",
            "session": session.pk,
            "data": {"doc": doc, "query_event": "e1", "rank": 1},
        },
        {"id": "e5", "seq": 5, "type": "judgment", "session": session.pk, "data": {"doc": doc, "grade": 2}},
    ]
    second = events_ingest(participant=participant, events=batch)
    assert second[:3] == first
    third = events_ingest(participant=participant, events=batch)
    assert third == second
    assert Event.objects.filter(participant=participant, session=session).count() == 6  # with session_start
    assert sorted(Event.objects.exclude(sequence=None).values_list("sequence", flat=True)) == [1, 2, 3, 4, 5]
    assert Query.objects.count() == 1 and ShownResult.objects.count() == 20
    assert JudgmentChange.objects.count() == 1
    assert Query.objects.get().scan_mark_rank == 12


def test_a_resent_refusal_is_refused_the_same_way(participant, session):
    event = {"id": "bad-grade", "type": "judgment", "session": session.pk, "data": {"doc": "1", "grade": 2}}
    first = events_ingest(participant=participant, events=[event])
    assert first[0]["ok"] is False and "not shown" in first[0]["refused"]
    assert events_ingest(participant=participant, events=[event]) == first
    assert Event.objects.filter(client_event_id="bad-grade").count() == 1


def test_a_resent_form_is_stored_once(participant):
    for _ in range(2):
        consent_record(participant=participant, consent_version="1", client_event_id="same")
    assert Event.objects.filter(participant=participant).count() == 1
    questionnaire_save(
        participant=participant,
        client_event_id="qq",
        answers={"search_engine_years": 1, "domain_years": 1, "search_skill": 1},
    )
    questionnaire_save(participant=participant, client_event_id="qq", answers={})
    assert Event.objects.filter(participant=participant, type="questionnaire").count() == 1
    assert cid() != cid()
