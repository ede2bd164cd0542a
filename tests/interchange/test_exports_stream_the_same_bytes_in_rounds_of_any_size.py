"""The big exports stream (a round of rows at a time) and their bytes do not depend on the round's size:
a round of one session or participant writes what one round of the whole study writes, which is what the
exports wrote whole in memory (the Session Track XML as ElementTree indents the whole tree, the archive as
json.dumps). A refusal comes before the first byte, as a 4xx."""

import datetime as dt
import io
import json
import xml.etree.ElementTree as ET
import zipfile

import pytest
from django.test import Client
from django.utils import timezone

from studies.demo import GENERATED, demo_study_load
from studies.interchange import downloads
from studies.interchange.archive import export as archive_export
from studies.interchange.archive import study_archive_stream
from studies.interchange.session_track import session_track_stream
from studies.interchange.tidy_csv import TABLE_NAMES, table_csv, table_rows
from studies.interchange.trec import study_runs_iter
from studies.models import AnswerTurn, Collection, Document, Query, ShownResult, Study
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(settings, tmp_path) -> Study:
    """The demo study with three simulated participants (twelve sessions with queries, opens, judgments)."""
    settings.INDEX_ROOT = tmp_path / "indexes"
    demo_study_load(participants=3, data_dir=GENERATED)
    return Study.objects.get(slug="demo-ecir-2008")


def turns_added(study: Study) -> None:
    """Two sessions' first queries as turns of a generative system (the demo has none yet: issue 40), citing
    their first two shown results, so turns.csv and citations.csv have rows in rounds too."""
    queries = Query.objects.filter(session__assignment__participant__study=study, position=1).order_by("id")[
        :2
    ]
    for n, query in enumerate(queries):
        docs = list(query.shown_results.order_by("rank").values_list("document__external_id", flat=True)[:2])
        AnswerTurn.objects.create(
            session_id=query.session_id,
            client_turn_id=f"t{n}",
            asked_at=query.issued_at,
            question=query.text,
            status="ok",
            answer_text="One [1]. Two [2].",
            citations=[
                {"doc": d, "start": 4 + 9 * i, "end": 7 + 9 * i, "marker": f"[{i + 1}]"}
                for i, d in enumerate(docs)
            ],
            retrieved=docs,
            answerer="extractive",
            query=query,
        )


def test_each_table_has_the_same_rows_read_one_session_at_a_time(demo):
    turns_added(demo)
    for name in TABLE_NAMES:  # participants.csv reads a round of participants at a time
        whole = list(table_rows(study=demo, name=name, chunk_size=1000))
        assert len(whole) > 1, name
        assert list(table_rows(study=demo, name=name, chunk_size=1)) == whole, name


def test_the_tables_zip_streams_in_chunks_and_holds_each_table(demo):
    chunks = list(downloads.tables_zip_stream(study=demo))
    with zipfile.ZipFile(io.BytesIO(b"".join(chunks))) as zipped:
        assert zipped.testzip() is None
        assert zipped.namelist() == [f"{name}.csv" for name in TABLE_NAMES] + ["population.txt"]
        for name in TABLE_NAMES:
            expected = table_csv(table_rows(study=demo, name=name, chunk_size=1000))
            assert zipped.read(f"{name}.csv").decode("utf-8") == expected


def test_the_runs_are_the_same_read_one_session_at_a_time(demo):
    for unit in ("query", "session"):
        whole = [(r.name, r.text) for r in study_runs_iter(study=demo, unit=unit, chunk_size=1000)]
        assert whole
        assert [(r.name, r.text) for r in study_runs_iter(study=demo, unit=unit, chunk_size=1)] == whole
    with zipfile.ZipFile(io.BytesIO(downloads.study_runs_zip(study=demo))) as zipped:
        assert zipped.namelist() == [r.name for r in study_runs_iter(study=demo)] + ["population.txt"]


def test_the_session_track_log_is_what_element_tree_writes_for_the_whole_tree(demo):
    streamed = b"".join(session_track_stream(study=demo, chunk_size=1))
    assert streamed == b"".join(session_track_stream(study=demo, chunk_size=1000))
    root = ET.fromstring(streamed)
    assert len(root.findall("session")) == 12
    for element in root.iter():  # the whole tree indented again, from nothing
        element.text = element.text if element.text and element.text.strip() else None
        element.tail = None
    ET.indent(root, space="   ")
    assert (
        streamed == b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"
    )


def test_a_study_without_sessions_writes_an_empty_log(alice):
    study = Study.objects.create(name="Empty", slug="empty", owner=alice)
    streamed = b"".join(session_track_stream(study=study))
    assert streamed == b'<?xml version="1.0" encoding="UTF-8"?>\n<sessiontrack2012 />\n'


def test_the_archive_is_json_dumps_of_itself_read_one_participant_at_a_time(demo, monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    whole = b"".join(study_archive_stream(study=demo))
    monkeypatch.setattr(archive_export, "PARTICIPANTS_PER_CHUNK", 1)
    monkeypatch.setattr(archive_export, "DOCUMENTS_PER_CHUNK", 1)
    assert b"".join(study_archive_stream(study=demo)) == whole
    data = json.loads(whole)
    assert len(data["participants"]) == 5 and data["documents"]  # 3 simulated, 2 for the researcher
    assert whole.decode("utf-8") == json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def test_the_downloads_of_the_study_pages_and_the_api_stream(demo):
    page = Client()
    page.force_login(demo.owner)
    for path in ("tables.zip", "runs-query.zip", "archive.json", "session-track.xml"):
        response = page.get(f"/studies/{demo.slug}/downloads/{path}")
        assert response.status_code == 200 and response.streaming, path
        assert response["Content-Disposition"] == f'attachment; filename="{demo.slug}-{path}"'
        assert b"".join(response.streaming_content), path
    api = client_for(demo.owner)
    for path in ("archive/", "tables/", "runs/?unit=session", "session-track/"):
        response = api.get(f"/api/studies/{demo.pk}/{path}")
        assert response.status_code == 200 and response.streaming, path
        assert b"".join(response.streaming_content), path


def test_a_bad_parameter_is_refused_before_any_byte(demo):
    api = client_for(demo.owner)
    for path in ("runs/?unit=bogus", "tables/?raw=maybe", "archive/?extra=1"):
        response = api.get(f"/api/studies/{demo.pk}/{path}")
        assert response.status_code == 400 and not response.streaming, path
    page = Client()
    page.force_login(demo.owner)
    response = page.get(f"/studies/{demo.slug}/downloads/runs-bogus.zip")
    assert response.status_code == 400 and not response.streaming


def test_an_archive_that_cannot_be_written_is_refused_before_any_byte(demo):
    """A document id naming documents of two collections: a 409 naming it, not a stream cut short."""
    shown = ShownResult.objects.filter(query__session__assignment__participant__study=demo).first()
    other = Collection.objects.create(name="Other", owner=demo.owner)
    twin = Document.objects.create(collection=other, external_id=shown.document.external_id, text="twin")
    ShownResult.objects.filter(pk=shown.pk).update(document=twin)
    response = client_for(demo.owner).get(f"/api/studies/{demo.pk}/archive/")
    assert response.status_code == 409 and not response.streaming
    assert shown.document.external_id in response.json()["detail"]
    page = Client()
    page.force_login(demo.owner)
    response = page.get(f"/studies/{demo.slug}/downloads/archive.json")
    assert response.status_code == 409 and not response.streaming
