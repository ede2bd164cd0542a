"""A researcher's engine over HTTP: its results are shown and recorded. A failure (an error status, a refused
connection, a timeout, an open breaker) is "retry later" for the participant, who sends the query again: no
query without results is stored. A misconfigured system stays a plain message kept with the query."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from studies.errors import RetryLater
from studies.models import Event, Query, ShownResult, System
from studies.participation.way.steps import events_ingest, query_log
from studies.search.systems import system_search

from .conftest import cid, start


class Engine(BaseHTTPRequestHandler):
    def do_GET(self):
        if "fail" in self.path:
            self.send_response(500)
            self.end_headers()
            return
        body = json.dumps(
            {
                "results": [
                    {"id": "3", "title": "Three", "snippet": "s3"},
                    {"id": "not-in-collection", "title": "?"},
                    {"id": 5, "title": "Five", "snippet": "s5"},
                ],
                "total": 3,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def engine_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Engine)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def http_participant(running_study, engine_url, settings):
    settings.OUTBOUND_ALLOW = [
        "127.0.0.1"
    ]  # the engine is on loopback, refused unless the operator allows it
    # The design is locked after enrolment; the systems' configuration (not their identity) may still change.
    System.objects.filter(study=running_study).update(
        backend="http", config={"url_template": engine_url + "/search?q={query}&p={page}", "timeout": 2}
    )
    return running_study.participants.order_by("enrolment_index")[0]


def test_an_http_systems_results_are_recorded_as_shown_results(http_participant):
    session = start(http_participant)
    ack = query_log(participant=http_participant, session=session, text="wing", client_event_id=cid())
    assert [r["doc"] for r in ack["results"]] == ["3", "5"]
    # Ranks are the engine's: the document the collection lacks is left out (and logged), not renumbered.
    assert list(ShownResult.objects.values_list("rank", "document__external_id")) == [(1, "3"), (3, "5")]


def test_an_http_system_error_is_retry_later_and_stores_no_query(http_participant, engine_url, caplog):
    System.objects.filter(study=http_participant.study).update(
        config={"url_template": engine_url + "/fail?q={query}", "timeout": 1}
    )
    session = start(http_participant)
    with pytest.raises(RetryLater, match="not available right now; send it again later"):
        query_log(participant=http_participant, session=session, text="wing", client_event_id=cid())
    acks = events_ingest(
        participant=http_participant,
        events=[{"id": cid(), "type": "query", "session": session.pk, "data": {"text": "wing"}}],
    )
    assert acks[0]["ok"] is False and "send it again later" in acks[0]["retry_later"]
    assert not Query.objects.filter(session=session).exists()
    assert not Event.objects.filter(type="query").exists()
    assert "HTTP 500" in caplog.text  # the server log keeps the cause


def test_a_misconfigured_http_system_is_a_plain_message(running_study):
    system = running_study.systems.get(code="A")
    system.backend, system.config = "http", {"url_template": "ftp://nowhere/{query}"}
    page = system_search(system=system, query="wing")
    assert page.results == [] and page.error.startswith("The search system is not set up correctly")
