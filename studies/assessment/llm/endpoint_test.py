"""'Test this endpoint' on the LLM assessor's page: one tiny chat-completions request with the stored settings
(endpoint, model, key), through the same outbound guard as a run (address rules, OUTBOUND_ALLOW, one total
deadline, the lab's breaker), and its outcome in plain words. Never the key: it is sent, not shown, and an
answer that echoes it has it blanked out. Nothing is kept and no token counts toward a run's caps."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from django.views.decorators.debug import sensitive_variables

from sessionlab import outbound
from studies.assessment.llm.client import answer_excerpt, chat_request_body, chat_url
from studies.assessment.llm.keys import api_key_decrypt
from studies.errors import AssessmentError
from studies.models import LLMAssessor

# A page waits for the answer: at most this long, or the assessor's own timeout when shorter.
ENDPOINT_TEST_DEADLINE_SECONDS = 15
PROBE = [{"role": "user", "content": "Reply with the single word: ok"}]


@dataclass(frozen=True)
class EndpointTest:
    ok: bool
    summary: str  # what happened, in plain words
    excerpt: str = ""  # the start of an answer that was no chat completion


@sensitive_variables("api_key", "headers")
def llm_endpoint_test(*, assessor: LLMAssessor) -> EndpointTest:
    study = assessor.membership.study
    try:
        api_key = api_key_decrypt(assessor.api_key_encrypted)
    except AssessmentError as error:  # stored under another LLM_KEY_SECRET
        return EndpointTest(False, f"Not sent: {error}")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    body = chat_request_body(model=assessor.model_name, messages=PROBE, max_tokens=5, temperature=0.0)
    deadline = min(assessor.timeout_seconds, ENDPOINT_TEST_DEADLINE_SECONDS)
    started = time.monotonic()
    try:
        response = outbound.post_json(
            chat_url(assessor.endpoint_url),
            body,
            timeout=deadline,
            headers=headers,
            scope=f"study:{study.pk}",
        )
    except outbound.TimedOut:
        return EndpointTest(False, f"Timed out: no answer within {deadline} s.")
    except (outbound.AddressRefused, outbound.UrlRefused, outbound.RedirectRefused) as error:
        return EndpointTest(
            False,
            f"Refused before anything was sent: {error.category}. A server on this machine or a private "
            "network must be named in OUTBOUND_ALLOW (docs/security.md, “Outbound HTTP”).",
        )
    except outbound.CircuitOpen as error:
        return EndpointTest(False, f"Not sent: {error.category}, after failures in a row to this endpoint.")
    except outbound.OutboundError as error:
        return EndpointTest(False, f"No answer: {error.category}.")
    latency_ms = int((time.monotonic() - started) * 1000)
    text = response.body.decode("utf-8", errors="replace")
    if api_key:
        text = text.replace(api_key, "[the API key]")
    try:
        data = json.loads(text)
        content = data["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise TypeError("content is not text")
    except (ValueError, KeyError, IndexError, TypeError):
        return EndpointTest(
            False, f"Not a chat answer: HTTP {response.status} after {latency_ms} ms.", answer_excerpt(text)
        )
    if response.status != 200:
        return EndpointTest(False, f"Not a chat answer: HTTP {response.status}.", answer_excerpt(text))
    model = data.get("model") if isinstance(data.get("model"), str) else ""
    model = answer_excerpt(model)[:100] or assessor.model_name
    return EndpointTest(True, f"OK: model {model} answered in {latency_ms} ms.")
