"""THE idempotent form step. Every form of the participant's way (consent and its decline, the questionnaires
before the study, before and after a task, a session's start, a check's answer, the gold documents' answer) is
stored as one Event written by the server, once per client event id:

    stored? replay; check; write one event; on a race replay

A re-sent form (the same client event id) answers what the first one stored, whatever changed since; a
client's event holding the id is refused, never taken for the form's (docs/security.md). Two tabs sending the
same form at once: one wins the unique constraint on (participant, client event id), the other answers the
winner's acknowledgement. Each form service (form_steps.py, check_answers.py, gold.py) checks the client event
id and who may send at all first, then passes its own check and write here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from django.db import IntegrityError, transaction

from studies.errors import Refused
from studies.models import Event, EventOrigin, Participant, SearchSession
from studies.participation.events.rules import event_create

Checked = TypeVar("Checked")


@dataclass
class FormEvent:
    """The one Event a form writes: its type, what the form sent (`data`), what the server answers (`ack`),
    and the search session it belongs to (None before a session)."""

    type: str
    data: dict
    ack: dict
    session: SearchSession | None = None


def server_event_stored(participant: Participant, client_event_id: str) -> Event | None:
    """The server's event stored under this client id (a re-sent form answers its ack), or None. Refused when
    a client's event holds the id: its answer is never taken for the form's (docs/security.md)."""
    # Not its client time: a row stored before the client-time rule may hold one Python cannot read.
    event = (
        Event.objects.filter(participant=participant, client_event_id=client_event_id)
        .defer("client_time")
        .first()
    )
    if event is not None and event.origin != EventOrigin.SERVER:
        raise Refused(f"client_event_id {client_event_id!r} is an event the page sent; use an id of its own.")
    return event


def server_ack_stored(participant: Participant, client_event_id: str) -> dict | None:
    event = server_event_stored(participant, client_event_id)
    return None if event is None else (event.payload.get("ack") or {"ok": True})


def form_step(
    *,
    participant: Participant,
    client_event_id: str,
    sequence: int | None,
    client_time,
    check: Callable[[], Checked],
    write: Callable[[Checked], FormEvent],
    after: Callable[[Checked, FormEvent], None] | None = None,
) -> dict:
    """Store one form as one server Event, once by its client event id; returns its acknowledgement.

    - stored: the ack stored under the id is answered, and nothing is checked or written again;
    - `check()` refuses (raises) or returns what `write` needs (the answers cleaned, the outcome scored);
    - in one transaction, `write(checked)` updates the form's rows and returns the FormEvent, which is stored
      here, then `after(checked, event)` (a screen-out the answer causes) runs; what `after` adds to the ack
      is answered but not stored (the row is written before it);
    - a concurrent duplicate (the same id at the same moment) loses on the unique constraint and answers the
      winner's stored ack; any other IntegrityError is raised.
    """
    stored = server_ack_stored(participant, client_event_id)
    if stored is not None:
        return stored
    checked = check()
    try:
        with transaction.atomic():
            event = write(checked)
            event_create(
                participant=participant,
                session=event.session,
                type=event.type,
                client_event_id=client_event_id,
                sequence=sequence,
                client_time=client_time,
                data=event.data,
                ack=event.ack,
            )
            if after is not None:
                after(checked, event)
            return event.ack
    except IntegrityError:
        replay = server_ack_stored(participant, client_event_id)
        if replay is None:
            raise
        return replay
