"""An archive holding text no database stores (a lone UTF-16 surrogate: half an emoji, escaped as \\ud83d in
the JSON; a NUL) was a traceback from the database driver half-way through `import_study`. It is refused
before anything is written, naming file, line and field; so are a malformed questionnaire and JSON nested
too deeply."""

import json

import pytest
from django.core.management import CommandError, call_command

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import

from .test_malformed_files_change_nothing import counts

pytestmark = pytest.mark.django_db


def _write(path, data):
    text = json.dumps(data, indent=1)  # ensure_ascii: the surrogate is written as the escape \ud83d
    path.write_text(text, encoding="utf-8")
    return text


@pytest.mark.parametrize(
    "bad, words",
    [
        ("query \ud83d", "lone UTF-16 surrogate (U+D83D"),
        ("\udc00", "lone UTF-16 surrogate (U+DC00"),
        ("nul\x00", "NUL character"),
    ],
)
def test_unstorable_text_in_a_query_is_refused_by_file_line_and_field(archive, alice, bad, words):
    data = json.loads(archive.read_text())
    data["participants"][0]["assignments"][1]["session"]["queries"][0]["text"] = bad
    text = _write(archive, data)
    before = counts()
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=archive, owner=alice)
    error = failure.value
    assert error.field == "$.participants[0].assignments[1].session.queries[0].text"
    assert words in error.reason
    escaped = json.dumps(bad)[1:-1]
    opening = text.rindex("{", 0, text.index(escaped))  # the line of the query object, as for other errors
    assert error.line == text[:opening].count("\n") + 1
    assert str(error).startswith(f"{archive}:{error.line}: $.participants[0]")
    assert counts() == before


def test_in_an_event_payload_and_in_a_key_too(archive, alice):
    data = json.loads(archive.read_text())
    data["participants"][0]["events"][3]["payload"]["data"]["note"] = "x\ud800"
    _write(archive, data)
    with pytest.raises(ImportFailure, match=r"events\[3\]\.payload\.data\.note: the text holds a lone"):
        study_archive_import(path=archive, owner=alice)
    data = json.loads(archive.read_text())
    data["participants"][0]["events"][3]["payload"]["data"] = {"k\ud800": 1}
    _write(archive, data)
    with pytest.raises(ImportFailure, match=r"events\[3\]\.payload\.data: a key holds a lone"):
        study_archive_import(path=archive, owner=alice)


def test_the_command_says_so_without_a_traceback(archive):
    data = json.loads(archive.read_text())
    data["study"]["name"] = "Study \ud83d"
    _write(archive, data)
    with pytest.raises(CommandError, match=r"study.json:\d+: \$\.study\.name: the text holds a lone UTF-16"):
        call_command("import_study", str(archive), "--owner", "alice")


def test_a_valid_emoji_still_imports(archive, alice):
    data = json.loads(archive.read_text())
    data["participants"][0]["assignments"][1]["session"]["queries"][0]["text"] = "query \U0001f600"
    _write(archive, data)
    study = study_archive_import(path=archive, owner=alice)
    assert (
        study.participants.get(code="P001")
        .assignments.get(position=2)
        .session.queries.filter(text="query \U0001f600")
        .exists()
    )


def test_a_malformed_questionnaire_is_refused(archive, alice):
    data = json.loads(archive.read_text())
    data["study"]["questionnaire"] = [{"name": "s", "label": "S", "kind": "scale", "min": 1}]
    _write(archive, data)
    before = counts()
    with pytest.raises(
        ImportFailure, match=r"\$\.study\.questionnaire: item 1 \(s\): a scale needs min and max"
    ):
        study_archive_import(path=archive, owner=alice)
    assert counts() == before


def test_json_nested_too_deeply_is_refused(tmp_path, alice):
    path = tmp_path / "deep.json"
    path.write_text("[" * 50_000 + "]" * 50_000)
    with pytest.raises(ImportFailure, match="nested too deeply"):
        study_archive_import(path=path, owner=alice)
