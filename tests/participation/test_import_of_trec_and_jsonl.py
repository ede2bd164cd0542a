"""TREC documents with topics and qrels, and JSON lines, through the command."""

import pytest
from django.core.management import call_command

from studies.models import Collection, ReferenceJudgment

TREC_DOCS = """<DOC>
<DOCNO> FT-1 </DOCNO>
<HEADLINE>Wing flutter</HEADLINE>
<TEXT>Flutter of a <P>swept</P> wing &amp; its control.</TEXT>
</DOC>
<DOC>
<DOCNO> FT-2 </DOCNO>
<TITLE>Heat shields</TITLE>
<TEXT>Ablation at re-entry.</TEXT>
</DOC>
"""
TOPICS = """<top>
<num> Number: 301
<title> wing flutter
<desc> Description: How is flutter of swept wings controlled?
<narr> Narrative: Relevant documents describe control methods.
</top>
"""


@pytest.mark.django_db
def test_trec_topics_become_scenarios_and_qrels_a_reference_version(tmp_path, study):
    (tmp_path / "docs.trec").write_text(TREC_DOCS)
    (tmp_path / "topics.txt").write_text(TOPICS)
    (tmp_path / "qrels").write_text("301 0 FT-1 2\n301 0 FT-2 0\n")
    call_command(
        "import_collection",
        str(tmp_path / "docs.trec"),
        format="trec",
        name="FT",
        topics=str(tmp_path / "topics.txt"),
        qrels=str(tmp_path / "qrels"),
        study=study.slug,
        scenarios="301",
    )
    collection = Collection.objects.get(name="FT")
    document = collection.documents.get(external_id="FT-1")
    assert document.title == "Wing flutter" and document.text == "Flutter of a swept wing & its control."
    scenario = study.scenarios.get()
    assert (scenario.code, scenario.title, scenario.topic_id) == ("T301", "wing flutter", "301")
    assert scenario.text == "How is flutter of swept wings controlled?"
    assert sorted(ReferenceJudgment.objects.values_list("document__external_id", "grade")) == [
        ("FT-1", 2),
        ("FT-2", 0),
    ]


@pytest.mark.django_db
def test_json_lines_from_several_files_make_one_collection(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"id": 1, "title": "One", "text": "x", "year": 1999}\n')
    (tmp_path / "b.jsonl").write_text('{"id": "2", "text": "y"}\n')
    call_command(
        "import_collection", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), format="jsonl", name="J"
    )
    collection = Collection.objects.get(name="J")
    assert sorted(collection.documents.values_list("external_id", flat=True)) == ["1", "2"]
    assert collection.documents.get(external_id="1").extra == {"year": 1999}


@pytest.mark.django_db
def test_a_document_id_in_two_files_is_refused(tmp_path):
    from django.core.management import CommandError

    (tmp_path / "a.jsonl").write_text('{"id": 1, "text": "x"}\n')
    (tmp_path / "b.jsonl").write_text('{"id": "1", "text": "y"}\n')
    with pytest.raises(CommandError, match=r"b\.jsonl: document id '1' is also in .*a\.jsonl"):
        call_command(
            "import_collection",
            str(tmp_path / "a.jsonl"),
            str(tmp_path / "b.jsonl"),
            format="jsonl",
            name="J",
        )
    assert not Collection.objects.exists()
