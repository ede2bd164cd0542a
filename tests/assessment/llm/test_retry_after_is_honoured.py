"""A 429 or 503 with a Retry-After header (seconds, or an HTTP date) makes the run wait that long before the
next attempt instead of its own backoff, at most LLM_RETRY_AFTER_MAX_SECONDS, and the request row's error
text says what the server asked and what the run waited."""

import email.utils
from datetime import UTC, datetime, timedelta

import pytest

from studies.assessment.llm import runs
from studies.assessment.llm.client import retry_after_seconds
from studies.models import LLMRequest


@pytest.fixture
def waits(monkeypatch):
    """The retry waits the run took (the rate limit's tiny paces left out)."""
    taken = []
    monkeypatch.setattr(runs.time, "sleep", lambda seconds: taken.append(seconds) if seconds >= 0.5 else None)
    return taken


def errors(run):
    return list(
        LLMRequest.objects.filter(run=run).exclude(error="").order_by("id").values_list("error", flat=True)
    )


def test_a_429_s_retry_after_in_seconds_is_the_wait(llm_assessor, model_server, run_llm, waits, settings):
    settings.LLM_RETRY_BACKOFF_SECONDS = 7  # not this: the server said 3
    model_server.script = [("status", 429, "3")]
    run = run_llm(llm_assessor)
    assert waits == [3.0]
    assert errors(run) == ["HTTP 429; Retry-After 3 s, waited 3 s"]
    assert (run.status, run.done, run.failed) == ("done", 3, 0)


def test_a_503_s_retry_after_as_an_http_date_is_honoured(llm_assessor, model_server, run_llm, waits):
    when = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    model_server.script = [("status", 503, when)]
    run = run_llm(llm_assessor)
    assert len(waits) == 1 and 27 <= waits[0] <= 30
    assert errors(run)[0].startswith("HTTP 503; Retry-After 2") or errors(run)[0].startswith(
        "HTTP 503; Retry-After 3"
    )


def test_a_long_retry_after_is_capped(llm_assessor, model_server, run_llm, waits, settings):
    settings.LLM_RETRY_AFTER_MAX_SECONDS = 5
    model_server.script = [("status", 429, "3600")]
    run = run_llm(llm_assessor)
    assert waits == [5.0]
    assert errors(run) == ["HTTP 429; Retry-After 3600 s, waited 5 s (capped at 5 s)"]


def test_the_last_attempt_s_retry_after_is_recorded_without_a_wait(
    llm_assessor, model_server, run_llm, waits
):
    model_server.script = [("status", 429, "2")] * 3  # max_retries=2: three attempts, all refused
    run = run_llm(llm_assessor)
    assert waits == [2.0, 2.0]
    assert errors(run)[-1] == "HTTP 429; Retry-After 2 s, no attempt left"
    assert (run.done, run.failed) == (2, 1)


def test_without_the_header_the_backoff_applies(llm_assessor, model_server, run_llm, waits, settings):
    settings.LLM_RETRY_BACKOFF_SECONDS = 1
    model_server.script = [("status", 429)]
    run = run_llm(llm_assessor)
    assert waits == [1.0]
    assert errors(run) == ["HTTP 429"]


def test_a_retry_after_on_another_status_is_not_read(llm_assessor, model_server, run_llm, waits, settings):
    settings.LLM_RETRY_BACKOFF_SECONDS = 1
    model_server.script = [("status", 500, "40")]
    run = run_llm(llm_assessor)
    assert waits == [1.0]
    assert errors(run) == ["HTTP 500"]


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("120", 120.0),
        (" 5 ", 5.0),
        ("Sun, 29 Nov 2026 12:00:30 GMT", 30.0),
        ("Sun, 29 Nov 2026 11:59:00 GMT", 0.0),  # past: no wait
        ("soon", None),
        ("-3", None),
        ("1.5", None),  # RFC 9110: delay-seconds is an integer
        (None, None),
    ],
)
def test_retry_after_reads_seconds_and_http_dates(header, seconds):
    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds(header, now=now) == seconds
