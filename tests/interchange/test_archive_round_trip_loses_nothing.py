"""A study exported to one JSON archive, imported into a fresh study and exported again: equal except ids."""

import json

import pytest
from django.core.management import call_command

from studies.assessment.references import reference_version_import_qrels
from studies.interchange.archive import study_archive, study_archive_import
from studies.models import Event, Query, Study

pytestmark = pytest.mark.django_db

ID_KEYS = {"id"}
ACK_IDS = ("session", "query_id", "open_document_id")


def without_ids(value):
    """The archive without database ids, the export time and the (necessarily new) slug."""
    if isinstance(value, dict):
        out = {k: without_ids(v) for k, v in value.items() if k not in ID_KEYS and k != "exported_at"}
        if "ack" in out and isinstance(out["ack"], dict):
            out["ack"] = {k: ("<id>" if k in ACK_IDS else v) for k, v in out["ack"].items()}
        return out
    if isinstance(value, list):
        return [without_ids(v) for v in value]
    return value


@pytest.fixture
def full_study(worked_study, alice):
    reference_version_import_qrels(
        study=worked_study, lines=["1 0 d1 2", "2 0 d3 1"], path="a.qrels", created_by=alice
    )
    reference_version_import_qrels(study=worked_study, lines=["1 0 d1 3"], path="b.qrels", created_by=alice)
    return worked_study


def test_export_import_export_is_equal_except_ids(full_study, alice, tmp_path):
    path = tmp_path / "study.json"
    call_command("export_study", full_study.slug, "-o", str(path))
    first = json.loads(path.read_text())
    call_command("import_study", str(path), "--owner", "alice")
    copy = Study.objects.exclude(pk=full_study.pk).get()
    second = study_archive(study=copy)
    assert copy.slug != full_study.slug
    first["study"].pop("slug"), second["study"].pop("slug")
    # The one change: who judged a reference judgment is the archive's claim here, and says so.
    for version in first["reference_versions"]:
        for judgment in version["judgments"]:
            judgment["source"] = "imported (claimed): " + judgment["source"]
    assert without_ids(second) == without_ids(first)
    # What the counts say, in case a level were missing from both sides.
    assert len(first["participants"][0]["events"]) == 14
    assert (
        sum(len(a["session"]["queries"]) for a in first["participants"][0]["assignments"] if a["session"])
        == 4
    )
    assert [v["number"] for v in first["reference_versions"]] == [1, 2]
    used = {
        r["doc"]
        for a in first["participants"][0]["assignments"]
        if a["session"]
        for q in a["session"]["queries"]
        for r in q["shown_results"]
    } | {"d1", "d3"}
    assert sorted(d["external_id"] for d in first["documents"]) == sorted(used)


def test_event_answers_point_at_the_new_rows(full_study, alice, tmp_path):
    path = tmp_path / "study.json"
    call_command("export_study", full_study.slug, "-o", str(path))
    copy = study_archive_import(path=path, owner=alice, name="Copy")
    full_study.refresh_from_db()
    for event in Event.objects.filter(participant__study=copy, type="query"):
        query = Query.objects.get(pk=event.payload["ack"]["query_id"])
        assert query.session_id == event.session_id and query.position == event.payload["ack"]["query"]
    for event in Event.objects.filter(participant__study=copy, type="session_start"):
        assert event.payload["ack"]["session"] == event.session_id
    assert (
        copy.name == "Copy" and copy.owner == alice and copy.design_locked_at == full_study.design_locked_at
    )
    tokens = set(copy.participants.values_list("access_token", flat=True))
    assert tokens.isdisjoint(full_study.participants.values_list("access_token", flat=True))


def test_a_session_track_study_survives_the_archive(alice, tmp_path, shared_data):
    from studies.interchange.session_track import session_track_export, session_track_import

    folder = shared_data / "peer-data" / "trec-session-2012"
    imported = session_track_import(
        path=folder / "sessiontrack2012.xml",
        qrels_path=folder / "qrels2012.txt",
        owner=alice,
        name="TREC 2012",
    )
    path = tmp_path / "st.json"
    call_command("export_study", imported.study.slug, "-o", str(path))
    copy = study_archive_import(path=path, owner=alice)
    assert session_track_export(study=copy) == session_track_export(study=imported.study)
    assert copy.reference_versions.get().judgments.count() == 17861
