"""A participant's query on an HTTP system is fetched before the batch's transaction opens (ingest.py rolls
back the pass that needs it, fetches, and runs the batch again), so a slow engine holds no lock; a system
that fails, or whose breaker is open, is "retry later" with no Query stored, and the page sends it again."""

import json

import pytest
from django.db import connection
from django.test import Client

from sessionlab import outbound
from studies.models import Event, Query, ShownResult, System

from .conftest import start

ANSWER = json.dumps({"results": [{"id": "3", "title": "Three"}, {"id": "5", "title": "Five"}], "total": 2})


@pytest.fixture
def http_session(running_study):
    System.objects.filter(study=running_study).update(
        backend="http", config={"url_template": "https://engine.example/s?q={query}&p={page}"}
    )
    return start(running_study.participants.order_by("enrolment_index")[0])


def post(session, events):
    response = Client().post(
        f"/p/{session.assignment.participant.access_token}/events/",
        json.dumps({"events": events}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return response.json()["acks"]


def query(session, cid, text="wing"):
    return {"id": cid, "type": "query", "session": session.pk, "data": {"text": text}}


@pytest.mark.django_db(transaction=True)
def test_the_engine_is_called_with_no_transaction_open(http_session, monkeypatch):
    calls = []

    def fetch(url, **kwargs):
        calls.append((url, connection.in_atomic_block))
        return outbound.Response(200, ANSWER.encode(), url)

    monkeypatch.setattr(outbound, "fetch", fetch)
    page = {"id": "p2", "type": "results_page", "session": http_session.pk}
    acks = post(http_session, [query(http_session, "q1"), {**page, "data": {"query_event": "q1", "page": 2}}])
    assert [a["ok"] for a in acks] == [True, True]
    assert [r["doc"] for r in acks[0]["results"]] == ["3", "5"]
    assert calls == [
        ("https://engine.example/s?q=wing&p=1", False),
        ("https://engine.example/s?q=wing&p=2", False),
    ]
    assert Query.objects.get(session=http_session).text == "wing"
    assert ShownResult.objects.filter(query__session=http_session, page=1).count() == 2


@pytest.mark.django_db
def test_a_failing_engine_is_retry_later_and_its_session_waits(http_session, monkeypatch):
    def fetch(url, **kwargs):
        raise outbound.TimedOut("the engine took too long")

    monkeypatch.setattr(outbound, "fetch", fetch)
    acks = post(http_session, [query(http_session, "q1"), {**query(http_session, "q2", "flutter")}])
    assert all(a["ok"] is False and "send it again later" in a["retry_later"] for a in acks)
    assert not Query.objects.filter(session=http_session).exists()
    assert not Event.objects.filter(session=http_session, type="query").exists()


@pytest.mark.django_db
def test_an_open_breaker_is_retry_later_without_calling_the_engine(http_session, monkeypatch, settings):
    from django.core.cache import cache

    cache.clear()
    settings.OUTBOUND_BREAKER_FAILURES = 2
    calls = []

    def resolve(host, port):
        calls.append(host)
        return ["127.0.0.1"]  # refused: a failure that never reaches the engine, and is not the engine's

    monkeypatch.setattr(outbound, "_resolve", resolve)
    monkeypatch.setattr(outbound, "_open_socket", pytest.fail)
    study_id = http_session.assignment.participant.study_id  # the breaker is the study's (and the target's)
    cache.set(f"outbound:breaker:study:{study_id}|engine.example:443", (2, 1e12))  # two failures in a row
    [ack] = post(http_session, [query(http_session, "q1")])
    assert "send it again later" in ack["retry_later"] and calls == []
    assert not Query.objects.filter(session=http_session).exists()
    cache.clear()


@pytest.mark.django_db
def test_the_search_caps_bound_the_fetches(http_session, monkeypatch, settings):
    settings.EVENTS_SEARCHES_PER_BATCH = 1
    calls = []

    def fetch(url, **kwargs):
        calls.append(url)
        return outbound.Response(200, ANSWER.encode(), url)

    monkeypatch.setattr(outbound, "fetch", fetch)
    acks = post(http_session, [query(http_session, "q1"), query(http_session, "q2", "flutter")])
    assert acks[0]["ok"] and "more than 1 searches a batch" in acks[1]["retry_later"]
    assert calls == ["https://engine.example/s?q=wing&p=1"]
