"""What an archive says of how a version was made (a model, a host, a prompt hash) is another server's claim:
it is stored marked imported and shown as "imported (claimed)" wherever the provenance shows,
never as this server's own record of a machine assessor."""

import json

import pytest

from studies.assessment.references import reference_version_create
from studies.interchange.archive import study_archive, study_archive_import
from studies.models import ReferenceJudgment

pytestmark = pytest.mark.django_db

FORGED = {
    "machine_rules": ["fill_unjudged"],
    "machine_assessor": {
        "assessor": "gpt-judge",
        "kind": "llm",
        "model": "gpt-4o",
        "host": "llm.example.org",
        "prompt_hash": "0123456789abcdef0123",
    },
    "documents_filled": 1837,
    "ties_broken": 0,
}


@pytest.fixture
def forged_copy(worked_study, alice, tmp_path):
    document = worked_study.collection.documents.get(external_id="d1")
    reference_version_create(
        study=worked_study,
        judgments=[ReferenceJudgment(topic_id="1", document=document, grade=2, source="qrels")],
        created_by=alice,
    )
    archive = study_archive(study=worked_study)
    archive["reference_versions"][0]["provenance"] = FORGED
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(archive, default=str))
    return study_archive_import(path=path, owner=alice, name="Forged copy")


def test_the_provenance_is_stored_marked_imported(forged_copy):
    version = forged_copy.reference_versions.get()
    assert version.provenance == FORGED | {"imported": True}
    assert version.provenance_text.startswith("imported (claimed): machine grades by gpt-judge, model gpt-4o")


def test_the_version_lists_show_it_as_claimed(forged_copy, alice, client):
    client.force_login(alice)
    manage = client.get(f"/assess/manage/{forged_copy.slug}/").content.decode()
    assert '<td class="provenance">imported (claimed): machine grades by gpt-judge' in manage
    downloads = client.get(f"/studies/{forged_copy.slug}/downloads/")
    assert (
        downloads.status_code == 200 and "(imported (claimed): machine grades" in downloads.content.decode()
    )
