"""An archive's user names are another server's words: a reference version's creator and a
reference judgment's judge link only to the importing researcher's own account. Another account of that
name here (another lab's Alice, a Bob of this lab) is never made their creator or judge: the name is kept
as text."""

import json

import pytest

from studies.assessment.references import reference_version_create, reference_version_import_qrels
from studies.interchange.archive import study_archive, study_archive_import
from studies.models import ReferenceJudgment, ReferenceVersion

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices_archive(worked_study, alice, bob, tmp_path):
    """Alice's study with one version she made and one judgment by Bob, exported; its collection renamed so
    that Charlie may import it (the fixture's collection is the admin's)."""
    reference_version_import_qrels(study=worked_study, lines=["1 0 d1 2"], path="a.qrels", created_by=alice)
    d2 = worked_study.collection.documents.get(external_id="d2")
    reference_version_create(
        study=worked_study,
        judgments=[
            ReferenceJudgment(topic_id="1", document=d2, grade=1, judged_by=bob, source="adjudicated")
        ],
        created_by=alice,
    )
    archive = study_archive(study=worked_study)
    archive["study"]["collection"] = "tiny copy"
    for document in archive["documents"]:
        document["collection"] = "tiny copy"
    path = tmp_path / "study.json"
    path.write_text(json.dumps(archive, default=str))
    return path


def test_another_labs_accounts_are_kept_as_names_not_linked(alices_archive, alice, bob, charlie):
    copy = study_archive_import(path=alices_archive, owner=charlie, name="Charlie's copy")
    versions = list(ReferenceVersion.objects.filter(study=copy).order_by("number"))
    assert [(v.created_by, v.creator_name) for v in versions] == [(None, "alice"), (None, "alice")]
    judged = versions[1].judgments.get()
    assert (judged.judged_by, judged.judged_by_name) == (None, "bob")
    assert not ReferenceVersion.objects.filter(study=copy, created_by=alice).exists()
    assert any("'alice' is not the importing account" in note for note in copy.import_notes)


def test_the_importing_researchers_own_name_links_to_their_account(alices_archive, alice, bob):
    copy = study_archive_import(path=alices_archive, owner=alice, name="Alice's copy")
    versions = list(ReferenceVersion.objects.filter(study=copy).order_by("number"))
    assert [v.created_by for v in versions] == [alice, alice]
    judged = versions[1].judgments.get()
    assert (judged.judged_by, judged.judged_by_name) == (None, "bob")  # Bob's account is not Alice's
