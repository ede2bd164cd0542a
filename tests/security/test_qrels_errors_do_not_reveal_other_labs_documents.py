"""A qrels import (reference version or pool) or a hand-added pool document naming another lab's document
reads exactly like one naming a document that does not exist: a study without a collection looks
only in the collections its owner may use."""

import pytest
from rest_framework.test import APIClient

from scoring.lib.errors import InputError
from studies.assessment import pools, references
from studies.design import services
from studies.errors import AssessmentError
from studies.models import Collection, Document, PoolDocument, ReferenceVersion

pytestmark = pytest.mark.django_db


@pytest.fixture
def charlies_study(alice, charlie):
    secret = Collection.objects.create(name="Alice's lab collection", owner=alice)
    Document.objects.create(collection=secret, external_id="secret-1", text="Alice's document")
    study = services.study_create(owner=charlie, name="Charlie's study")  # no collection yet
    services.scenario_add(study=study, code="S1", title="S", text="T", topic_id="1")
    return study


def _error(call) -> str:
    with pytest.raises((InputError, AssessmentError)) as failure:
        call()
    return str(failure.value)


@pytest.mark.parametrize("importer", ["reference_version_import_qrels", "pool_import_qrels"])
def test_a_qrels_file_naming_another_labs_document_reads_like_an_unknown_one(
    charlies_study, charlie, importer
):
    def run(docid):
        kwargs = {"created_by": charlie} if importer.startswith("reference") else {"added_by": charlie}
        return getattr(references if importer.startswith("reference") else pools, importer)(
            study=charlies_study, lines=[f"1 0 {docid} 1"], path="q.qrels", **kwargs
        )

    theirs, unknown = _error(lambda: run("secret-1")), _error(lambda: run("nothing-1"))
    assert theirs.replace("secret-1", "X") == unknown.replace("nothing-1", "X")
    assert not ReferenceVersion.objects.exists() and not PoolDocument.objects.exists()


def test_adding_another_labs_document_to_a_pool_reads_like_an_unknown_one(charlies_study, charlie):
    scenario = charlies_study.scenarios.get()

    def add(docid):
        return pools.pool_add_documents(scenario=scenario, external_ids=[docid], added_by=charlie)

    assert _error(lambda: add("secret-1")).replace("secret-1", "X") == _error(
        lambda: add("nothing-1")
    ).replace("nothing-1", "X")


def test_the_api_answers_alike_for_another_labs_document_and_an_unknown_one(charlies_study, charlie):
    client = APIClient()
    client.force_authenticate(charlie)
    url = f"/api/studies/{charlies_study.pk}/reference-versions/import-qrels/"
    theirs = client.post(url, {"text": "1 0 secret-1 1"}, format="multipart")
    unknown = client.post(url, {"text": "1 0 nothing-1 1"}, format="multipart")
    assert theirs.status_code == unknown.status_code == 400
    assert theirs.json()["reason"].replace("secret-1", "X") == unknown.json()["reason"].replace(
        "nothing-1", "X"
    )


def test_documents_of_a_collection_shared_with_the_owner_are_found(charlies_study, alice, charlie):
    services.collection_share(
        collection=Collection.objects.get(name="Alice's lab collection"), user=charlie, by=alice
    )
    version = references.reference_version_import_qrels(
        study=charlies_study, lines=["1 0 secret-1 1"], path="q.qrels", created_by=charlie
    )
    assert version.judgments.get().document.external_id == "secret-1"
