"""A system of kind "external" is the researcher's own front-end (item 8): its query events carry
the ranked list it showed (data.results), checked item by item against the study's collection, and
SessionLab's own engine is never run for it. A normal system's query event is served as before."""

import json
from unittest import mock

import pytest
from django.test import Client

from studies.models import Event, Query, ShownResult, System

pytestmark = pytest.mark.django_db


@pytest.fixture
def external(running_study, session):
    System.objects.filter(pk=session.assignment.system_id).update(backend=System.Backend.EXTERNAL)
    return session


def post(participant, events):
    response = Client().post(
        f"/p/{participant.access_token}/events/",
        json.dumps({"events": events}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return response.json()["acks"]


def query(session, cid, results, **data):
    return {
        "id": cid,
        "type": "query",
        "session": session.pk,
        "data": {"text": "their query", "results": results, **data},
    }


def no_engine():
    return mock.patch(
        "studies.participation.events.search_costs.system_search", side_effect=AssertionError("engine run")
    )


def test_the_list_shown_is_stored_as_shown(participant, external):
    with no_engine():
        [ack] = post(
            participant,
            [
                query(
                    external,
                    "q1",
                    ["3", {"doc": "1", "title": "Their title", "snippet": "their snippet"}, "3"],
                    total=57,
                )
            ],
        )
    assert ack["ok"] and ack["query"] == 1 and ack["total"] == 57
    assert [(r["rank"], r["doc"]) for r in ack["results"]] == [(1, "3"), (2, "1"), (3, "3")]
    rows = list(
        ShownResult.objects.filter(query__session=external)
        .order_by("rank")
        .values_list("rank", "document__external_id", "title", "snippet")
    )
    assert rows[1] == (2, "1", "Their title", "their snippet")
    assert rows[0][2].startswith("Document 3") and rows[0][3] == ""  # a bare id: the document's own title
    assert Event.objects.get(client_event_id="q1").payload["data"]["results"][0] == "3"


def test_documents_it_showed_can_be_opened_and_judged(participant, external):
    with no_engine():
        acks = post(
            participant,
            [
                query(external, "q1", ["5", "7"]),
                {
                    "id": "o1",
                    "type": "document_open",
                    "session": external.pk,
                    "data": {"doc": "7", "query": 1, "rank": 2},
                },
                {"id": "j1", "type": "judgment", "session": external.pk, "data": {"doc": "7", "grade": 2}},
                {
                    "id": "o2",
                    "type": "document_open",
                    "session": external.pk,
                    "data": {"doc": "9", "query": 1},
                },
            ],
        )
    assert [a["ok"] for a in acks] == [True, True, True, False]
    assert acks[1]["document"]["doc"] == "7" and "not shown" in acks[3]["refused"]


@pytest.mark.parametrize(
    "results, reason",
    [
        (["1", "nope", "2"], "data.results.1: 'nope' is not a document of the study's collection"),
        ([{"doc": 5}], "data.results.0.doc: a document id"),
        ([{"doc": "1", "rank": 4}], "data.results.0: only doc, title, snippet and highlights (rank given)"),
        ([{"doc": "1", "title": ["x"]}], "data.results.0.title: text"),
        ([], "data.results: the list of results the front-end showed"),
        ("1 2 3", "data.results: the list of results the front-end showed"),
    ],
)
def test_a_list_that_cannot_be_what_was_shown_is_refused_naming_the_item(
    participant, external, results, reason
):
    with no_engine():
        [ack] = post(participant, [query(external, "q1", results)])
    assert not ack["ok"] and ack["refused"].startswith(reason)
    assert not Query.objects.filter(session=external).exists() and not ShownResult.objects.exists()


def test_a_whole_session_in_one_batch_is_not_capped_like_searches(participant, external, settings):
    settings.EVENTS_SEARCHES_PER_BATCH = 2
    with no_engine():
        acks = post(participant, [query(external, f"q{n}", [str(n)]) for n in range(1, 6)])
    assert all(a["ok"] for a in acks) and Query.objects.filter(session=external).count() == 5


def test_a_next_page_carries_its_results_and_continues_the_ranks(participant, external):
    with no_engine():
        acks = post(
            participant,
            [
                query(external, "q1", ["1", "2"]),
                {
                    "id": "p2",
                    "type": "results_page",
                    "session": external.pk,
                    "data": {"query": 1, "page": 2, "results": ["3", "4"]},
                },
                {"id": "p3", "type": "results_page", "session": external.pk, "data": {"query": 1, "page": 3}},
            ],
        )
    assert [a["ok"] for a in acks] == [True, True, False]
    assert [(r["rank"], r["doc"]) for r in acks[1]["results"]] == [(3, "3"), (4, "4")]
    assert acks[2]["refused"].startswith("data.results:")


def test_a_normal_systems_query_still_runs_the_engine(participant, session):
    [ack] = post(participant, [query(session, "q1", ["1", "2"])])
    assert ack["ok"] and len(ack["results"]) == 0  # "their query" matches nothing in the generated collection
    [ack] = post(
        participant,
        [{"id": "q2", "type": "query", "session": session.pk, "data": {"text": "wing", "results": ["1"]}}],
    )
    assert ack["ok"] and len(ack["results"]) == 10  # the engine's, not the list sent
    assert "results" not in Event.objects.get(client_event_id="q2").payload["data"]
