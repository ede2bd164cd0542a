"""An HTTP system (HttpSearchSystem, called through sessionlab.outbound by systems.http_search) against a
local http.server: good answers, and every failure as a message and a short category, never a raise. The
server is on loopback, which the operator's allow-list (OUTBOUND_ALLOW) must name."""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from studies.search.engines.http import UNAVAILABLE, HttpSearchSystem
from studies.search.engines.search import Hit
from studies.search.systems import http_search


@pytest.fixture(autouse=True)
def loopback_allowed(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.0/8"]
    settings.OUTBOUND_BREAKER_FAILURES = 1000  # these tests fail on purpose, often


def search(template, query="x", page=1, page_size=10, timeout=5.0):
    return http_search(HttpSearchSystem(template, timeout), query, page, page_size)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass

    def _send(self, status, body, content_type="application/json"):
        data = body if isinstance(body, bytes) else body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        params = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/search":
            page, size = int(params["p"]), int(params["n"])
            results = [
                {"id": f"d{i}", "title": f"T{i}", "snippet": params["q"], "url": f"https://x.org/{i}"}
                for i in range((page - 1) * size, page * size)
            ]
            self._send(200, json.dumps({"results": results, "total": 95}))
        elif url.path == "/list":
            self._send(200, json.dumps([{"id": 7, "score": 1.5}, {"id": "b", "title": "B"}]))
        elif url.path == "/echo":
            self._send(200, json.dumps([{"id": "raw", "snippet": self.path}]))
        elif url.path == "/slow":
            time.sleep(1.5)
            try:
                self._send(200, "[]")
            except OSError:  # the client gave up long ago
                pass
        elif url.path == "/broken":
            self._send(200, '{"results": [{"id": "a"}')
        elif url.path == "/shape":
            self._send(200, json.dumps({"results": [{"title": "no id"}]}))
        elif url.path == "/script-url":
            self._send(200, json.dumps([{"id": "a", "url": "javascript:alert(1)"}]))
        elif url.path == "/error":
            self._send(500, "oops", "text/plain")
        elif url.path == "/accepted":
            self._send(202, "[]")
        else:
            self._send(404, "no", "text/plain")


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_object_response_with_paging(server):
    page = search(server + "/search?q={query}&p={page}&n={page_size}", "wing & slip/stream", 2, 5)
    assert page.error is None and page.total == 95 and page.page == 2
    assert [h.rank for h in page.results] == [6, 7, 8, 9, 10]
    assert page.results[0] == Hit("d5", 6, None, "T5", "wing & slip/stream", (), "https://x.org/5")


def test_bare_list_response(server):
    page = search(server + "/list?q={query}")
    assert page.error is None and page.total is None
    assert [(h.doc_id, h.rank, h.score, h.title, h.snippet) for h in page.results] == [
        ("7", 1, 1.5, "", ""),
        ("b", 2, None, "B", ""),
    ]


def test_query_is_url_encoded(server):
    page = search(server + "/echo?q={query}", 'a b&c=d?"é#')
    assert page.results[0].snippet == "/echo?q=a%20b%26c%3Dd%3F%22%C3%A9%23"


def test_results_beyond_page_size_are_dropped(server):
    page = search(server + "/search?q={query}&p=1&n=50", page_size=3)
    assert [h.doc_id for h in page.results] == ["d0", "d1", "d2"]


def test_timeout(server):
    started = time.monotonic()
    page = search(server + "/slow?q={query}", timeout=0.3)
    assert time.monotonic() - started < 1.2
    assert (
        page.results == [] and page.error == UNAVAILABLE and page.detail == "timed out" and page.unavailable
    )


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    "path, detail",
    [
        ("/broken?q={query}", "not JSON"),
        ("/shape?q={query}", "wrong shape"),
        ("/script-url?q={query}", "wrong shape"),
        ("/error?q={query}", "HTTP 500"),
        ("/missing?q={query}", "HTTP 404"),
        ("/accepted?q={query}", "HTTP 202"),
    ],
)
def test_failures_are_messages(server, path, detail):
    page = search(server + path, page=3)
    assert page.results == [] and page.total is None and page.page == 3
    assert page.error == UNAVAILABLE and page.unavailable
    assert page.detail == detail  # the category only: nothing the engine sent


def test_connection_refused():
    page = search(f"http://127.0.0.1:{_closed_port()}/s?q={{query}}", timeout=1)
    assert page.results == [] and page.error == UNAVAILABLE and page.detail == "could not connect"


@pytest.mark.parametrize(
    "template, reason",
    [
        ("http://h/s?q=x", "no {query}"),
        ("http://h/s?q={query}&k={key}", "unknown placeholder {key}"),
        ("http://h/s?q={query", "bad URL template"),
        ("ftp://h/{query}", "not an http"),
        ("file:///etc/{query}", "not an http"),
    ],
)
def test_bad_templates_are_refused_when_configured(template, reason):
    with pytest.raises(ValueError, match=reason.replace("{", "\\{").replace("}", "\\}")):
        HttpSearchSystem(template)


def test_bad_timeout_is_refused():
    with pytest.raises(ValueError, match="timeout"):
        HttpSearchSystem("http://h/{query}", timeout=0)
