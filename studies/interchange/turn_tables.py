"""The tidy CSV's tables of a generative system's turns (docs/generative-systems.md): turns.csv, a
row per question asked (answered or failed), and citations.csv, a row per citation of an answer with its
place in the text; after the design columns of tidy_csv.DESIGN. A turn's `query` is the position of the query
it became (empty for a failed turn, which became none); `rank` is the cited document's rank among that
query's shown results."""

from __future__ import annotations

import json
from collections import defaultdict

from studies.models import AnswerTurn

TURN_TABLES = {
    "turns": [
        "query",
        "turn",
        "asked_at",
        "question",
        "status",
        "error",
        "answerer",
        "model",
        "latency_ms",
        "tokens_in",
        "tokens_out",
        "answer",
        "cited",
        "retrieved",
        "prompt_sha256",
        "refused",
    ],
    "citations": ["query", "turn", "citation", "doc", "rank", "start", "end", "marker"],
}


def turns_of(scope: list[int]) -> dict[int, list[AnswerTurn]]:
    """session id -> its turns in the order asked, read in one query."""
    turns = defaultdict(list)
    for turn in (
        AnswerTurn.objects.filter(session__in=scope)
        .select_related("query", "prompt")
        .defer("passages", "prompt__text")
        .order_by("session_id", "asked_at", "id")
    ):
        turns[turn.session_id].append(turn)
    return turns


def _query(turn: AnswerTurn):
    return turn.query.position if turn.query is not None else ""


def turn_rows(name: str, turns: list[AnswerTurn]) -> list[list]:
    """The cells after the design columns of table `name` ("turns" or "citations") for a session's turns."""
    rows = []
    for turn in turns:
        cited = list(dict.fromkeys(c.get("doc") for c in turn.citations))
        if name == "turns":
            rows.append(
                [
                    _query(turn),
                    turn.client_turn_id,
                    turn.asked_at.isoformat(),
                    turn.question,
                    turn.status,
                    turn.error,
                    turn.answerer,
                    turn.model_name,
                    turn.latency_ms,
                    turn.tokens_in,
                    turn.tokens_out,
                    turn.answer_text,
                    ";".join(cited),
                    ";".join(turn.retrieved),
                    turn.prompt.sha256 if turn.prompt is not None else "",
                    json.dumps(turn.refused) if turn.refused else "",
                ]
            )
        else:
            for n, citation in enumerate(turn.citations, 1):
                doc = citation.get("doc")
                rows.append(
                    [
                        _query(turn),
                        turn.client_turn_id,
                        n,
                        doc,
                        cited.index(doc) + 1,
                        "" if citation.get("start") is None else citation["start"],
                        "" if citation.get("end") is None else citation["end"],
                        citation.get("marker", ""),
                    ]
                )
    return rows
