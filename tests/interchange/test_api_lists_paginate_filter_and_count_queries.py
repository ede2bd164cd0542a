"""List endpoints page, filter, and load their rows in a
number of queries that does not grow with the rows."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from studies.models import Query, SearchSession, ShownResult

from .api_helpers import client_for

pytestmark = pytest.mark.django_db

LISTS = [
    "participants",
    "sessions",
    "queries",
    "judgments",
    "events",
    "scenarios",
    "systems",
    "reference-versions",
]


def count_queries(client, url):
    with CaptureQueriesContext(connection) as context:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return len(context)


def add_sessions(study):
    """Sessions for P002 too: more rows of every kind."""
    participant = study.participants.get(code="P002")
    documents = list(study.collection.documents.all())
    now = timezone.now()
    for assignment in participant.assignments.all():
        session = SearchSession.objects.create(assignment=assignment, started_at=now)
        for position in (1, 2, 3):
            query = Query.objects.create(
                session=session,
                position=position,
                text=f"more {position}",
                issued_at=now + dt.timedelta(seconds=position),
            )
            ShownResult.objects.bulk_create(
                ShownResult(query=query, rank=r, document=documents[r], shown_at=now) for r in range(1, 6)
            )


def test_list_queries_do_not_grow_with_rows(worked_study, alice, django_assert_max_num_queries):
    client = client_for(alice)
    before = {name: count_queries(client, f"/api/studies/{worked_study.pk}/{name}/") for name in LISTS}
    add_sessions(worked_study)
    for name in LISTS:
        with django_assert_max_num_queries(before[name]):
            client.get(f"/api/studies/{worked_study.pk}/{name}/")
    detail = worked_study.participants.get(code="P001").assignments.get(position=1).session
    with django_assert_max_num_queries(12):
        client.get(f"/api/studies/{worked_study.pk}/sessions/{detail.pk}/")


def test_lists_are_paginated(worked_study, alice):
    client = client_for(alice)
    url = f"/api/studies/{worked_study.pk}/queries/"
    first = client.get(url, {"page_size": 3}).json()
    assert first["count"] == 4
    assert len(first["results"]) == 3
    assert first["next"] is not None and first["previous"] is None
    second = client.get(first["next"]).json()
    assert len(second["results"]) == 1
    assert {q["id"] for q in first["results"]}.isdisjoint(q["id"] for q in second["results"])


def test_lists_filter_by_design_and_content(worked_study, alice):
    client = client_for(alice)
    base = f"/api/studies/{worked_study.pk}"
    sessions = client.get(f"{base}/sessions/", {"participant": "P001", "position": 2}).json()["results"]
    assert len(sessions) == 1 and sessions[0]["position"] == 2 and sessions[0]["query_count"] == 2
    scenario = sessions[0]["scenario"]
    assert client.get(f"{base}/queries/", {"scenario": scenario}).json()["count"] == 2
    assert client.get(f"{base}/queries/", {"text": "query 0"}).json()["count"] == 2
    assert client.get(f"{base}/judgments/", {"grade": 3}).json()["count"] == 2
    assert client.get(f"{base}/events/", {"type": "document_open"}).json()["count"] == 4
    assert client.get(f"{base}/participants/", {"consented": "true"}).json()["count"] == 1
    assert client.get(f"{base}/participants/", {"consented": "false"}).json()["results"][0]["code"] == "P002"
    assert client.get(f"{base}/scenarios/", {"code": "S3"}).json()["results"][0]["topic_id"] == "3"
    assert client.get(f"{base}/sessions/", {"open": "true"}).json()["count"] == 0
    bad = client.get(f"{base}/sessions/", {"position": "first"})
    assert bad.status_code == 400 and "position" in bad.json()


def test_a_session_shows_its_queries_results_and_judgments(worked_study, alice):
    session = worked_study.participants.get(code="P001").assignments.get(position=1).session
    body = client_for(alice).get(f"/api/studies/{worked_study.pk}/sessions/{session.pk}/").json()
    assert [q["position"] for q in body["queries"]] == [1, 2]
    assert [r["rank"] for r in body["queries"][0]["shown_results"]] == [1, 2, 3, 4]
    assert body["queries"][0]["scan_mark_rank"] == 3
    changed = [j for j in body["judgments"] if len(j["history"]) == 2]
    assert changed and [c["grade"] for c in changed[0]["history"]] == [1, 3]
