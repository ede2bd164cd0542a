"""A reload restores each result's highlights as the page's first answer carried them (kept by rank in the
event's stored answer), so the page marks the engine's matches again instead of guessing the terms; an
archive's round trip keeps them, as it keeps the events."""

import json

import pytest
from django.test import Client

from studies.interchange.archive import study_archive_import, study_archive_json
from studies.models import SearchSession, Study
from studies.participation.way.reload import search_state

pytestmark = pytest.mark.django_db


def post(participant, events):
    response = Client().post(
        f"/p/{participant.access_token}/events/",
        json.dumps({"events": events}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return response.json()["acks"]


def marks_of(results):
    return {r["doc"]: r.get("highlights") for r in results}


def restored_of(participant):
    return Client().get(f"/p/{participant.access_token}/").context["client"]["restored"]


def test_a_reload_shows_the_highlights_the_query_s_answer_carried(participant, session):
    [ack] = post(
        participant, [{"id": "q1", "type": "query", "session": session.pk, "data": {"text": "wing"}}]
    )
    assert ack["ok"] and all(r.get("highlights") for r in ack["results"])
    restored = restored_of(participant)
    assert marks_of(restored["results"]) == marks_of(ack["results"])
    assert restored["results"] == ack["results"]


def test_a_reload_after_a_page_seen_again_shows_its_highlights(participant, session):
    [first] = post(
        participant, [{"id": "q1", "type": "query", "session": session.pk, "data": {"text": "wing"}}]
    )
    page_event = {"type": "results_page", "session": session.pk}
    [second] = post(participant, [{**page_event, "id": "p2", "data": {"query": 1, "page": 2}}])
    assert marks_of(restored_of(participant)["results"]) == marks_of(second["results"])
    post(participant, [{**page_event, "id": "p1", "data": {"query": 1, "page": 1}}])
    assert marks_of(restored_of(participant)["results"]) == marks_of(first["results"])


def test_an_external_front_end_s_highlights_come_back_checked(participant, session):
    from studies.models import System

    System.objects.filter(pk=session.assignment.system_id).update(backend=System.Backend.EXTERNAL)
    results = [
        {"doc": "1", "snippet": "a wing and a flow", "highlights": [[2, 6], [0, 99]]},
        {"doc": "2", "snippet": "no marks"},
    ]
    post(
        participant,
        [{"id": "q1", "type": "query", "session": session.pk, "data": {"text": "wing", "results": results}}],
    )
    assert marks_of(restored_of(participant)["results"]) == {"1": [[2, 6]], "2": None}


def test_the_archive_s_copy_restores_the_same_highlights(participant, session, tmp_path):
    [ack] = post(
        participant, [{"id": "q1", "type": "query", "session": session.pk, "data": {"text": "wing"}}]
    )
    study = participant.study
    path = tmp_path / "study.json"
    path.write_text(study_archive_json(study=study))
    copy = study_archive_import(path=path, owner=study.owner, name="Copy")
    assert copy.pk != study.pk and Study.objects.count() == 2
    copied = SearchSession.objects.get(
        assignment__participant__study=copy,
        assignment__participant__code=participant.code,
        assignment__position=session.assignment.position,
    )
    restored = search_state(session=copied)
    assert marks_of(restored["results"]) == marks_of(ack["results"])
    assert any(marks_of(restored["results"]).values())
