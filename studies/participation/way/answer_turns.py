"""A participant's turn with a generative system (docs/generative-systems.md): the question asked,
answered outside any transaction within the system's deadline, and the turn stored once under the page's id
for it, whatever came of it. The page then logs the turn as a query event (answer_events.py), whose shown
results are the cited documents, so that opening and judging a cited document are the results page's own
events.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from studies.errors import Refused
from studies.models import AnswerTurn, Document, Event, GenerationPrompt, SearchSession, System
from studies.participation.events.event_checks import CLIENT_ID
from studies.participation.events.rules import (
    participant_check_consented,
    session_deadline,
    session_expire_if_due,
)
from studies.search.generative import generative_answer, prompt_sha256

QUESTION_MAX_CHARS = 1000
TRY_AGAIN = "The answer is not available right now. Please try again in a moment."
TOO_MANY = "Please wait a moment before asking again."
NOT_GENERATIVE = "This task shows a list of results: search in the box above."


class TryAgain(Exception):
    """The participant may ask the same question again (a slow or failed answer, too many questions)."""

    def __init__(self, message: str, status: int = 503):
        super().__init__(message)
        self.message = message
        self.status = status


def _session_open(participant, session_id) -> SearchSession:
    participant_check_consented(participant)
    if not isinstance(session_id, int) or isinstance(session_id, bool):
        raise Refused("Which task is this? Reload the page.")
    session = (
        SearchSession.objects.select_related("assignment__system", "assignment__participant__study")
        .filter(pk=session_id, assignment__participant=participant)
        .first()
    )
    if session is None:
        raise Refused("This is not one of your tasks.")
    session_expire_if_due(session=session)
    if session.ended_at is not None:
        raise Refused("This task is finished.")
    if session.assignment.system.backend != System.Backend.GENERATIVE:
        raise Refused(NOT_GENERATIVE)
    return session


def turn_json(turn: AnswerTurn) -> dict:
    """What the page draws: the answer with its citations numbered by the cited documents' order (the ranks
    of the query event's shown results), their titles, and the follow-up suggestions."""
    if turn.status != AnswerTurn.Status.OK:
        return {"ok": False, "turn": turn.client_turn_id, "try_again": TRY_AGAIN}
    cited = list(dict.fromkeys(c["doc"] for c in turn.citations))
    rank = {doc: n for n, doc in enumerate(cited, 1)}
    collection_id = turn.session.assignment.participant.study.collection_id
    titles = (
        dict(
            Document.objects.filter(collection_id=collection_id, external_id__in=cited).values_list(
                "external_id", "title"
            )
        )
        if collection_id is not None
        else {}
    )
    return {
        "ok": True,
        "turn": turn.client_turn_id,
        "question": turn.question,
        "text": turn.answer_text,
        "citations": [
            {"doc": c["doc"], "rank": rank[c["doc"]], "start": c["start"], "end": c["end"]}
            for c in turn.citations
        ],
        "cited": [{"doc": doc, "rank": rank[doc], "title": titles.get(doc, "")} for doc in cited],
        "follow_ups": turn.follow_ups,
    }


def answer_turn_ask(*, participant, session_id, client_turn_id, question) -> dict:
    """Answer `question` in the participant's open generative session, once per `client_turn_id` (asked
    again, the stored turn is answered). Raises Refused (the page shows it) or TryAgain (a failed or slow
    answer, stored as a failed turn; or too many questions a minute, EVENTS_SEARCHES_PER_MINUTE)."""
    if not isinstance(client_turn_id, str) or not CLIENT_ID.match(client_turn_id):
        raise Refused("A turn id is 1..64 letters, digits or _.:-")
    text = " ".join(str(question if isinstance(question, str) else "").split())[:QUESTION_MAX_CHARS]
    if not text:
        raise Refused("Please type a question.")
    session = _session_open(participant, session_id)
    stored = AnswerTurn.objects.filter(session=session, client_turn_id=client_turn_id).first()
    if stored is not None:
        return turn_json(stored)
    now = timezone.now()
    recent = AnswerTurn.objects.filter(session=session, asked_at__gte=now - timedelta(minutes=1)).count()
    if recent >= settings.EVENTS_SEARCHES_PER_MINUTE:
        raise TryAgain(TOO_MANY, status=429)
    deadline = session_deadline(session)
    if deadline is not None and now >= deadline:
        raise Refused("The time for this task is up.")
    history = list(
        AnswerTurn.objects.filter(session=session, status=AnswerTurn.Status.OK)
        .order_by("asked_at", "id")
        .values_list("question", "answer_text")
    )
    outcome = generative_answer(system=session.assignment.system, question=text, history=history)
    turn = _turn_store(session, client_turn_id, text, now, outcome)
    if turn.status != AnswerTurn.Status.OK:
        raise TryAgain(TRY_AGAIN)
    return turn_json(turn)


def _turn_store(session, client_turn_id, text, asked_at, outcome) -> AnswerTurn:
    answer = outcome.answer
    ok = answer is not None and not outcome.error
    fields = {
        "asked_at": asked_at,
        "question": text,
        "status": AnswerTurn.Status.OK if ok else AnswerTurn.Status.FAILED,
        "error": outcome.error[:200],
        "passages": [{"doc": p.doc_id, "title": p.title, "text": p.text} for p in outcome.passages],
        "answerer": outcome.answerer,
        "model_name": outcome.model[:200],
        "latency_ms": max(0, min(outcome.latency_ms, 2**31 - 1)),
    }
    if ok and answer is not None:
        data = answer.as_json()
        fields |= {
            "answer_text": answer.text,
            "citations": data["citations"],
            "retrieved": answer.retrieved,
            "follow_ups": answer.follow_ups,
            "refused": answer.refused,
            "tokens_in": answer.tokens_in,
            "tokens_out": answer.tokens_out,
        }
    if outcome.prompt:
        fields["prompt"] = _prompt_kept(outcome.prompt)
    try:
        with transaction.atomic():
            return AnswerTurn.objects.create(session=session, client_turn_id=client_turn_id, **fields)
    except IntegrityError:  # the same turn asked twice at once: the first one stored is the answer
        return AnswerTurn.objects.get(session=session, client_turn_id=client_turn_id)


def _prompt_kept(prompt: str) -> GenerationPrompt:
    """The prompt's row, kept once by its hash (two turns storing one prompt at once: the first one's)."""
    sha256 = prompt_sha256(prompt)
    try:
        with transaction.atomic():
            return GenerationPrompt.objects.get_or_create(sha256=sha256, defaults={"text": prompt})[0]
    except IntegrityError:
        return GenerationPrompt.objects.get(sha256=sha256)


def session_turns(*, session: SearchSession) -> list[dict]:
    """The session's turns logged as queries, oldest first, as the page draws them, each with its query
    event's client id (what a citation's document_open names): a reload shows the conversation again."""
    turns = list(
        AnswerTurn.objects.filter(session=session, query__isnull=False)
        .select_related("session__assignment__participant__study")
        .order_by("asked_at", "id")
    )
    events = {}
    for client_event_id, payload in Event.objects.filter(session=session, type="query").values_list(
        "client_event_id", "payload"
    ):
        ack = (payload or {}).get("ack") or {}
        if ack.get("ok") and "query_id" in ack:
            events[ack["query_id"]] = client_event_id
    return [turn_json(turn) | {"query_event": events.get(turn.query_id)} for turn in turns]
