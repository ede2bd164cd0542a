"""One deadline covers a whole outbound call (OUTBOUND_DEADLINE_SECONDS; a caller's timeout may shorten it,
never lengthen it): a server that answers slowly, or trickles its answer a byte at a time, is cut off at it
and the call reads "timed out". The bound on the wall time below is generous on purpose."""

import time

import pytest

from sessionlab import outbound

from .local_servers import serving


@pytest.fixture
def slow_server(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    settings.OUTBOUND_DEADLINE_SECONDS = 0.5
    with serving() as server:
        yield server


@pytest.mark.parametrize("path", ["/slow", "/trickle", "/trickle-body"])
def test_a_slow_or_trickling_server_is_cut_at_the_deadline(slow_server, path):
    started = time.monotonic()
    with pytest.raises(outbound.TimedOut) as timed_out:
        outbound.fetch(slow_server.base + path)
    assert timed_out.value.category == "timed out"
    assert time.monotonic() - started < 2.5  # the server would take 3 s (slow) or 10 s (trickle)


@pytest.mark.parametrize("path", ["/trickle", "/trickle-body"])
def test_a_post_s_deadline_holds_against_a_trickle_too(slow_server, settings, path):
    settings.OUTBOUND_POST_DEADLINE_SECONDS = 1
    started = time.monotonic()
    with pytest.raises(outbound.TimedOut):
        outbound.post_json(slow_server.base + path, {"q": 1}, timeout=30)
    assert time.monotonic() - started < 3


def test_a_caller_s_timeout_cannot_lengthen_the_deadline(slow_server):
    started = time.monotonic()
    with pytest.raises(outbound.TimedOut):
        outbound.fetch(slow_server.base + "/slow", timeout=30)
    assert time.monotonic() - started < 2.5


def test_a_body_over_the_cap_is_refused(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    settings.OUTBOUND_MAX_BYTES = 100
    with serving() as server:
        server.answer = (200, "[" + ",".join(['{"id": "a"}'] * 50) + "]")
        with pytest.raises(outbound.TooLarge) as too_large:
            outbound.fetch(server.base + "/")
    assert too_large.value.category == "response too large"
