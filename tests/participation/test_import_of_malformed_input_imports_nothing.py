"""Bad input: the command exits non-zero with a message naming the file and line, and nothing is imported."""

import pytest
from django.core.management import CommandError, call_command

from studies.library.collection_import import CollectionImportError, collection_import
from studies.models import Collection, Document, ReferenceJudgment, ReferenceVersion, Scenario


def nothing_imported():
    return (
        Collection.objects.count(),
        Document.objects.count(),
        Scenario.objects.count(),
        ReferenceVersion.objects.count(),
        ReferenceJudgment.objects.count(),
    ) == (0, 0, 0, 0, 0)


@pytest.fixture
def cranfield_copy(tmp_path):
    folder = tmp_path / "cran"
    folder.mkdir()
    (folder / "cran.all.1400").write_text(
        ".I 1\n.T\nfirst title\n.W\nfirst text\n.I 2\n.T\nsecond\n.W\nmore text\n"
    )
    (folder / "cran.qry").write_text(".I 001\n.W\nwhat is first\n")
    (folder / "cranqrel").write_text("1 1 1\n1 2 -1\n")
    return folder


@pytest.mark.django_db
def test_a_broken_json_line_names_file_and_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "text": \n')
    with pytest.raises(CommandError, match=r"docs\.jsonl:2: not valid JSON.*nothing was imported"):
        call_command("import_collection", str(path), format="jsonl", name="Broken")
    assert nothing_imported()


@pytest.mark.django_db
def test_a_cranqrel_code_outside_the_grade_map_imports_nothing(cranfield_copy, study):
    (cranfield_copy / "cranqrel").write_text("1 1 1\n1 2 5\n")
    with pytest.raises(CommandError, match=r"cranqrel:2: relevance code 5"):
        call_command("import_collection", str(cranfield_copy), format="cranfield", name="C", study=study.slug)
    assert nothing_imported()
    study.refresh_from_db()
    assert study.collection is None


@pytest.mark.django_db
def test_a_document_marker_out_of_place_imports_nothing(cranfield_copy):
    (cranfield_copy / "cran.all.1400").write_text(".I 1\n.T\nt\n.X\nwhat\n")
    with pytest.raises(CommandError, match=r"cran\.all\.1400:4: unknown field marker \.X"):
        call_command("import_collection", str(cranfield_copy), format="cranfield", name="C")
    assert nothing_imported()


@pytest.mark.django_db
def test_a_grade_the_study_scale_lacks_imports_nothing(cranfield_copy, study):
    with pytest.raises(CommandError, match=r"maps to grade 7, which is not in the study's scale"):
        call_command(
            "import_collection",
            str(cranfield_copy),
            format="cranfield",
            name="C",
            study=study.slug,
            grade_map="1:7,-1:0",
        )
    assert nothing_imported()


@pytest.mark.django_db
def test_a_topic_that_is_not_there_cannot_become_a_scenario(cranfield_copy, study):
    with pytest.raises(CommandError, match=r"topic '9' is not among the 1 topics read"):
        call_command(
            "import_collection",
            str(cranfield_copy),
            format="cranfield",
            name="C",
            study=study.slug,
            scenarios="1,9",
        )
    assert nothing_imported()


@pytest.mark.django_db
def test_a_qrels_line_naming_an_unknown_document_names_its_line(tmp_path, study):
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n')
    qrels = tmp_path / "run.qrels"
    qrels.write_text("1 0 a 1\n1 0 zz 2\n")
    with pytest.raises(CommandError, match=r"run\.qrels:2: judged document 'zz' is not in the collection"):
        call_command(
            "import_collection", str(docs), format="jsonl", name="J", qrels=str(qrels), study=study.slug
        )
    assert nothing_imported()


@pytest.mark.django_db
def test_a_malformed_grade_map_is_refused(cranfield_copy):
    with pytest.raises(CommandError, match=r"grade map entry '1=3'"):
        call_command("import_collection", str(cranfield_copy), format="cranfield", name="C", grade_map="1=3")
    assert nothing_imported()


@pytest.mark.django_db
def test_a_second_collection_of_the_same_name_is_refused(cranfield_copy):
    call_command("import_collection", str(cranfield_copy), format="cranfield", name="C")
    with pytest.raises(CommandError, match="already exists"):
        call_command("import_collection", str(cranfield_copy), format="cranfield", name="C")
    assert Collection.objects.count() == 1 and Document.objects.count() == 2


@pytest.mark.django_db
def test_a_failure_while_writing_rolls_everything_back(cranfield_copy, study, monkeypatch):
    from studies.library import collection_import as module

    def boom(*args, **kwargs):
        raise CollectionImportError("disk full")

    monkeypatch.setattr(module.ReferenceJudgment.objects, "bulk_create", boom)
    with pytest.raises(CollectionImportError):
        collection_import(
            name="C", format="cranfield", paths=[cranfield_copy], study=study, scenario_topics=["1"]
        )
    assert nothing_imported()


@pytest.mark.django_db
def test_ir_datasets_says_clearly_when_the_package_is_missing(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_ir_datasets(name, *args, **kwargs):
        if name == "ir_datasets":
            raise ImportError("No module named 'ir_datasets'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ir_datasets)
    with pytest.raises(CommandError, match="needs the ir_datasets package, which is not installed"):
        call_command("import_collection", ir_datasets="cranfield", name="IRD")
    assert nothing_imported()


@pytest.mark.django_db
def test_ir_datasets_says_clearly_when_its_source_is_unreachable(monkeypatch):
    import sys
    import types

    class Unreachable:
        def has_docs(self):
            return True

        def docs_iter(self):
            raise ConnectionError("Name or service not known")

    monkeypatch.setitem(sys.modules, "ir_datasets", types.SimpleNamespace(load=lambda _id: Unreachable()))
    with pytest.raises(CommandError, match="is its source reachable from this machine"):
        call_command("import_collection", ir_datasets="cranfield", name="IRD")
    assert nothing_imported()
