"""A study made on the New-study form with its collection gets the collection's judgments as its
first reference version, as its copy always did (before, it had none, and no gold documents)."""

import pytest

from studies.models import Study
from tests.setup.test_a_study_attaches_a_collection_from_its_page import with_topics

pytestmark = pytest.mark.django_db


def test_the_form_s_study_has_the_collection_s_judgments_as_version_1(client, alice):
    collection = with_topics(alice)
    client.force_login(alice)
    response = client.post(
        "/studies/new/",
        {
            "name": "On the form",
            "grade_labels": "not\nmarginally\nfairly\nhighly",
            "consent_version": "1",
            "collection": collection.pk,
        },
    )
    study = Study.objects.get(name="On the form")
    assert response.status_code == 302
    version = study.reference_versions.get()
    assert version.number == 1
    # The collection's three judgments, but the one off the 0..3 scale (grade 7).
    assert version.judgments.count() == 2 == collection.judgments.filter(grade__lte=3).count()
    assert sorted(version.judgments.values_list("document__external_id", "grade")) == [("d1", 3), ("d2", 0)]
    assert version.facts == {"collection": "Docs", "collection_judgments": 2}
    assert version.provenance_text == "the 2 judgments of collection 'Docs'"


def test_a_study_made_without_a_collection_has_no_version(client, alice):
    client.force_login(alice)
    client.post("/studies/new/", {"name": "Bare", "grade_labels": "no\nyes", "consent_version": "1"})
    assert not Study.objects.get(name="Bare").reference_versions.exists()
