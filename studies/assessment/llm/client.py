"""One request to an OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp's server, hosted
services): POST <endpoint>/chat/completions through sessionlab.outbound (the search systems' address rules),
and what came of it, whatever that was. Never raises for the server's failings: they are outcomes to keep."""

from __future__ import annotations

import email.utils
import json
import re
import time
import urllib.parse
from dataclasses import dataclass
from datetime import UTC, datetime

from django.views.decorators.debug import sensitive_variables

from sessionlab import outbound
from studies.assessment.llm.prompts import grade_parse
from studies.models import LLMRequest

Status = LLMRequest.Status
# Worth another attempt: the server may answer next time (rate limited, overloaded, slow, restarting).
TRANSIENT = frozenset({Status.HTTP_ERROR, Status.TIMEOUT, Status.UNREACHABLE})
RETRY_HTTP = frozenset({408, 409, 429}) | frozenset(range(500, 600))
# The answers whose Retry-After header says when to ask again (RFC 9110, 10.2.3).
RETRY_AFTER_HTTP = frozenset({429, 503})
# What a model's answer may leave in a kept request (docs/security.md, "Language-model assessors"): at most
# ANSWER_MAX_CHARS of text (the rest is cut, saying so), token counts from 0 to TOKENS_MAX (any other
# count is kept as 0), and text without NUL or lone surrogates (each becomes U+FFFD).
ANSWER_MAX_CHARS = 20_000
TOKENS_MAX = 10_000_000
# What is kept of an answer that is no chat completion (an error page, another service's JSON on the path):
# a category and this short an excerpt, so that the endpoint cannot be used to read another service.
EXCERPT_MAX_CHARS = 200


@dataclass
class Outcome:
    status: str
    raw_answer: str = ""
    model_grade: int | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0
    http_status: int | None = None
    error: str = ""
    retry_after: float | None = None  # seconds, from a 429's or 503's Retry-After header

    @property
    def retryable(self) -> bool:
        if self.status == Status.HTTP_ERROR:
            return self.http_status in RETRY_HTTP
        return self.status in TRANSIENT


def chat_url(endpoint_url: str) -> str:
    """The base URL's path + /chat/completions, whatever else the URL carries: a query or fragment (refused
    at set-up) is dropped here too, so it can never cut the chat path off."""
    parts = urllib.parse.urlsplit(endpoint_url)
    path = parts.path.rstrip("/") + "/chat/completions"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def chat_request_body(*, model: str, messages: list[dict], max_tokens: int, temperature: float) -> dict:
    return {
        "model": model,
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stream": False,
    }


@sensitive_variables("api_key", "headers")  # an error report shows locals: never the key
def chat_complete(*, endpoint_url: str, api_key: str, body: dict, timeout: float, scope: str = "") -> Outcome:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    started = time.monotonic()
    try:
        response = outbound.post_json(
            chat_url(endpoint_url), body, timeout=timeout, headers=headers, scope=scope
        )
    except outbound.OutboundError as error:
        outcome = Outcome(_status_of(error), error=error.category)
    else:
        outcome = _answer(response.status, response.body)
        if response.status in RETRY_AFTER_HTTP:
            outcome.retry_after = retry_after_seconds(response.retry_after)
    outcome.latency_ms = int((time.monotonic() - started) * 1000)
    return outcome


def retry_after_seconds(header: str | None, *, now: datetime | None = None) -> float | None:
    """A Retry-After header's wait in seconds: a number of seconds, or an HTTP date (how long until then, 0 if
    past). None for no header or one that is neither (the run's own backoff applies)."""
    if header is None:
        return None
    value = header.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is in GMT; parsedate_to_datetime leaves "-0000" naive
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _status_of(error: outbound.OutboundError) -> str:
    if isinstance(error, outbound.TimedOut):
        return Status.TIMEOUT
    if isinstance(error, outbound.AddressRefused | outbound.UrlRefused | outbound.RedirectRefused):
        return Status.REFUSED
    if isinstance(error, outbound.ConnectFailed | outbound.TlsFailed | outbound.CircuitOpen):
        return Status.UNREACHABLE
    return Status.HTTP_ERROR  # not HTTP, too large


# NUL and lone surrogates (which JSON's \\ud800 escapes let through): a database refuses to keep them.
UNKEEPABLE = re.compile("[\x00\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` as a database keeps it: NUL and lone surrogates become U+FFFD."""
    return UNKEEPABLE.sub("\ufffd", text)


def _cut(text: str) -> str:
    """At most ANSWER_MAX_CHARS of `text`, cleaned: cut first, so a 5 MB answer is not cleaned whole."""
    if len(text) <= ANSWER_MAX_CHARS:
        return clean_text(text)
    return clean_text(text[:ANSWER_MAX_CHARS]) + f"\n[cut: {len(text)} characters, {ANSWER_MAX_CHARS} kept]"


def answer_excerpt(text: str) -> str:
    """The first EXCERPT_MAX_CHARS of a non-chat answer, cleaned, saying how much more there was."""
    if len(text) <= EXCERPT_MAX_CHARS:
        return clean_text(text)
    return (
        clean_text(text[:EXCERPT_MAX_CHARS]) + f"\n[excerpt: {EXCERPT_MAX_CHARS} of {len(text)} characters]"
    )


def _answer(http_status: int, body: bytes) -> Outcome:
    """What came back, as an outcome: whatever the body holds, never an exception (a hostile answer is one
    malformed request, not a failed run)."""
    try:
        return _answer_read(http_status, body)
    except Exception as error:  # noqa: BLE001 (an answer no rule above foresaw)
        return Outcome(
            Status.MALFORMED,
            raw_answer=answer_excerpt(body.decode("utf-8", errors="replace")),
            http_status=http_status,
            error=f"unreadable answer: {type(error).__name__}",
        )


def _answer_read(http_status: int, body: bytes) -> Outcome:
    text = body.decode("utf-8", errors="replace")
    if http_status != 200:
        return Outcome(
            Status.HTTP_ERROR,
            raw_answer=answer_excerpt(text),
            http_status=http_status,
            error=f"HTTP {http_status}",
        )
    try:
        data = json.loads(text)
        content = data["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise TypeError("content is not text")
    except (ValueError, KeyError, IndexError, TypeError) as error:
        return Outcome(
            Status.MALFORMED,
            raw_answer=answer_excerpt(text),
            http_status=200,
            error=f"not a chat completion ({type(error).__name__})",
        )
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    tokens_in, tokens_out = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    content = _cut(content)
    grade = grade_parse(content)
    if grade is None:
        return Outcome(
            Status.MALFORMED,
            raw_answer=content,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            http_status=200,
            error='no single "##final score: N" with N in 0-3 in the answer',
        )
    return Outcome(
        Status.OK,
        raw_answer=content,
        model_grade=grade,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        http_status=200,
    )


def _count(value) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= TOKENS_MAX
    return value if ok else 0
