"""A target (host:port) that failed OUTBOUND_BREAKER_FAILURES times in a row is not called for
OUTBOUND_BREAKER_COOLDOWN_SECONDS: the call fails at once with "circuit open (retry in N s)" and the server
receives nothing; then one trial call decides (success closes it, failure opens it again). The state is in
the Django cache, shared by the nodes; a cache that fails turns the breaker off instead of failing calls."""

import pytest
from django.core.cache import cache

from sessionlab import outbound

from .local_servers import serving


@pytest.fixture
def failing(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    settings.OUTBOUND_BREAKER_FAILURES = 3
    settings.OUTBOUND_BREAKER_COOLDOWN_SECONDS = 60
    with serving() as server:
        server.answer = (500, "oops")
        yield server


def test_after_n_failures_the_target_is_skipped_without_a_connection(failing):
    for _ in range(3):
        assert outbound.fetch(failing.base + "/").status == 500
    with pytest.raises(outbound.CircuitOpen) as skipped:
        outbound.fetch(failing.base + "/")
    assert len(failing.paths) == 3
    assert skipped.value.category == "circuit open (retry in 60 s)"


def test_after_the_cool_down_one_trial_call_decides(failing, monkeypatch):
    for _ in range(3):
        outbound.fetch(failing.base + "/")
    now = outbound.time.time()
    monkeypatch.setattr(outbound.time, "time", lambda: now + 61)
    # The trial fails: open again, for a new cool-down.
    assert outbound.fetch(failing.base + "/").status == 500
    with pytest.raises(outbound.CircuitOpen):
        outbound.fetch(failing.base + "/")
    assert len(failing.paths) == 4
    monkeypatch.setattr(outbound.time, "time", lambda: now + 122)
    failing.answer = (200, "[]")
    assert outbound.fetch(failing.base + "/").status == 200  # the trial succeeds: closed
    assert outbound.fetch(failing.base + "/").status == 200
    assert len(failing.paths) == 6


def test_while_one_node_makes_the_trial_call_the_others_wait(failing, monkeypatch):
    for _ in range(3):
        outbound.fetch(failing.base + "/")
    now = outbound.time.time()
    monkeypatch.setattr(outbound.time, "time", lambda: now + 61)
    cache.add(f"outbound:breaker:|127.0.0.1:{failing.port}:trial", 1, 60)  # another node's trial, under way
    with pytest.raises(outbound.CircuitOpen):
        outbound.fetch(failing.base + "/")
    assert len(failing.paths) == 3


def test_a_success_clears_the_count(failing):
    for _ in range(2):
        outbound.fetch(failing.base + "/")
    failing.answer = (200, "[]")
    outbound.fetch(failing.base + "/")
    failing.answer = (500, "oops")
    for _ in range(2):
        outbound.fetch(failing.base + "/")
    assert outbound.fetch(failing.base + "/").status == 500  # 2 + 1 in a row, not 4: still called
    assert len(failing.paths) == 6


def test_refusals_of_ours_are_not_the_target_s_failures(settings):
    settings.OUTBOUND_BREAKER_FAILURES = 1
    for _ in range(3):
        with pytest.raises(outbound.AddressRefused):
            outbound.fetch("http://127.0.0.1:9/")


def test_a_cache_that_fails_turns_the_breaker_off_not_the_call(failing, monkeypatch):
    def broken(*args, **kwargs):
        raise ConnectionError("cache down")

    for name in ("get", "set", "add", "delete", "delete_many"):
        monkeypatch.setattr(cache, name, broken)
    for _ in range(5):
        assert outbound.fetch(failing.base + "/").status == 500
    assert len(failing.paths) == 5
