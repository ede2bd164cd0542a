"""The same batch sent twice at the same moment (the page's beacon and its fetch, or a retry racing the first
try) is stored once and answered the same way both times: the session's lock is taken first, and the reads
after it see what the batch that held it stored. PostgreSQL only: SQLite serialises writers on its own."""

import threading

import pytest
from django.db import connection, connections

from studies.models import Event, Judgment, JudgmentChange, Query, ShownResult
from studies.participation.way.steps import events_ingest

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs two connections writing at once: PostgreSQL (CI's second pass)",
    ),
]


def _at_once(participant, batch):
    """Two threads, each with its own connection, ingest `batch` together; returns both answers."""
    barrier, answers, errors = threading.Barrier(2), [None, None], []

    def send(slot):
        try:
            barrier.wait(timeout=10)
            answers[slot] = events_ingest(participant=participant, events=batch)
        except Exception as exc:  # noqa: BLE001 (reported by the test below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    return answers


def test_a_batch_sent_twice_at_once_is_stored_once_and_answered_alike(participant, session):
    first = events_ingest(
        participant=participant,
        events=[{"id": "q0", "type": "query", "session": session.pk, "data": {"text": "wing"}}],
    )
    doc = first[0]["results"][0]["doc"]
    for round_ in range(8):
        batch = [
            {"id": f"q{round_}-1", "type": "query", "session": session.pk, "data": {"text": "heat transfer"}},
            {
                "id": f"p{round_}",
                "type": "results_page",
                "session": session.pk,
                "data": {"query_event": "q0", "page": 2 + round_ % 2},
            },
            {
                "id": f"o{round_}",
                "type": "document_open",
                "session": session.pk,
                "data": {"doc": doc, "query_event": "q0", "rank": 1},
            },
            {
                "id": f"j{round_}",
                "type": "judgment",
                "session": session.pk,
                "data": {"doc": doc, "grade": round_ % 4},
            },
            {
                "id": f"m{round_}",
                "type": "scan_mark",
                "session": session.pk,
                "data": {"query_event": "q0", "rank": 5},
            },
        ]
        one, other = _at_once(participant, batch)
        assert one == other and all(ack["ok"] for ack in one)
    assert (
        Event.objects.filter(participant=participant, client_event_id__regex=r"^[qpojm]").count() == 1 + 8 * 5
    )
    assert Query.objects.filter(session=session).count() == 1 + 8
    assert (
        ShownResult.objects.filter(query__session=session).count() == 10 * (1 + 8) + 10 + 5
    )  # pages 2 and 3
    judgment = Judgment.objects.get(session=session)
    assert judgment.grade == 7 % 4
    assert list(
        JudgmentChange.objects.filter(judgment=judgment).order_by("id").values_list("grade", flat=True)
    ) == [0, 1, 2, 3, 0, 1, 2, 3]
