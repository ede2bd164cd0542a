"""Exports follow the one timeline (docs/time-model.md): a session uploaded an hour late by an external
front-end (client times an hour before the arrival) is exported on the client's timeline, in its own order,
with its own durations, in the Session Track log, the tidy CSV and the archive."""

import json
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta
from unittest import mock

import pytest
from django.test import Client
from django.utils import timezone

from studies.design import lifecycle, services
from studies.interchange.archive import study_archive, study_archive_import
from studies.interchange.session_track import session_track_export
from studies.interchange.tidy_csv import study_tables
from studies.models import SearchSession
from studies.participation.way.form_steps import consent_record, questionnaire_save, session_start

pytestmark = pytest.mark.django_db
_real_now = timezone.now


@pytest.fixture
def uploaded(alice, collection):
    collection.owner = alice
    collection.save(update_fields=["owner"])
    """An external front-end's session, started at T, its events (T+10 s to T+95 s) uploaded at T+1 h."""
    study = services.study_create(
        owner=alice, name="External", consent_text="Consent.", collection=collection
    )
    services.scenario_add(study=study, code="S1", title="Wings", text="Find reports on wings.", topic_id="1")
    services.system_add(study=study, code="X", name="Their engine", backend="external")
    study = lifecycle.study_status_change(study=study, status=lifecycle.OPEN, by=alice)
    (participant,) = services.participants_enrol(study=study, count=1)
    consent_record(participant=participant, consent_version=study.consent_version, client_event_id="c")
    questionnaire_save(
        participant=participant,
        client_event_id="q",
        answers={"search_engine_years": 7, "domain_years": 21, "search_skill": 2},
    )
    session = session_start(
        participant=participant, assignment=participant.assignments.get(), client_event_id="s"
    )
    start = session.started_at

    def at(seconds):
        return (start + timedelta(seconds=seconds)).isoformat()

    def event(cid, kind, seconds, **data):
        return {"id": cid, "type": kind, "session": session.pk, "time": at(seconds), "data": data}

    events = [
        event(
            "q1",
            "query",
            10,
            text="wings",
            results=["d1", {"doc": "d2", "title": "Two", "snippet": "s"}, "d3"],
        ),
        event("o1", "document_open", 20, doc="d2", query=1, rank=2),
        event("c1", "document_close", 50, doc="d2", query=1, rank=2, dwell_ms=30_000),
        event("j1", "judgment", 52, doc="d2", grade=2),
        event("q2", "query", 60, text="wing reports", results=["d4", "d5"]),
        event("o2", "document_open", 70, doc="d5", query=2, rank=2),
        event("c2", "document_close", 90, doc="d5", query=2, rank=2, dwell_ms=20_000),
        event("end", "session_end", 95, reason="satisfied"),
    ]
    with mock.patch("django.utils.timezone.now", lambda: _real_now() + timedelta(hours=1)):
        body = {"events": events, "clock": {"sent": timezone.now().isoformat()}}
        answer = (
            Client()
            .post(f"/p/{participant.access_token}/events/", json.dumps(body), content_type="application/json")
            .json()
        )
    assert all(a["ok"] for a in answer["acks"]), answer
    session.refresh_from_db()
    return study, session, start + timedelta(milliseconds=session.clock_offset_ms)


def test_the_session_track_log_keeps_each_click_between_its_query_and_the_next(uploaded):
    study, session, start = uploaded
    root = ET.fromstring(session_track_export(study=study))
    day = datetime.combine(start.date(), datetime.min.time(), tzinfo=start.tzinfo)

    def seconds(text):  # a time of day on the session's first day
        h, m, s = text.split(":")
        return (day + timedelta(hours=int(h), minutes=int(m), seconds=float(s)) - start).total_seconds()

    (session_element,) = root.iter("session")
    assert seconds(session_element.get("starttime")) == pytest.approx(0, abs=1e-3)
    interactions = session_element.findall("interaction")
    assert [seconds(i.get("starttime")) for i in interactions] == pytest.approx([10, 60], abs=1e-3)
    clicks = [
        [(seconds(c.get("starttime")), seconds(c.get("endtime"))) for c in i.iter("click")]
        for i in interactions
    ]
    assert clicks == [[pytest.approx((20, 50), abs=1e-3)], [pytest.approx((70, 90), abs=1e-3)]]
    results = [[r.findtext("clueweb09id") for r in i.iter("result")] for i in interactions]
    assert results == [["d1", "d2", "d3"], ["d4", "d5"]]


def test_the_tidy_csv_has_the_clients_durations(uploaded):
    study, session, start = uploaded
    tables = study_tables(study=study)
    header, row = tables["sessions"]
    assert row[header.index("duration_s")] == "95.000"
    header, *queries = tables["queries"]
    assert [q[header.index("seconds_from_start")] for q in queries] == ["10.000", "60.000"]
    header, judgment = tables["judgments"]
    assert judgment[header.index("created_at")] == (start + timedelta(seconds=52)).isoformat()
    header, *shown = tables["shown_results"]
    assert [(r[header.index("doc")], r[header.index("opened")]) for r in shown] == [
        ("d1", 0),
        ("d2", 1),
        ("d3", 0),
        ("d4", 0),
        ("d5", 1),
    ]


def test_the_archive_keeps_the_sessions_clock(uploaded, alice, tmp_path):
    study, session, start = uploaded
    archive = study_archive(study=study)
    exported = archive["participants"][0]["assignments"][0]["session"]
    assert exported["clock_offset_ms"] == session.clock_offset_ms
    path = tmp_path / "study.json"
    path.write_text(json.dumps(archive), encoding="utf-8")
    copy = study_archive_import(path=path, owner=alice, name="Copy")
    again = SearchSession.objects.get(assignment__participant__study=copy)
    assert again.clock_offset_ms == session.clock_offset_ms and again.started_at == session.started_at
    assert session_track_export(study=copy).replace(b"Copy", b"") == session_track_export(
        study=study
    ).replace(b"External", b"")
