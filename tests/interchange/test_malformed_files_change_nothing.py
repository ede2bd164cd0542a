"""Malformed files: a clear error naming file, line and field, and nothing written."""

import json

import pytest
from django.core.management import CommandError, call_command

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import
from studies.interchange.session_track import session_track_import
from studies.models import Collection, Document, Event, Participant, ReferenceVersion, Study

from ..samples import SESSION_TRACK_XML

pytestmark = pytest.mark.django_db


def counts():
    return (
        Study.objects.count(),
        Document.objects.count(),
        Collection.objects.count(),
        Participant.objects.count(),
        Event.objects.count(),
        ReferenceVersion.objects.count(),
    )


@pytest.mark.parametrize(
    "old, new, line, field, words",
    [
        ("<rank>2</rank></click></clicked>", "<rank>2</rank></click>", 11, None, "not well-formed"),
        ('starttime="10:00:09.000000"', 'starttime="ten"', 10, "click@starttime", "not a time of day"),
        ("<rank>2</rank>", "<rank>5</rank>", 10, "rank", "only 2 results"),
        ('<result rank="2">', '<result rank="3">', 8, "result@rank", "ranks must run 1..n"),
        ("<clueweb09id>doc-b</clueweb09id>", "", 8, "clueweb09id", "no document id"),
        ("<query>things</query>", "<query> </query>", 5, "query", "empty query"),
        ('<interaction num="1"', '<interaction num="x"', 4, "interaction@num", "not an integer"),
    ],
)
def test_a_bad_log_names_file_line_and_field(alice, tmp_path, old, new, line, field, words):
    path = tmp_path / "log.xml"
    assert old in SESSION_TRACK_XML
    path.write_text(SESSION_TRACK_XML.replace(old, new, 1))
    before = counts()
    with pytest.raises(ImportFailure) as failure:
        session_track_import(path=path, owner=alice, name="x")
    error = failure.value
    assert (error.path, error.line, error.field) == (str(path), line, field), str(error)
    assert words in str(error) and str(error).startswith(f"{path}:{line}: ")
    assert counts() == before


def test_the_good_log_imports(alice, tmp_path, capsys):
    path = tmp_path / "log.xml"
    path.write_text(SESSION_TRACK_XML)
    summary = session_track_import(path=path, owner=alice, name="x")
    assert (summary.sessions, summary.interactions, summary.results, summary.clicks) == (1, 1, 2, 1)
    call_command("import_session_track", str(path), "--owner", "alice", "--name", "y", "--date", "2013-05-02")
    assert "1 session, 1 interaction, 2 results, 1 click, 0 new documents" in capsys.readouterr().out
    session = Study.objects.get(name="y").participants.get().assignments.get().session
    assert session.started_at.isoformat() == "2013-05-02T10:00:00+00:00"
    assert session.ended_at.isoformat() == "2013-05-02T10:01:00+00:00"


def test_a_bad_qrels_line_rolls_back_the_whole_log(alice, tmp_path):
    log, qrels = tmp_path / "log.xml", tmp_path / "q.txt"
    log.write_text(SESSION_TRACK_XML)
    # Topic 8 is no topic of the log: kept (it scores nothing); line 4's grade fits no scale.
    qrels.write_text("7 0 doc-a 1\n7 0 doc-b 2\n8 0 doc-a 1\n7 0 doc-c 12\n")
    before = counts()
    with pytest.raises(Exception) as failure:
        session_track_import(path=log, qrels_path=qrels, owner=alice, name="x")
    assert str(failure.value).startswith(f"{qrels}:4: ") and "above 9" in str(failure.value)
    assert counts() == before
    qrels.write_text("7 0 doc-a 1\n7 0 doc-b\n")
    with pytest.raises(Exception) as failure:
        session_track_import(path=log, qrels_path=qrels, owner=alice, name="x")
    assert str(failure.value).startswith(f"{qrels}:2: ")
    assert counts() == before


def test_the_command_reports_the_error(alice, tmp_path):
    path = tmp_path / "log.xml"
    path.write_text(SESSION_TRACK_XML.replace("<desc>", "<desc2>"))
    with pytest.raises(CommandError, match=r"log.xml:\d+: "):
        call_command("import_session_track", str(path), "--owner", "alice", "--name", "x")


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_a_bad_archive_names_file_line_and_field_and_imports_nothing(archive, alice):
    text = archive.read_text()
    data = json.loads(text)
    before = counts()
    cases = []
    # A grade outside the scale, deep inside a session.
    bad = json.loads(text)
    judgment = bad["participants"][0]["assignments"][0]["session"]["judgments"][0]
    judgment["grade"] = 7
    cases.append((bad, "$.participants[0].assignments[0].session.judgments[0].grade", "grade 7"))
    # A shown result naming a document the archive does not hold.
    bad = json.loads(text)
    bad["participants"][0]["assignments"][1]["session"]["queries"][1]["shown_results"][2]["doc"] = "zz"
    cases.append((bad, "$.participants[0].assignments[1].session.queries[1].shown_results[2].doc", "'zz'"))
    # An assignment to an unknown system; a time that is not one.
    bad = json.loads(text)
    bad["participants"][1]["assignments"][3]["system"] = "Q"
    cases.append((bad, "$.participants[1].assignments[3].system", "no system 'Q'"))
    bad = json.loads(text)
    bad["participants"][0]["events"][5]["client_time"] = "yesterday"
    cases.append((bad, "$.participants[0].events[5].client_time", "not an ISO 8601"))
    for broken, field, words in cases:
        archive.write_text(json.dumps(broken, indent=1))
        with pytest.raises(ImportFailure) as failure:
            study_archive_import(path=archive, owner=alice)
        error = failure.value
        assert error.field == field and words in error.reason, str(error)
        assert error.line is not None and error.line > 1
        assert str(error).startswith(f"{archive}:{error.line}: {field}: ")
        assert counts() == before
    assert data["format"] == "sessionlab-study-archive"


def test_the_archive_line_is_the_line_of_the_object(archive, alice):
    data = json.loads(archive.read_text())
    data["scenarios"][2]["code"] = data["scenarios"][1]["code"]
    text = json.dumps(data, indent=1)
    archive.write_text(text)
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=archive, owner=alice)
    scenarios_start = line_of(text, '"scenarios"')
    assert failure.value.field == "$.scenarios[2].code"
    assert failure.value.line == scenarios_start + 1 + 2 * 7  # each scenario object spans 7 lines


def test_broken_json_names_the_line(archive, alice):
    lines = archive.read_text().splitlines()
    lines[9] = lines[9] + " oops"
    archive.write_text("\n".join(lines))
    before = counts()
    with pytest.raises(CommandError, match=rf"{archive}:10: invalid JSON"):
        call_command("import_study", str(archive), "--owner", "alice")
    assert counts() == before
