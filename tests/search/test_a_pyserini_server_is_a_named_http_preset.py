"""Pyserini's REST server as a named HTTP system preset, against a local stand-in that speaks its protocol:
`GET /v1/indexes/{index}/search?query=...&hits=N` answering {"api", "index", "query", "candidates"} from
rank 1, `doc` a parsed object, a raw string or null; an unknown index a 404 with {"error"}."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from studies.models import System
from studies.search.engines.http import UNAVAILABLE
from studies.search.systems import http_engine, http_search, system_config_problem

CORPUS = [
    {"docid": f"doc{i}", "doc": {"title": f"Title {i}", "contents": f"wing flutter number {i} " * 40}}
    for i in range(25)
]
ASKED: list[dict] = []


class PyseriniStandIn(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        parts = url.path.split("/")
        params = {k: v[0] for k, v in parse_qs(url.query).items()}
        if len(parts) != 5 or parts[1:3] != ["v1", "indexes"] or parts[4] != "search":
            self._send(404, {"error": "Route not found"})
            return
        index = unquote(parts[3])
        ASKED.append({"index": index, **params})
        hits = int(params.get("hits", 10))
        if index == "cranfield":
            docs = CORPUS[:hits]
        elif index == "raw-docs":
            docs = [{"docid": "r1", "doc": "  a raw stored\n document  "}, {"docid": "r2", "doc": None}]
        elif index == "bad-docid":
            docs = [{"docid": None, "doc": "x"}]
        else:
            self._send(404, {"error": f"Index {index} not found"})
            return
        candidates = [
            {"docid": d["docid"], "score": 20.0 - i, "rank": i + 1, "doc": d["doc"]}
            for i, d in enumerate(docs)
        ]
        self._send(
            200, {"api": "v1", "index": index, "query": {"text": params["query"]}, "candidates": candidates}
        )


@pytest.fixture(scope="module")
def pyserini_url():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), PyseriniStandIn)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def loopback_allowed(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.0/8"]
    settings.OUTBOUND_BREAKER_FAILURES = 1000


def preset(url, index="cranfield", **more):
    return {"preset": "pyserini", "base_url": url, "index": index, **more}


def test_the_preset_asks_pyserini_s_search_route_with_its_parameters(pyserini_url):
    ASKED.clear()
    page = http_search(http_engine(preset(pyserini_url + "/")), "wing & flutter", 1, 10)
    assert ASKED == [{"index": "cranfield", "query": "wing & flutter", "hits": "10"}]
    assert [h.doc_id for h in page.results] == [f"doc{i}" for i in range(10)]
    assert [h.rank for h in page.results] == list(range(1, 11))
    assert page.results[0].score == 20.0 and page.results[0].title == "Title 0"
    assert page.results[0].snippet.startswith("wing flutter number 0 wing")
    assert len(page.results[0].snippet) <= 302 and page.results[0].snippet.endswith(" …")
    assert page.error is None and page.total is None  # 10 asked, 10 came: more may follow


def test_a_later_page_asks_for_the_hits_up_to_it_and_keeps_its_slice(pyserini_url):
    ASKED.clear()
    page = http_search(http_engine(preset(pyserini_url)), "wing", 3, 10)
    assert ASKED[0]["hits"] == "30"
    # 25 documents: the third page holds ranks 21-25 and the total is known.
    assert [(h.doc_id, h.rank) for h in page.results] == [(f"doc{i}", i + 1) for i in range(20, 25)]
    assert page.total == 25


def test_a_raw_or_missing_document_is_read_as_its_text_or_nothing(pyserini_url):
    page = http_search(http_engine(preset(pyserini_url, "raw-docs")), "x", 1, 10)
    assert [(h.doc_id, h.title, h.snippet) for h in page.results] == [
        ("r1", "", "a raw stored document"),
        ("r2", "", ""),
    ]
    assert page.total == 2


@pytest.mark.parametrize(("index", "category"), [("no-such-index", "HTTP 404"), ("bad-docid", "wrong shape")])
def test_an_unknown_index_or_a_bad_candidate_is_unavailable_by_category(pyserini_url, index, category):
    page = http_search(http_engine(preset(pyserini_url, index)), "x", 1, 10)
    assert page.unavailable and page.results == [] and page.error == UNAVAILABLE and page.detail == category


def test_the_index_name_is_one_path_segment(pyserini_url):
    engine = http_engine(preset(pyserini_url, "a/b {c}"))
    assert engine.url_for("q", 2, 10) == f"{pyserini_url}/v1/indexes/a%2Fb%20%7Bc%7D/search?query=q&hits=20"


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"preset": "pyserini", "index": "x"}, "base_url"),
        ({"preset": "pyserini", "base_url": "ftp://h:8081", "index": "x"}, "http://"),
        ({"preset": "pyserini", "base_url": "http://h:8081"}, "index"),
        (
            {"preset": "pyserini", "base_url": "http://h", "index": "x", "url_template": "http://h/{query}"},
            "unknown",
        ),
        ({"preset": "solr", "base_url": "http://h", "index": "x"}, "unknown preset"),
        ({"preset": "pyserini", "base_url": "http://h", "index": "x", "timeout": 60}, "at most"),
    ],
)
def test_a_preset_that_cannot_work_is_refused_when_saved(config, reason):
    problem = system_config_problem(System.Backend.HTTP, config)
    assert problem is not None and reason in problem


def test_a_working_preset_is_accepted():
    assert system_config_problem(System.Backend.HTTP, preset("http://127.0.0.1:8081", timeout=3)) is None
