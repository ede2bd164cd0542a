"""outbound.post_json, an LLM assessor's way out, is held to fetch's rules: the resolved address
checked against OUTBOUND_ALLOW (a refused one is never reached), redirects refused rather than followed (the
body is not ours to resend), one deadline (the caller's timeout, at most OUTBOUND_POST_DEADLINE_SECONDS), the
body cap, the breaker; and its headers (an API key) appear in no error."""

import json
import logging
import time

import pytest

from sessionlab import outbound

from .local_servers import closed_port, serving

KEY = "sk-secret-0123456789"


@pytest.fixture
def server(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    with serving() as running:
        yield running


def test_it_posts_json_with_its_headers_and_returns_the_answer(server):
    response = outbound.post_json(
        server.base + "/v1/chat/completions",
        {"model": "m"},
        timeout=5,
        headers={"Authorization": f"Bearer {KEY}"},
    )
    assert response.status == 200 and json.loads(response.body) == [{"id": "a", "title": "A"}]
    body, headers = server.posted[0]
    assert json.loads(body) == {"model": "m"}
    assert headers["Content-Type"] == "application/json" and headers["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "10.0.0.1", "169.254.169.254"])
def test_an_inside_address_is_refused_and_never_reached(settings, host):
    settings.OUTBOUND_ALLOW = []
    with serving() as running:
        with pytest.raises(outbound.AddressRefused) as refused:
            outbound.post_json(f"http://{host}:{running.port}/v1/chat/completions", {}, timeout=2)
        assert running.posted == []
    assert refused.value.category == "refused (address not allowed)"


def test_a_redirect_is_refused_not_followed(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1", "127.0.0.2"]
    with serving("127.0.0.2") as redirector, serving("127.0.0.1") as target:
        with pytest.raises(outbound.RedirectRefused):
            outbound.post_json(f"{redirector.base}/redirect?to={target.base}/", {"a": 1}, timeout=2)
        assert target.posted == [] and target.paths == []


def test_the_callers_timeout_is_the_deadline_within_the_setting(server, settings):
    started = time.monotonic()
    with pytest.raises(outbound.TimedOut):
        outbound.post_json(server.base + "/slow", {}, timeout=0.5)
    assert time.monotonic() - started < 2.5  # the server would take 3 s
    settings.OUTBOUND_POST_DEADLINE_SECONDS = 1
    started = time.monotonic()
    with pytest.raises(outbound.TimedOut):
        outbound.post_json(server.base + "/slow", {}, timeout=60)
    assert time.monotonic() - started < 2.5


def test_a_body_over_the_cap_is_refused(server, settings):
    settings.OUTBOUND_MAX_BYTES = 10
    with pytest.raises(outbound.TooLarge):
        outbound.post_json(server.base + "/", {}, timeout=2)


def test_failures_open_the_breaker_and_name_no_header(settings, caplog):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    settings.OUTBOUND_BREAKER_FAILURES = 2
    url = f"http://127.0.0.1:{closed_port()}/v1/chat/completions"
    errors = []
    with caplog.at_level(logging.DEBUG):
        for _ in range(3):
            with pytest.raises(outbound.OutboundError) as failed:
                outbound.post_json(url, {}, timeout=2, headers={"Authorization": f"Bearer {KEY}"})
            errors.append(failed.value)
    assert isinstance(errors[0], outbound.ConnectFailed) and isinstance(errors[-1], outbound.CircuitOpen)
    assert all(KEY not in f"{error.detail} {error.category}" for error in errors)
    assert KEY not in caplog.text
