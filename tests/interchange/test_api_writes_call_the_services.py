"""Writes through the API: studies, scenarios and systems (closed once participants exist), enrolment,
withdrawal, and qrels imported as a new reference version (all or nothing, errors naming file and line)."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from studies.models import ReferenceVersion, Study

from .api_helpers import client_for

pytestmark = pytest.mark.django_db


def test_a_researcher_creates_a_study_with_its_scale(alice):
    response = client_for(alice).post(
        "/api/studies/", {"name": "New", "grade_labels": ["no", "yes"]}, format="json"
    )
    assert response.status_code == 201
    study = Study.objects.get(pk=response.json()["id"])
    assert study.owner == alice and study.grade_values() == [0, 1]
    bad = client_for(alice).post("/api/studies/", {"name": "Bad", "grade_labels": ["only"]}, format="json")
    assert bad.status_code == 400 and "grade_labels" in bad.json()


def test_the_design_is_writable_until_enrolment(designed_study, alice):
    client = client_for(alice)
    base = f"/api/studies/{designed_study.pk}"
    created = client.post(f"{base}/scenarios/", {"code": "S5", "title": "Five", "text": "t", "topic_id": "5"})
    assert created.status_code == 201
    assert (
        client.post(
            f"{base}/scenarios/", {"code": "S5", "title": "x", "text": "t", "topic_id": "6"}
        ).status_code
        == 409
    )
    assert client.patch(f"{base}/scenarios/{created.json()['id']}/", {"title": "Fifth"}).status_code == 200
    assert client.delete(f"{base}/scenarios/{created.json()['id']}/").status_code == 204
    enrolled = client.post(f"{base}/participants/enrol/", {"count": 4}, format="json")
    assert enrolled.status_code == 201
    body = enrolled.json()
    assert [p["code"] for p in body] == ["P001", "P002", "P003", "P004"]
    assert all(len(p["assignments"]) == 4 for p in body)
    assert (
        client.post(f"{base}/systems/", {"code": "C", "name": "C", "backend": "builtin"}).status_code == 409
    )
    scenario = designed_study.scenarios.first()
    assert client.patch(f"{base}/scenarios/{scenario.pk}/", {"topic_id": "99"}).status_code == 409
    scenario.refresh_from_db()
    assert scenario.topic_id == "1"


def test_a_researcher_withdraws_a_participant(worked_study, alice):
    participant = worked_study.participants.get(code="P001")
    response = client_for(alice).post(
        f"/api/studies/{worked_study.pk}/participants/{participant.pk}/withdraw/"
    )
    assert response.status_code == 200
    assert response.json()["withdrawn_at"] is not None
    assert not participant.events.exists()


def test_qrels_import_as_a_new_reference_version(worked_study, alice):
    client = client_for(alice)
    url = f"/api/studies/{worked_study.pk}/reference-versions/import-qrels/"
    response = client.post(
        url, {"text": "1 0 d1 2\n1 0 d2 0\n2 0 d3 3\n", "note": "first"}, format="multipart"
    )
    assert response.status_code == 201, response.content
    assert response.json()["number"] == 1 and response.json()["judgment_count"] == 3
    upload = SimpleUploadedFile("team.qrels", b"3 0 d4 1\n")
    assert client.post(url, {"file": upload}, format="multipart").json()["number"] == 2
    version = ReferenceVersion.objects.get(study=worked_study, number=1)
    judgments = client.get(
        f"/api/studies/{worked_study.pk}/reference-versions/{version.pk}/judgments/", {"topic_id": "1"}
    ).json()
    assert [(j["doc"], j["grade"]) for j in judgments["results"]] == [("d1", 2), ("d2", 0)]
    qrels = client.get(f"/api/studies/{worked_study.pk}/reference-versions/{version.pk}/qrels/")
    assert qrels.content.decode() == "1 0 d1 2\n1 0 d2 0\n2 0 d3 3\n"


def test_a_bad_qrels_line_imports_nothing_and_names_file_and_line(worked_study, alice):
    client = client_for(alice)
    url = f"/api/studies/{worked_study.pk}/reference-versions/import-qrels/"
    for text, line, words in [
        ("1 0 d1 2\n1 0 d2\n", 2, "expected 4 fields"),
        ("1 0 d1 2\n1 0 d2 7\n", 2, "grade 7"),
        ("9 0 d1 2\n8 0 d2 1\n", None, "none of its topics is a scenario topic"),
        ("1 0 nope 1\n", 1, "'nope'"),
    ]:
        response = client.post(url, {"text": text}, format="multipart")
        assert response.status_code == 400
        body = response.json()
        assert body["file"] == "<text>" and body["line"] == line and words in body["reason"], body
    assert not ReferenceVersion.objects.filter(study=worked_study).exists()


def test_only_the_owner_deletes_a_study(worked_study, bob, alice):
    assert client_for(bob).delete(f"/api/studies/{worked_study.pk}/").status_code == 403
    assert client_for(alice).delete(f"/api/studies/{worked_study.pk}/").status_code == 204
    assert not Study.objects.filter(pk=worked_study.pk).exists()


def test_study_settings_and_deletion_go_through_the_services(worked_study, alice, monkeypatch):
    from studies.design import services

    calls = []

    def spy(service):
        real = getattr(services, service)

        def called(**kwargs):
            calls.append(service)
            return real(**kwargs)

        monkeypatch.setattr(services, service, called)

    spy("study_update")
    spy("study_delete")
    base = f"/api/studies/{worked_study.pk}/"
    response = client_for(alice).patch(base, {"name": "Renamed", "time_limit_minutes": 30}, format="json")
    assert response.status_code == 200 and response.json()["name"] == "Renamed"
    worked_study.refresh_from_db()
    assert (worked_study.name, worked_study.time_limit_minutes) == ("Renamed", 30)
    assert client_for(alice).delete(base).status_code == 204
    assert calls == ["study_update", "study_delete"]


def test_the_study_service_refuses_what_is_not_a_setting(study):
    from studies.design import services

    with pytest.raises(services.DesignError, match="not a study setting: collection"):
        services.study_update(study=study, collection=None)
    services.study_update(study=study, description="Changed")
    study.refresh_from_db()
    assert study.description == "Changed"
