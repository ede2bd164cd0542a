"""docs/api.md's worked example, played with a plain HTTP client (item 8): a researcher sets up a
study with an external system; the participant consents on SessionLab's link; the front-end reads the task and
the grade scale, starts the session and uploads the whole session's log an hour after it happened, with the
lists it showed. The exports follow the front-end's timeline: order and durations kept, clicks between their
query and the next (docs/time-model.md)."""

import json
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta
from unittest import mock

import pytest
from django.test import Client
from django.utils import timezone

from studies.interchange.tidy_csv import study_tables
from studies.models import Event, Query, SearchSession, ShownResult
from tests.interchange.api_helpers import body

pytestmark = pytest.mark.django_db
_real_now = timezone.now


class Http:
    """JSON over plain HTTP, with a fixed Authorization header."""

    def __init__(self, authorization: str | None = None):
        self.client = Client()
        self.headers = {"Authorization": authorization} if authorization else {}

    def get(self, url):
        return self.client.get(url, headers=self.headers)

    def post(self, url, body):
        return self.client.post(url, json.dumps(body), content_type="application/json", headers=self.headers)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@pytest.fixture
def researcher(alice, collection):
    collection.owner = alice
    collection.save(update_fields=["owner"])
    token = (
        Http().post("/api/auth/token/", {"username": "alice", "password": "alice-password"}).json()["token"]
    )
    return Http(f"Token {token}")


@pytest.fixture
def enrolled(researcher, collection):
    """Step 1: a study with one scenario on an external system, one participant enrolled."""
    study = researcher.post(
        "/api/studies/", {"name": "Wing study", "collection": collection.pk, "consent_text": "Consent."}
    )
    assert study.status_code == 201, study.content
    study = study.json()
    base = f"/api/studies/{study['id']}/"
    assert (
        researcher.post(
            base + "scenarios/",
            {"code": "S1", "title": "Wing flutter", "topic_id": "1", "text": "Find reports on wing flutter."},
        ).status_code
        == 201
    )
    system = researcher.post(base + "systems/", {"code": "X", "name": "Our interface", "backend": "external"})
    assert system.status_code == 201, system.content
    opened = researcher.post(base + "status/", {"status": "open"})  # a new study is a draft until opened
    assert opened.status_code == 200 and opened.json()["status"] == "open", opened.content
    (participant,) = researcher.post(base + "participants/enrol/", {"count": 1}).json()
    return study, participant["access_token"]


def consent_on_the_link(token):
    """Step 2, on SessionLab's pages (the API's session start requires it)."""
    pages = Client()
    pages.post(
        f"/p/{token}/consent/", {"decision": "accept", "consent_version": "1", "client_event_id": "c1"}
    )
    pages.post(
        f"/p/{token}/questionnaire/",
        {"search_engine_years": "7", "domain_years": "21", "search_skill": "2", "client_event_id": "c2"},
    )


def test_the_participant_api_gives_the_task_and_the_grade_scale(enrolled):
    study, token = enrolled
    me = Http(f"Participant {token}").get("/api/participant/")
    assert me.status_code == 200
    me = me.json()
    assert me["grade_levels"] == [
        {"value": 0, "label": "not relevant"},
        {"value": 1, "label": "marginally relevant"},
        {"value": 2, "label": "fairly relevant"},
        {"value": 3, "label": "highly relevant"},
    ]
    (assignment,) = me["assignments"]
    assert assignment["task"] == {"title": "Wing flutter", "text": "Find reports on wing flutter."}
    assert assignment["system_kind"] == "external" and assignment["session"] is None


def test_a_front_end_logs_a_whole_session_an_hour_late(enrolled):
    study, token = enrolled
    consent_on_the_link(token)
    front_end = Http(f"Participant {token}")
    started = timezone.now().replace(microsecond=0)
    session = front_end.post(
        "/api/participant/sessions/", {"assignment": 1, "client_event_id": "P-start-1", "time": iso(started)}
    )
    assert session.status_code == 201, session.content
    session_id = session.json()["id"]
    assert session.json()["clock_offset_ms"] is not None  # the start's one-way sample

    def event(n, kind, seconds, **data):
        return {
            "id": f"P-{n}",
            "type": kind,
            "session": session_id,
            "seq": n,
            "time": iso(started + timedelta(seconds=seconds)),
            "data": data,
        }

    log = [
        event(
            1,
            "query",
            12.1,
            text="wing flutter",
            results=[
                "d1",
                {"doc": "d2", "title": "Flutter of swept wings", "snippet": "... flutter ..."},
                "d3",
            ],
        ),
        event(2, "document_open", 20, doc="d2", query=1, rank=2),
        event(3, "document_close", 50, doc="d2", query=1, rank=2, dwell_ms=30_000),
        event(4, "judgment", 53, doc="d2", grade=2),
        event(5, "scan_mark", 55, query=1, rank=3),
        event(6, "query", 65, text="wing flutter wind tunnel", results=["d5", "d6"]),
        event(7, "query", 70, text="a list with a stranger", results=["d5", "nope"]),
        event(8, "session_end", 90, reason="satisfied"),
    ]
    with mock.patch("django.utils.timezone.now", lambda: _real_now() + timedelta(hours=1)):
        answer = front_end.post(
            "/api/participant/events/", {"clock": {"sent": iso(timezone.now())}, "events": log}
        )
    assert answer.status_code == 200, answer.content
    answer = answer.json()
    acks = answer["acks"]
    assert [a["ok"] for a in acks] == [True, True, True, True, True, True, False, True]
    assert acks[6]["refused"] == "data.results.1: 'nope' is not a document of the study's collection"
    assert set(answer["clock"]) == {"server_received", "server_sent"}

    # What it showed is what is stored; nothing was searched.
    shown = list(
        ShownResult.objects.filter(query__session_id=session_id)
        .order_by("query__position", "rank")
        .values_list("query__position", "rank", "document__external_id", "title")
    )
    assert shown == [
        (1, 1, "d1", "Title 1"),
        (1, 2, "d2", "Flutter of swept wings"),
        (1, 3, "d3", "Title 3"),
        (2, 1, "d5", "Title 5"),
        (2, 2, "d6", "Title 6"),
    ]

    # The session is on the front-end's timeline: its order and durations, not the upload's hour.
    record = SearchSession.objects.get(pk=session_id)
    offset = timedelta(milliseconds=record.clock_offset_ms)
    assert abs(offset) < timedelta(seconds=2)
    assert record.started_at == started + offset
    assert record.ended_at - record.started_at == timedelta(seconds=90)
    issued = list(
        Query.objects.filter(session_id=session_id).order_by("position").values_list("issued_at", flat=True)
    )
    assert [(t - record.started_at).total_seconds() for t in issued] == [12.1, 65.0]

    tables = study_tables(study=record.assignment.participant.study)
    header, row = tables["sessions"]
    assert row[header.index("duration_s")] == "90.000" and row[header.index("end_reason")] == "satisfied"
    header, *queries = tables["queries"]
    assert [q[header.index("seconds_from_start")] for q in queries] == ["12.100", "65.000"]

    # The Session Track log, through the API: the click between its query and the next.
    researcher_token = Http().post("/api/auth/token/", {"username": "alice", "password": "alice-password"})
    researcher = Http(f"Token {researcher_token.json()['token']}")
    listed = researcher.get(f"/api/studies/{study['id']}/sessions/{session_id}/").json()
    assert listed["clock_offset_ms"] == record.clock_offset_ms and listed["clock_delay_ms"] is None
    xml = researcher.get(f"/api/studies/{study['id']}/session-track/")
    assert xml.status_code == 200
    root = ET.fromstring(body(xml))
    day = datetime.combine(record.started_at.date(), datetime.min.time(), tzinfo=record.started_at.tzinfo)

    def seconds(text):
        h, m, s = text.split(":")
        return (
            day + timedelta(hours=int(h), minutes=int(m), seconds=float(s)) - record.started_at
        ).total_seconds()

    interactions = root.find("session").findall("interaction")
    assert [seconds(i.get("starttime")) for i in interactions] == pytest.approx([12.1, 65.0], abs=1e-3)
    (click,) = interactions[0].iter("click")
    assert (seconds(click.get("starttime")), seconds(click.get("endtime"))) == pytest.approx(
        (20, 50), abs=1e-3
    )
    assert Event.objects.filter(participant__access_token=token, type="query").count() == 3


def test_a_session_started_and_logged_an_hour_late_keeps_the_front_ends_times(enrolled):
    """The start too comes an hour late, with the time the participant started: the batch's clock brings the
    whole session back to the front-end's timeline."""
    study, token = enrolled
    consent_on_the_link(token)
    front_end = Http(f"Participant {token}")
    started = timezone.now().replace(microsecond=0)
    with mock.patch("django.utils.timezone.now", lambda: _real_now() + timedelta(hours=1)):
        session_id = front_end.post(
            "/api/participant/sessions/",
            {"assignment": 1, "client_event_id": "P-start", "time": iso(started)},
        ).json()["id"]
        events = [
            {
                "id": "P-1",
                "type": "query",
                "session": session_id,
                "time": iso(started + timedelta(seconds=9)),
                "data": {"text": "wing", "results": ["d1", "d2"]},
            },
            {
                "id": "P-2",
                "type": "session_end",
                "session": session_id,
                "time": iso(started + timedelta(seconds=40)),
                "data": {"reason": "gave_up"},
            },
        ]
        acks = front_end.post(
            "/api/participant/events/", {"clock": {"sent": iso(timezone.now())}, "events": events}
        ).json()["acks"]
    assert all(a["ok"] for a in acks), acks
    record = SearchSession.objects.get(pk=session_id)
    assert abs(record.started_at - started) < timedelta(seconds=2)  # not an hour later
    assert record.ended_at - record.started_at == timedelta(seconds=40)
    assert Query.objects.get(session=record).issued_at - record.started_at == timedelta(seconds=9)
