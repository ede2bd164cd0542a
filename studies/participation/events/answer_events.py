"""A generative session's query event (event_handlers.on_query asks here): the turn the page was answered
(answer_turns.py) named by its id, its cited documents as the query's shown results, ranked 1..n in the order
first cited, so that opening and judging a cited document are the results page's own events; the turn is
linked to the query it became. Reads and one UPDATE only, in the batch's transaction."""

from __future__ import annotations

from collections.abc import Mapping

from studies.errors import Refused
from studies.models import AnswerTurn, System
from studies.participation.events.event_checks import CLIENT_ID
from studies.participation.events.ingest_batch import Batch, SessionState
from studies.search.engines.search import Hit, SearchPage

SNIPPET_CHARS = 300
NO_TURN = "data.turn: the id of the answer this question was given (a generative system answers first)"


def is_generative(batch: Batch, state: SessionState) -> bool:
    return batch.system_rows[state.system_id][3] == System.Backend.GENERATIVE


def turn_of(state: SessionState, data: Mapping) -> AnswerTurn:
    """The session's answered turn the event names, not logged as a query yet; Refused otherwise."""
    turn_id = data.get("turn")
    if not isinstance(turn_id, str) or not CLIENT_ID.match(turn_id):
        raise Refused(NO_TURN)
    turn = (
        AnswerTurn.objects.filter(session_id=state.id, client_turn_id=turn_id, status=AnswerTurn.Status.OK)
        .only("id", "citations", "passages", "query_id")
        .first()
    )
    if turn is None:
        raise Refused(f"data.turn: no answer {turn_id!r} in this task")
    if turn.query_id is not None:
        raise Refused(f"data.turn: answer {turn_id!r} is logged already")
    return turn


def turn_page(turn: AnswerTurn) -> SearchPage:
    """The cited documents as a page of results (title None: the document's own; snippet: its passage)."""
    passages = {p.get("doc"): p.get("text", "") for p in turn.passages if isinstance(p, dict)}
    cited = list(dict.fromkeys(c["doc"] for c in turn.citations))
    hits = [
        Hit(doc, rank, None, None, (passages.get(doc) or "")[:SNIPPET_CHARS])  # type: ignore[arg-type]
        for rank, doc in enumerate(cited, 1)
    ]
    return SearchPage(hits, len(hits), 1, page_size=max(10, len(hits)))


def turn_link(turn: AnswerTurn, query_id: int) -> None:
    AnswerTurn.objects.filter(pk=turn.pk, query__isnull=True).update(query_id=query_id)
