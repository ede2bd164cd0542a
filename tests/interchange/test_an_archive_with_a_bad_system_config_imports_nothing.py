"""The archive import asks the design services' one rule for a system's configuration: a system that cannot
search fails the import naming file, line and field, and nothing is written. An older archive's Session Track
system (an HTTP system holding only a "source") still imports, as the external system it always was."""

import json

import pytest

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import
from studies.models import Collection, Document, Participant, Study, System

pytestmark = pytest.mark.django_db


def counts():
    return (
        Study.objects.count(),
        System.objects.count(),
        Document.objects.count(),
        Collection.objects.count(),
        Participant.objects.count(),
    )


@pytest.mark.parametrize(
    ("backend", "config", "field", "words"),
    [
        ("builtin", {"configuration": "bm25_titel_text"}, "config", "bm25_titel_text"),
        ("http", {}, "config", "has no {query} placeholder"),
        ("http", {"url_template": "ftp://engine/{bogus}"}, "config", "bogus"),
        ("external", {"timeout": 5}, "config", "no settings"),
    ],
)
def test_a_bad_system_config_names_file_line_and_field(archive, alice, backend, config, field, words):
    data = json.loads(archive.read_text())
    data["systems"][1].update(backend=backend, config=config)
    archive.write_text(json.dumps(data, indent=1))
    before = counts()
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=archive, owner=alice)
    error = failure.value
    assert error.field == f"$.systems[1].{field}" and words in error.reason, str(error)
    assert str(error).startswith(f"{archive}:{error.line}: $.systems[1].{field}: ")
    assert counts() == before


def test_the_exported_configs_import_as_they_were(archive, alice):
    data = json.loads(archive.read_text())
    study = study_archive_import(path=archive, owner=alice, name="again")
    assert [(s.code, s.backend, s.config) for s in study.systems.order_by("id")] == [
        (s["code"], s["backend"], s["config"]) for s in data["systems"]
    ]


def test_an_older_session_track_system_imports_as_external(archive, alice):
    data = json.loads(archive.read_text())
    data["systems"][0].update(backend="http", config={"source": "TREC Session Track log"})
    archive.write_text(json.dumps(data, indent=1))
    study = study_archive_import(path=archive, owner=alice, name="older")
    system = study.systems.get(code=data["systems"][0]["code"])
    assert (system.backend, system.config) == ("external", {})
    assert any("imported as an external system" in note for note in study.import_notes)
