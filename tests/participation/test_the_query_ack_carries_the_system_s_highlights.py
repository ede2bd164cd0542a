"""The query's acknowledgement carries each result's highlights ([start, end] character offsets in its
snippet), so the participant's page marks what the engine matched instead of guessing the terms
(static/js/participant.js, fillSnippet). The engine's offsets come through as they are; an external
front-end's or an HTTP system's are checked pair by pair,
a bad pair dropped, at most MAX_HIGHLIGHTS a result."""

import json

import pytest
from django.test import Client

from studies.models import System
from studies.search.engines.search import MAX_HIGHLIGHTS, Hit, highlights_checked
from studies.search.systems import system_search

pytestmark = pytest.mark.django_db


def post(participant, events):
    response = Client().post(
        f"/p/{participant.access_token}/events/",
        json.dumps({"events": events}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return response.json()["acks"]


def query_event(session, cid, text, **data):
    return {"id": cid, "type": "query", "session": session.pk, "data": {"text": text, **data}}


def test_the_ack_carries_the_engine_s_offsets(participant, session):
    system = System.objects.get(pk=session.assignment.system_id)
    engine = system_search(system=system, query="wing", page=1)
    assert engine.results and all(hit.highlights for hit in engine.results)
    [ack] = post(participant, [query_event(session, "q1", "wing")])
    assert ack["ok"], ack
    assert [r["highlights"] for r in ack["results"]] == [
        [list(pair) for pair in hit.highlights] for hit in engine.results
    ]
    for result in ack["results"]:
        for start, end in result["highlights"]:
            assert result["snippet"][start:end].lower() == "wing"


def test_the_next_page_carries_them_too(participant, session):
    post(participant, [query_event(session, "q1", "wing")])
    [ack] = post(
        participant,
        [{"id": "p2", "type": "results_page", "session": session.pk, "data": {"query": 1, "page": 2}}],
    )
    assert ack["ok"] and ack["results"]
    assert all(r["snippet"][s:e].lower() == "wing" for r in ack["results"] for s, e in r["highlights"])


def test_an_external_front_end_s_highlights_are_checked_pair_by_pair(participant, session):
    System.objects.filter(pk=session.assignment.system_id).update(backend=System.Backend.EXTERNAL)
    snippet = "a wing and a flow"
    many = [[0, 1]] * 3 + [[n, n + 1] for n in range(len(snippet))]
    results = [
        {"doc": "1", "snippet": snippet, "highlights": [[2, 6], [13, 17]]},
        # out of range, start >= end, floats, bools, not pairs: dropped; the good pair kept
        {
            "doc": "2",
            "snippet": snippet,
            "highlights": [
                [2, 6],
                [-1, 3],
                [5, 5],
                [6, 2],
                [0, 99],
                [1.0, 2],
                [True, 3],
                [1, 2, 3],
                "x",
                None,
            ],
        },
        {"doc": "3", "snippet": snippet, "highlights": "2-6"},  # not a list: no highlights, the page guesses
        {"doc": "4", "snippet": snippet, "highlights": many},
        "5",
    ]
    [ack] = post(participant, [query_event(session, "q1", "wing flow", results=results)])
    assert ack["ok"], ack
    by_doc = {r["doc"]: r.get("highlights") for r in ack["results"]}
    assert by_doc["1"] == [[2, 6], [13, 17]]
    assert by_doc["2"] == [[2, 6]]
    assert by_doc["3"] is None and by_doc["5"] is None
    assert len(by_doc["4"]) == min(MAX_HIGHLIGHTS, len(snippet))


def test_an_http_system_s_highlights_are_checked(participant, session, monkeypatch):
    System.objects.filter(pk=session.assignment.system_id).update(
        backend=System.Backend.HTTP, config={"url_template": "http://engine.invalid/?q={query}"}
    )
    from sessionlab import outbound

    answer = {
        "results": [
            {"id": "1", "snippet": "wing tips", "highlights": [[0, 4], [3, 40]]},
            {"id": "2", "snippet": "no match here"},
        ]
    }
    body = json.dumps(answer).encode()

    def fetch(url, **kwargs):  # the engine's answer, without a network
        return outbound.Response(200, body, url)

    monkeypatch.setattr(outbound, "fetch", fetch)
    [ack] = post(participant, [query_event(session, "q1", "wing")])
    assert ack["ok"], ack
    assert [r.get("highlights") for r in ack["results"]] == [[[0, 4]], None]


def test_the_check_keeps_only_pairs_inside_the_snippet():
    assert highlights_checked([[0, 3], (4, 6), [2, 3]], "abcdef") == ((0, 3), (2, 3), (4, 6))
    assert highlights_checked([[0, 7]], "abcdef") == ()
    assert highlights_checked({"0": 3}, "abcdef") == ()
    assert highlights_checked([[n, n + 1] for n in range(200)], "x" * 300) == tuple(
        (n, n + 1) for n in range(MAX_HIGHLIGHTS)
    )
    assert Hit("d", 1, None, "t", "s").highlights == ()


def test_a_resent_query_and_a_page_seen_again_answer_with_the_same_highlights(participant, session):
    first = post(participant, [query_event(session, "q1", "wing")])
    assert first == post(participant, [query_event(session, "q1", "wing")])  # a replay: the first answer
    page_event = {"type": "results_page", "session": session.pk}
    post(participant, [{**page_event, "id": "p2", "data": {"query": 1, "page": 2}}])
    [back] = post(participant, [{**page_event, "id": "p1", "data": {"query": 1, "page": 1}}])
    assert back["results"] == first[0]["results"] and "highlights" in back["results"][0]
    assert "highlights" not in back  # kept in the event's stored answer, sent inside each result
