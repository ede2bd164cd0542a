"""A reference version exported as qrels (`manage.py export_qrels`, the page's download) imports again as an
identical version, including the judgments of collection topics that are not the study's scenarios: a
collection's qrels judge all its topics, and the importer once refused the export of a version it had made
itself ("topic '2' is not a scenario topic")."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from scoring.lib.errors import InputError
from studies.assessment import references, selectors
from studies.library.collection_import import collection_import
from studies.models import ReferenceVersion

pytestmark = pytest.mark.django_db


@pytest.fixture
def cranfield_like(tmp_path):
    folder = tmp_path / "cran"
    folder.mkdir()
    (folder / "cran.all.1400").write_text(
        "".join(f".I {n}\n.T\ntitle {n}\n.W\ntext of document {n}\n" for n in range(1, 6))
    )
    (folder / "cran.qry").write_text(".I 001\n.W\nfirst\n.I 002\n.W\nsecond\n.I 003\n.W\nthird\n")
    (folder / "cranqrel").write_text("1 1 1\n1 2 -1\n2 2 2\n2 5 3\n3 1 4\n3 4 1\n")
    return folder


def export(study, tmp_path, number=None):
    out = tmp_path / f"v{number or 'latest'}.qrels"
    call_command("export_qrels", study.slug, output=str(out), **({"number": number} if number else {}))
    return out


def test_a_version_with_topics_that_are_not_scenarios_imports_again_unchanged(
    study, alice, cranfield_like, tmp_path
):
    imported = collection_import(
        name="C",
        format="cranfield",
        paths=[cranfield_like],
        study=study,
        scenario_topics=["1"],
        created_by=alice,
    )
    assert list(study.scenarios.values_list("topic_id", flat=True)) == ["1"]
    text = export(study, tmp_path, number=1).read_text()
    assert text == "1 0 1 3\n1 0 2 0\n2 0 2 2\n2 0 5 1\n3 0 1 1\n3 0 4 3\n"
    again = references.reference_version_import_qrels(
        study=study, lines=text.splitlines(), path="v1.qrels", created_by=alice
    )
    assert again.number == 2
    assert references.reference_version_qrels(version=again) == text
    assert set(again.judgments.values_list("topic_id", "document_id", "grade")) == set(
        imported.reference_version.judgments.values_list("topic_id", "document_id", "grade")
    )
    assert selectors.reference_version_other_topics(version=again) == (4, 2)


def test_the_page_says_how_many_judgments_of_other_topics_it_kept(
    client, study, alice, cranfield_like, tmp_path
):
    collection_import(
        name="C", format="cranfield", paths=[cranfield_like], study=study, scenario_topics=["1", "3"]
    )
    client.force_login(alice)
    upload = SimpleUploadedFile("v1.qrels", export(study, tmp_path).read_bytes())
    response = client.post(
        reverse("assessment:version_import", args=[study.slug]), {"refqrels-qrels": upload}, follow=True
    )
    assert [str(m) for m in response.context["messages"]] == [
        "Reference version 2 imported from v1.qrels. 2 judgments of 1 topic that is not scenarios were "
        "kept; they score nothing."
    ]


def test_a_file_without_any_scenario_topic_is_refused_as_the_wrong_file(study, alice, cranfield_like):
    collection_import(
        name="C", format="cranfield", paths=[cranfield_like], study=study, scenario_topics=["1"]
    )
    with pytest.raises(InputError) as caught:
        references.reference_version_import_qrels(
            study=study, lines=["2 0 2 2", "3 0 4 1"], path="other.qrels", created_by=alice
        )
    assert (caught.value.path, caught.value.line) == ("other.qrels", None)
    assert "none of its topics is a scenario topic of this study (1)" in caught.value.reason
    assert ReferenceVersion.objects.count() == 1


def test_the_cranfield_reference_of_a_four_scenario_study_round_trips(
    cranfield_folder, study, alice, tmp_path
):
    """The real case: Cranfield's 1,837 judgments of 225 topics, a study of four of them."""
    collection_import(
        name="Cranfield",
        format="cranfield",
        paths=[cranfield_folder],
        study=study,
        scenario_topics=["1", "2", "3", "4"],
        created_by=alice,
    )
    text = export(study, tmp_path).read_text()
    assert len(text.splitlines()) == 1837
    again = references.reference_version_import_qrels(
        study=study, lines=text.splitlines(), path="v1.qrels", created_by=alice
    )
    assert references.reference_version_qrels(version=again) == text
    assert again.judgments.values("topic_id").distinct().count() == 225


def test_the_version_s_note_names_the_file_not_the_server_s_folders(study, alice, cranfield_like):
    """The demo's reference version named the server's absolute path of its data (and so did the
    archive and the API, which carry the note)."""
    collection_import(
        name="C", format="cranfield", paths=[cranfield_like], study=study, scenario_topics=["1"]
    )
    note = study.reference_versions.get().note
    assert str(cranfield_like.parent) not in note and "/" not in note.split(" from ", 1)[1]
