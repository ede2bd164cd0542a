"""scoring.api.CSVRenderer is a real renderer: what a view answers in JSON (rows, or a page of them) as CSV,
the same bytes whether rendered whole or streamed a line at a time; lists become numbered columns, text cells
that a spreadsheet would run as formulas are made safe unless ?raw=1."""

import pytest
from rest_framework.test import APIRequestFactory

from scoring.api import CSVRenderer
from tests.interchange.api_helpers import client_for

ROWS = [
    {"session": 1, "text": "=cmd()", "is_last": True, "sdcg": 0.5, "note": None, "by_rank": [0.25, 0.5]},
    {
        "session": 2,
        "text": "plain, with a comma",
        "is_last": False,
        "sdcg": -1.5,
        "note": "-3",
        "by_rank": [0, 1],
    },
]
EXPECTED = (
    "session,text,is_last,sdcg,note,by_rank@1,by_rank@2\r\n"
    "1,'=cmd(),true,0.5,,0.25,0.5\r\n"
    '2,"plain, with a comma",false,-1.5,-3,0,1\r\n'
)


def context(query=""):
    return {"request": type("Request", (), {"query_params": APIRequestFactory().get("/" + query).GET})()}


def test_rows_render_with_numbered_list_columns_and_safe_text():
    assert CSVRenderer().render(ROWS, "text/csv", context()) == EXPECTED.encode()


def test_a_page_renders_its_results_and_nothing_renders_empty():
    page = {"next": None, "previous": None, "results": ROWS}
    assert CSVRenderer().render(page, "text/csv", context()) == EXPECTED.encode()
    assert CSVRenderer().render(None) == b""
    assert CSVRenderer().render([]) == b""
    assert CSVRenderer().render({"a": 1, "b": "x"}) == b"a,b\r\n1,x\r\n"


def test_raw_writes_text_as_it_is():
    raw = CSVRenderer().render(ROWS, "text/csv", context("?raw=1")).decode()
    assert "\r\n1,=cmd(),true," in raw


def test_streamed_lines_are_the_rendered_bytes():
    header = ["session", "text", "is_last", "sdcg", "note", "by_rank@1", "by_rank@2"]
    streamed = "".join(CSVRenderer.lines(iter(ROWS), header=header))
    assert streamed.encode() == CSVRenderer().render(ROWS)
    assert list(CSVRenderer.lines([], header=["a"])) == ["a\r\n"]  # an empty result keeps its header


@pytest.mark.django_db
def test_the_query_scores_file_is_the_json_pages_rendered(scored_run, alice):
    client = client_for(alice)
    url = f"/api/studies/{scored_run.study_id}/scoring-runs/{scored_run.pk}/query-scores/"
    rows = client.get(url, {"by_rank": 1, "page_size": 5000}).json()["results"]
    streamed = b"".join(client.get(url, {"by_rank": 1, "format": "csv"}).streaming_content).decode()
    rendered = CSVRenderer().render(rows).decode()
    header, _, body = streamed.partition("\r\n")
    assert header.split(",")[-1] == "sdcg@100"  # the file names the ranks' columns after the value
    assert body == rendered.partition("\r\n")[2] and body.count("\r\n") == len(rows) == 4
