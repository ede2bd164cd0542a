"""A generative system answering a question (docs/generative-systems.md): retrieval by one of the
study's search systems, then an answer with citations from one of three answerers:

- `extractive` (the default): the sentences of the top passages that best match the question, each cited;
  no model, no server, deterministic (the demo, the tests, a laptop);
- `rag`: the passages with their document ids put into the prompt template, the answer from an
  OpenAI-compatible chat-completions endpoint (POST <endpoint_url>/chat/completions);
- `service`: the lab's own RAG service over HTTP (POST <url>, the JSON protocol in the docs), which
  retrieves for itself.

Every call to another server goes through sessionlab.outbound (its address rules, one total deadline, the
breaker keyed by the study). Never raises for a participant: a failure is an outcome with a category, and the
participant is asked to try again.
"""

from __future__ import annotations

import hashlib
import logging
import time
import urllib.parse
from dataclasses import dataclass, field

from django.views.decorators.debug import sensitive_variables

from sessionlab import outbound
from studies.models import Document, System
from studies.search.engines.answers import (
    DEFAULT_PROMPT,
    Answer,
    AnswerRefused,
    Passage,
    answer_checked,
    chat_content,
    extractive_answer,
    prompt_build,
    service_answer_parse,
)
from studies.search.generative_config import HISTORY_TURNS, setting
from studies.search.generative_keys import key_for
from studies.search.systems import system_search

logger = logging.getLogger(__name__)


@dataclass
class TurnOutcome:
    """What came of one question. `error` (a category) is set when there is no answer to show."""

    answerer: str
    answer: Answer | None = None
    passages: list[Passage] = field(default_factory=list)
    prompt: str = ""
    error: str = ""
    latency_ms: int = 0
    model: str = ""


def retrieval_problem(system: System) -> str | None:
    """Why the system's retrieval cannot run (the set-up checklist asks it): the code it names is no search
    system of the study's, or is itself generative or external."""
    if system.config.get("answerer", "extractive") == "service":
        return None
    code = system.config.get("retrieval")
    found = System.objects.filter(study_id=system.study_id, code=code).first()
    if found is None:
        return f"retrieval: the study has no system {code!r}"
    if found.backend not in (System.Backend.BUILTIN, System.Backend.HTTP):
        return f"retrieval: {code!r} is a {found.get_backend_display().lower()} system, not a search engine"
    return None


def _passages(system: System, question: str) -> tuple[list[Passage], str]:
    """The top k passages of the retrieval system, each its document's title and first passage_chars of text
    (documents outside the collection left out); or an error category."""
    problem = retrieval_problem(system)
    if problem:
        logger.error("generative system %s of study %s: %s", system.code, system.study_id, problem)
        return [], "not set up"
    retrieval = System.objects.select_related("study__collection").get(
        study_id=system.study_id, code=system.config["retrieval"]
    )
    page = system_search(system=retrieval, query=question, page=1)
    if page.unavailable or (page.error and not page.results):
        return [], f"retrieval {page.detail or 'failed'}"
    hits = page.results[: int(setting(system.config, "k"))]
    collection_id = retrieval.study.collection_id
    if collection_id is None:
        return [], "not set up"
    texts = {
        d.external_id: d
        for d in Document.objects.filter(
            collection_id=collection_id, external_id__in=[h.doc_id for h in hits]
        )
    }
    chars = int(setting(system.config, "passage_chars"))
    passages = []
    for hit in hits:
        document = texts.get(hit.doc_id)
        if document is not None:
            passages.append(Passage(hit.doc_id, document.title[:300], document.text[:chars]))
    return passages, ""


def _known(system: System, ids: list[str]) -> set[str]:
    collection_id = system.study.collection_id
    if collection_id is None:
        return set()
    return set(
        Document.objects.filter(collection_id=collection_id, external_id__in=ids).values_list(
            "external_id", flat=True
        )
    )


@sensitive_variables("api_key", "headers")
def _rag(system: System, question: str, passages: list[Passage], history, outcome: TurnOutcome) -> None:
    config = system.config
    outcome.model = config["model"].strip()
    outcome.prompt = prompt_build(config.get("prompt_template", DEFAULT_PROMPT), question, passages, history)
    api_key = key_for(system.api_key_encrypted, config["endpoint_url"])
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    parts = urllib.parse.urlsplit(config["endpoint_url"])
    url = urllib.parse.urlunsplit(
        (parts.scheme, parts.netloc, parts.path.rstrip("/") + "/chat/completions", "", "")
    )
    body = {
        "model": outcome.model,
        "messages": [{"role": "user", "content": outcome.prompt}],
        "temperature": float(setting(config, "temperature")),
        "max_tokens": int(setting(config, "max_tokens")),
        "stream": False,
    }
    response = outbound.post_json(
        url,
        body,
        timeout=float(setting(config, "timeout")),
        headers=headers,
        scope=f"study:{system.study_id}",
    )
    outcome.answer = chat_content(response.status, response.body, passages, model=outcome.model)


def _service(system: System, question: str, history, outcome: TurnOutcome) -> None:
    payload = {
        "query": question,
        "history": [{"question": q, "answer": a} for q, a in history],
        "k": int(setting(system.config, "k")),
    }
    response = outbound.post_json(
        system.config["url"],
        payload,
        timeout=float(setting(system.config, "timeout")),
        scope=f"study:{system.study_id}",
    )
    outcome.answer = service_answer_parse(response.status, response.body)
    outcome.model = outcome.answer.model


def generative_answer(
    *, system: System, question: str, history: list[tuple[str, str]] | None = None
) -> TurnOutcome:
    """`system`'s answer to `question` after the earlier turns `history` ((question, answer), oldest first);
    call it outside any transaction: a model may take its whole deadline. The answer's cited and retrieved
    ids are checked against the study's collection, item by item."""
    config = system.config or {}
    answerer = config.get("answerer", "extractive")
    outcome = TurnOutcome(answerer, model="extractive" if answerer == "extractive" else "")
    history = list(history or [])[-HISTORY_TURNS:]
    started = time.monotonic()
    try:
        if answerer == "service":
            _service(system, question, history, outcome)
        else:
            outcome.passages, outcome.error = _passages(system, question)
            if not outcome.error:
                if answerer == "rag":
                    _rag(system, question, outcome.passages, history, outcome)
                else:
                    outcome.answer = extractive_answer(question, outcome.passages)
    except outbound.OutboundError as error:
        logger.warning(
            "generative system %s of study %s: %s (%s)",
            system.code,
            system.study_id,
            error.category,
            error.detail,
        )
        outcome.error = error.category
    except AnswerRefused as error:
        logger.warning(
            "generative system %s of study %s answered badly: %s", system.code, system.study_id, error.detail
        )
        outcome.error = error.category
    if outcome.answer is not None:
        answer = outcome.answer
        outcome.answer = answer_checked(answer, _known(system, answer.retrieved + answer.cited))
    outcome.latency_ms = int((time.monotonic() - started) * 1000)
    return outcome


def prompt_sha256(prompt: str) -> str:
    return hashlib.sha256(prompt.encode()).hexdigest()
