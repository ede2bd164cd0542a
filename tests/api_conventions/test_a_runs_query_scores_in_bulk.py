"""GET .../scoring-runs/<run>/query-scores/: every per-query score of a run, all sessions, by cursor pages
(JSON) or as one CSV file, equal to what the per-session endpoint answers; text cells are spreadsheet-safe."""

import csv
import io

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from scoring.models import QueryScore
from studies.models import Query
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db


def bulk_url(run, suffix=""):
    return f"/api/studies/{run.study_id}/scoring-runs/{run.pk}/query-scores/{suffix}"


def per_session(client, run):
    """What one request per session gives today."""
    rows = []
    sessions = client.get(f"/api/studies/{run.study_id}/scoring-runs/{run.pk}/sessions/").json()["results"]
    for session in sessions:
        url = f"/api/studies/{run.study_id}/scoring-runs/{run.pk}/sessions/{session['session']}/queries/"
        for query in client.get(url, {"by_rank": 1}).json()["results"]:
            rows.append(
                {
                    "session": session["session"],
                    "participant": session["participant"],
                    "scenario": session["scenario"],
                    "system": session["system"],
                    **query,
                }
            )
    return rows


def all_pages(client, url, params):
    rows, pages = [], 0
    page = client.get(url, params).json()
    while True:
        pages += 1
        assert set(page) == {"next", "previous", "results"}  # a cursor page: no count, no page numbers
        rows.extend(page["results"])
        if page["next"] is None:
            return rows, pages
        assert "cursor=" in page["next"]
        page = client.get(page["next"]).json()


def test_every_page_together_equals_one_request_per_session(scored_run, alice):
    client = client_for(alice)
    expected = per_session(client, scored_run)
    assert len(expected) == 4
    rows, pages = all_pages(client, bulk_url(scored_run), {"page_size": 3, "by_rank": 1})
    assert pages == 2
    assert [(r["session"], r["position"]) for r in rows] == sorted(
        (r["session"], r["position"]) for r in expected
    )
    assert sorted(rows, key=lambda r: r["query"]) == sorted(expected, key=lambda r: r["query"])
    assert len(rows[0]["by_rank"]) == 100
    stored = QueryScore.objects.get(run=scored_run, query_id=rows[0]["query"])
    assert rows[0]["sdcg"] == stored.sdcg
    without = client.get(bulk_url(scored_run)).json()["results"][0]
    assert set(without) == {
        "session",
        "participant",
        "scenario",
        "system",
        "query",
        "position",
        "text",
        "is_last",
        "sdcg",
    }


def test_filters_and_their_refusals(scored_run, alice):
    client = client_for(alice)
    rows = client.get(bulk_url(scored_run), {"is_last": "true", "system": "A"}).json()["results"]
    assert rows and all(r["is_last"] and r["system"] == "A" for r in rows)
    one = rows[0]["session"]
    assert {r["session"] for r in client.get(bulk_url(scored_run), {"session": one}).json()["results"]} == {
        one
    }
    for params, name in (
        ({"system": "Z"}, "system"),
        ({"is_last": "yes"}, "is_last"),
        ({"sessoin": 1}, "sessoin"),
        ({"cursor": "garbage"}, None),
    ):
        response = client.get(bulk_url(scored_run), params)
        assert response.status_code in (400, 404), params
        if name:
            assert response.status_code == 400 and name in response.json(), params
        else:
            assert response.status_code == 404 and response.json()["detail"] == "Invalid cursor"


def test_csv_is_the_whole_result_in_one_file(scored_run, alice):
    client = client_for(alice)
    json_rows, _ = all_pages(client, bulk_url(scored_run), {"page_size": 1})
    for response in (
        client.get(bulk_url(scored_run), {"format": "csv"}),
        client.get(bulk_url(scored_run), HTTP_ACCEPT="text/csv"),
    ):
        assert response.status_code == 200
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        assert "attachment" in response["Content-Disposition"]
        table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
        assert [
            (int(r["session"]), int(r["query"]), float(r["sdcg"]), r["is_last"] == "true") for r in table
        ] == [(r["session"], r["query"], r["sdcg"], r["is_last"]) for r in json_rows]
    by_rank = client.get(bulk_url(scored_run), {"format": "csv", "by_rank": "1"})
    table = list(csv.reader(io.StringIO(b"".join(by_rank.streaming_content).decode())))
    assert table[0][-1] == "sdcg@100" and len(table[1]) == 9 + 100
    stored = QueryScore.objects.get(run=scored_run, query_id=int(table[1][4]))
    assert np.allclose(
        [float(v) for v in table[1][9:]], np.frombuffer(bytes(stored.by_rank), dtype=np.float32)
    )


def test_csv_text_cells_cannot_run_as_formulas(scored_run, alice):
    Query.objects.filter(session__assignment__participant__study=scored_run.study, position=1).update(
        text='=HYPERLINK("http://evil.example","x")'
    )
    client = client_for(alice)
    safe = b"".join(client.get(bulk_url(scored_run), {"format": "csv"}).streaming_content).decode()
    texts = [row["text"] for row in csv.DictReader(io.StringIO(safe))]
    assert '\'=HYPERLINK("http://evil.example","x")' in texts
    assert not any(text.startswith("=") for text in texts)
    raw = b"".join(client.get(bulk_url(scored_run), {"format": "csv", "raw": "1"}).streaming_content).decode()
    assert any(row["text"].startswith("=") for row in csv.DictReader(io.StringIO(raw)))


def test_an_error_asked_for_as_csv_is_still_json(scored_run, alice, charlie):
    response = client_for(alice).get(bulk_url(scored_run), {"format": "csv", "system": "Z"})
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert "system" in response.json()
    other = client_for(charlie).get(bulk_url(scored_run), {"format": "csv"})
    assert other.status_code == 404 and other["Content-Type"] == "application/json"


def test_a_page_costs_the_same_number_of_queries_however_deep(scored_run, alice):
    client = client_for(alice)
    counts = []
    url = bulk_url(scored_run) + "?page_size=1"
    while url:
        with CaptureQueriesContext(connection) as context:
            page = client.get(url).json()
        counts.append(len(context))
        url = page["next"]
    assert len(counts) == 4 and len(set(counts)) == 1, counts


def test_other_researchers_get_404_and_anonymous_callers_401(scored_run, charlie):
    assert client_for(charlie).get(bulk_url(scored_run)).status_code == 404
    assert client_for().get(bulk_url(scored_run)).status_code == 401
