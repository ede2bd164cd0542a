"""The search page opened again (a reload, another device) on a session that already has queries.

`search_state` reads what the page showed: the last query that was answered, the result page shown last for it
(with its results, as the query's acknowledgement carries them) and the grades given; the page renders it as
it renders an acknowledgement, without logging a new query. `page_reload_record` logs the reload itself: it is
written by the server when it renders the page, so no script, blocked request or cleared outbox can lose it.
The two live together because the reload event is only logged when there is a state to restore.
"""

from __future__ import annotations

import uuid

from studies.models import Event, EventOrigin, Judgment, Query, SearchSession, ShownResult
from studies.participation.events.ingest import results_marked

RELOAD_EVENT = "page_reload"


def search_state(*, session: SearchSession) -> dict | None:
    """The state the search page restores, or None before the session's first answered query.

    {"query_event": the query's client event id (what later pages, judgments and scan marks name),
     "query_text", "query": its position, "page", "total", "message", "query_used",
     "results": [{"rank", "doc", "title", "snippet", "text", "highlights"?}], "grades": {external id: grade}}

    The results carry the highlights their page was first answered with: the page's acknowledgement keeps them
    by rank (event_handlers.page_marks; ShownResult keeps none), and a revisit or a replay answers with the
    same ones."""
    events = Event.objects.filter(session=session, type__in=("query", "results_page")).order_by("-id")
    query_event = None
    page_ack: dict | None = None
    for client_event_id, event_type, payload in events.values_list(
        "client_event_id", "type", "payload"
    ).iterator():
        ack = (payload or {}).get("ack") or {}
        if not ack.get("ok") or "query_id" not in ack:
            continue
        if page_ack is None:
            page_ack = ack  # the last list shown: a page of the last query
        if event_type == "query" and ack.get("query_id") == page_ack.get("query_id"):
            query_event = client_event_id
            break
    if query_event is None or page_ack is None:  # (page_ack is set whenever query_event is)
        return None
    query = Query.objects.filter(pk=page_ack["query_id"], session=session).values("text", "position").first()
    if query is None:
        return None
    page = page_ack.get("page") or 1
    rows = (
        ShownResult.objects.filter(query_id=page_ack["query_id"], page=page)
        .order_by("rank")
        .values_list("rank", "document__external_id", "title", "snippet", "document__text")
    )
    grades = dict(Judgment.objects.filter(session=session).values_list("document__external_id", "grade"))
    return {
        "query_event": query_event,
        "query_text": query["text"],
        "query": query["position"],
        "page": page,
        "total": page_ack.get("total"),
        "message": page_ack.get("message") or "",
        "query_used": page_ack.get("query_used"),
        "results": results_marked(
            [
                {"rank": rank, "doc": doc, "title": title, "snippet": snippet, "text": text}
                for rank, doc, title, snippet, text in rows
            ],
            page_ack.get("highlights"),
        ),
        "grades": grades,
    }


def page_reload_record(*, session: SearchSession, state: dict, user_agent: str = "") -> Event:
    """Log one reload of the search page: server time only (no client time, no sequence number: the page's
    own counter is untouched), with what was restored."""
    return Event.objects.create(
        participant_id=session.assignment.participant_id,
        session=session,
        type=RELOAD_EVENT,
        client_event_id=f"server-reload-{uuid.uuid4().hex}",
        origin=EventOrigin.SERVER,
        payload={
            "data": {
                "source": "server",
                "query": state["query"],
                "page": state["page"],
                "judged": len(state["grades"]),
                "user_agent": user_agent[:300],
            },
            "ack": {"ok": True},
        },
    )
