"""POST /api/studies/ with a collection gives the study the collection's judgments as its first
reference version, through the same service as the form and the copy."""

import pytest

from studies.models import Study
from tests.setup.test_a_study_attaches_a_collection_from_its_page import with_topics

pytestmark = pytest.mark.django_db


def test_the_api_s_study_has_the_collection_s_judgments_as_version_1(client, alice):
    collection = with_topics(alice)
    client.force_login(alice)
    response = client.post(
        "/api/studies/",
        {"name": "By the API", "collection": collection.pk},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    study = Study.objects.get(pk=response.json()["id"])
    version = study.reference_versions.get()
    assert version.number == 1 and version.judgments.count() == 2
    assert version.created_by == alice
