"""The studies app's refusals are one hierarchy (studies/errors.py). Views catch those classes, so a refusal
is still a polite 4xx or a message, while a ValueError from a bug is no longer dressed up as one."""

import pytest

from studies import errors
from studies.design import services
from studies.errors import EventRefused
from studies.interchange import archive, trec
from studies.library import collection_import
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db


def test_every_refusal_is_a_studies_error():
    for refusal in (
        services.DesignLockedError,
        services.CollectionAccessError,
        errors.AssessmentError,
        collection_import.CollectionImportError,
        EventRefused,
        trec.ExportError,
        archive.ExportError,
    ):
        assert issubclass(refusal, errors.StudiesError), refusal
    assert trec.ExportError is archive.ExportError  # one ExportError, not two


def test_an_enrolment_that_cannot_be_balanced_is_still_a_409(alice, designed_study):
    designed_study.scenarios.update(practice=True)  # nothing left to counterbalance
    response = client_for(alice).post(
        f"/api/studies/{designed_study.pk}/participants/enrol/", {"count": 2}, format="json"
    )
    assert response.status_code == 409
    assert "every scenario is marked practice" in response.json()["detail"]


def test_a_bug_in_enrolment_is_not_answered_as_a_refusal(alice, designed_study, monkeypatch):
    def broken(**kwargs):
        raise ValueError("a programming error")

    monkeypatch.setattr(services, "participants_enrol", broken)
    client = client_for(alice)
    client.raise_request_exception = True
    with pytest.raises(ValueError, match="a programming error"):
        client.post(f"/api/studies/{designed_study.pk}/participants/enrol/", {"count": 2}, format="json")


def test_a_bug_behind_the_enrol_page_is_not_flashed_as_a_refusal(client, alice, designed_study, monkeypatch):
    def broken(**kwargs):
        raise ValueError("a programming error")

    monkeypatch.setattr(services, "participants_enrol", broken)
    client.force_login(alice)
    with pytest.raises(ValueError, match="a programming error"):
        client.post(f"/studies/{designed_study.slug}/participants/enrol/", {"enrol-count": "2"})


def test_the_enrol_page_still_says_why_it_refuses(client, alice, designed_study):
    designed_study.scenarios.update(practice=True)
    client.force_login(alice)
    response = client.post(
        f"/studies/{designed_study.slug}/participants/enrol/", {"enrol-count": "2"}, follow=True
    )
    assert "every scenario is marked practice" in response.content.decode()
