"""One time model (item 2; docs/time-model.md): every derived time is the event's client time plus
the session's estimate of the client's clock offset, taken from the batches' round trips (the least delay
wins); the server's receive time only where the client sent no usable time."""

import json
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.test import Client
from django.utils import timezone

from studies.models import Event, Judgment, JudgmentChange, Query, SearchSession, ShownResult
from studies.participation.events.clock import ClockRefused, Sample, is_better, sample_read

pytestmark = pytest.mark.django_db

WINDOW = timedelta(hours=24)
_real_now = timezone.now


@contextmanager
def server_clock_moved(by: timedelta):
    """The server's clock `by` later than the real one (a batch that arrives late)."""
    with mock.patch("django.utils.timezone.now", lambda: _real_now() + by):
        yield


def iso(moment: datetime) -> str:
    return moment.isoformat()


def post(participant, events, clock=None):
    body = {"events": events}
    if clock is not None:
        body["clock"] = clock
    response = Client().post(
        f"/p/{participant.access_token}/events/", json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def ev(session, cid, kind, at, **data):
    return {"id": cid, "type": kind, "session": session.pk, "time": iso(at), "data": data}


# --- the estimate ---------------------------------------------------------------------------------------


def test_a_round_trip_gives_the_offset_and_its_delay():
    t0 = datetime(2026, 11, 25, 10, 0, 0, tzinfo=UTC)  # the client's clock is 5 minutes behind the server's
    t1 = t0 + timedelta(minutes=5, milliseconds=40)
    t2 = t1 + timedelta(milliseconds=20)
    t3 = t0 + timedelta(milliseconds=100)
    now = t2 + timedelta(seconds=10)
    sample = sample_read(
        {
            "previous": {
                "sent": iso(t0),
                "server_received": iso(t1),
                "server_sent": iso(t2),
                "received": iso(t3),
            }
        },
        received_at=now,
        window=WINDOW,
    )
    assert sample == Sample(
        offset_ms=5 * 60_000, delay_ms=80.0
    )  # ((t1 - t0) + (t2 - t3)) / 2, (t3 - t0) - (t2 - t1)


def test_the_least_delay_wins_and_a_round_trip_beats_a_one_way_sample():
    assert is_better(Sample(10.0, 5.0), 12.0, 30.0)
    assert not is_better(Sample(10.0, 50.0), 12.0, 30.0)
    assert is_better(Sample(10.0, 50.0), 12.0, None)  # a round trip beats a one-way sample
    assert not is_better(Sample(9.0), 12.0, 30.0)  # and is never replaced by one
    assert is_better(Sample(9.0), 12.0, None) and not is_better(Sample(13.0), 12.0, None)
    assert is_better(Sample(13.0), None, None)


@pytest.mark.parametrize(
    "clock, field",
    [
        ({"sent": "yesterday"}, "clock.sent"),
        ({"sent": "1990-01-01T00:00:00Z"}, "clock.sent"),
        ({"previous": {"sent": "2026-11-25T10:00:00Z"}}, "clock.previous.server_received"),
        ([1, 2], "clock"),
    ],
)
def test_a_clock_that_cannot_be_a_sample_is_refused_naming_the_field(clock, field):
    with pytest.raises(ClockRefused, match=field.replace(".", r"\.")):
        sample_read(clock, received_at=datetime(2026, 11, 25, 10, 0, tzinfo=UTC), window=WINDOW)


# --- the timeline ---------------------------------------------------------------------------------------


def test_times_follow_the_clients_clock_corrected_by_the_batchs_offset(participant, session):
    behind = timedelta(minutes=5)  # the participant's clock is five minutes slow
    client_now = timezone.now() - behind
    typed = client_now - timedelta(seconds=30)
    opened = typed + timedelta(seconds=8)
    answer = post(
        participant,
        [
            ev(session, "q1", "query", typed, text="wing"),
            ev(session, "o1", "document_open", opened, doc="1", query=1, rank=1),
        ],
        clock={"sent": iso(client_now)},
    )
    assert [a["ok"] for a in answer["acks"]] == [True, True], answer
    assert set(answer["clock"]) == {"server_received", "server_sent"}
    session.refresh_from_db()
    assert 5 * 60_000 <= session.clock_offset_ms < 5 * 60_000 + 2_000 and session.clock_delay_ms is None
    offset = timedelta(milliseconds=session.clock_offset_ms)
    query = Query.objects.get(session=session)
    assert query.issued_at == typed + offset
    assert {r.shown_at for r in ShownResult.objects.filter(query=query)} == {typed + offset}
    # the click is 8 s after its query, on the same timeline
    event = Event.objects.get(client_event_id="o1")
    assert event.client_time + offset - query.issued_at == timedelta(seconds=8)


def test_a_better_round_trip_moves_every_derived_time_by_the_change(participant, session):
    now = timezone.now()
    post(
        participant,
        [ev(session, "q1", "query", now - timedelta(seconds=5), text="wing")],
        clock={"sent": iso(now - timedelta(seconds=1))},
    )  # one-way: offset about 1 s (a slow first request)
    session.refresh_from_db()
    first_offset, first_issued = session.clock_offset_ms, Query.objects.get(session=session).issued_at
    started = session.started_at
    t0 = timezone.now() - timedelta(seconds=1)  # the batch before, answered a second ago
    previous = {
        "sent": iso(t0),
        "server_received": iso(t0 + timedelta(milliseconds=10)),
        "server_sent": iso(t0 + timedelta(milliseconds=12)),
        "received": iso(t0 + timedelta(milliseconds=20)),
    }
    post(
        participant,
        [ev(session, "j1", "judgment", t0, doc="1", grade=2)],
        clock={"sent": iso(timezone.now()), "previous": previous},
    )
    session.refresh_from_db()
    assert session.clock_delay_ms == pytest.approx(18.0) and session.clock_offset_ms == pytest.approx(1.0)
    change = timedelta(milliseconds=session.clock_offset_ms) - timedelta(milliseconds=first_offset)
    assert Query.objects.get(session=session).issued_at == first_issued + change
    assert session.started_at == started + change
    assert Judgment.objects.get(session=session).created_at == t0 + timedelta(milliseconds=1)


def test_four_judgments_sent_together_keep_their_own_times(participant, session):
    now = timezone.now()
    post(participant, [ev(session, "q1", "query", now - timedelta(seconds=20), text="wing")])
    judged = [now - timedelta(seconds=5) + timedelta(milliseconds=1200 * n) for n in range(4)]
    answer = post(
        participant,
        [
            ev(session, f"j{n}", "judgment", at, doc=str(n + 1), grade=n % 2 + 1)
            for n, at in enumerate(judged)
        ],
    )
    assert all(a["ok"] for a in answer["acks"]), answer
    offset = timedelta(milliseconds=SearchSession.objects.get(pk=session.pk).clock_offset_ms or 0)
    created = sorted(Judgment.objects.filter(session=session).values_list("created_at", flat=True))
    assert created == [at + offset for at in judged]
    assert sorted(JudgmentChange.objects.values_list("changed_at", flat=True)) == [
        at + offset for at in judged
    ]


def test_a_session_lasts_as_long_as_its_events_span(participant, session):
    session.refresh_from_db()
    start = session.started_at
    post(
        participant,
        [
            ev(session, "q1", "query", start + timedelta(seconds=12), text="wing"),
            ev(session, "end", "session_end", start + timedelta(seconds=131), reason="gave_up"),
        ],
    )
    session.refresh_from_db()
    offset = timedelta(milliseconds=session.clock_offset_ms or 0)
    assert session.ended_at == start + timedelta(seconds=131) + offset
    assert session.ended_at - session.started_at == timedelta(seconds=131)


def test_a_late_upload_keeps_its_order_and_durations(participant, session):
    """All of a session's events sent an hour after they
    happened: the times are the client's, not the arrival's."""
    session.refresh_from_db()
    start = session.started_at
    events = [
        ev(session, "q1", "query", start + timedelta(seconds=10), text="wing"),
        ev(session, "o1", "document_open", start + timedelta(seconds=18), doc="1", query=1, rank=1),
        ev(session, "c1", "document_close", start + timedelta(seconds=48), doc="1", query=1, dwell_ms=30_000),
        ev(session, "q2", "query", start + timedelta(seconds=60), text="wing flow"),
        ev(session, "end", "session_end", start + timedelta(seconds=75), reason="satisfied"),
    ]
    with server_clock_moved(timedelta(hours=1)):
        answer = post(participant, events, clock={"sent": iso(timezone.now())})
    assert all(a["ok"] for a in answer["acks"]), answer
    session.refresh_from_db()
    assert abs(session.clock_offset_ms) < 2_000  # the batch's send time, not its events' times
    offset = timedelta(milliseconds=session.clock_offset_ms)
    issued = list(
        Query.objects.filter(session=session).order_by("position").values_list("issued_at", flat=True)
    )
    assert issued == [start + timedelta(seconds=10) + offset, start + timedelta(seconds=60) + offset]
    opened = Event.objects.get(client_event_id="o1")
    assert issued[0] < opened.client_time + offset < issued[1]
    assert session.ended_at - session.started_at == timedelta(seconds=75)


def test_an_event_without_a_usable_client_time_takes_the_servers(participant, session):
    before = timezone.now()
    answer = post(
        participant,
        [{"id": "q1", "type": "query", "session": session.pk, "time": "soon", "data": {"text": "wing"}}],
    )
    assert answer["acks"][0]["ok"]
    assert before <= Query.objects.get(session=session).issued_at <= timezone.now()


def test_a_clock_that_cannot_be_a_sample_refuses_nothing_else(participant, session):
    answer = post(
        participant, [ev(session, "q1", "query", timezone.now(), text="wing")], clock={"sent": "soon"}
    )
    assert answer["acks"][0]["ok"] and answer["clock"]["refused"].startswith("clock.sent:")
    session.refresh_from_db()
    assert Query.objects.filter(session=session).count() == 1


def test_a_later_session_starts_from_the_participants_estimate(participant, session):
    from studies.participation.way.form_steps import post_task_save, session_start
    from studies.participation.way.steps import session_end

    SearchSession.objects.filter(pk=session.pk).update(clock_offset_ms=-300_000.0, clock_delay_ms=12.0)
    session_end(participant=participant, session=session, reason="gave_up", client_event_id="end-1")
    post_task_save(
        participant=participant, session=session, answers={"search_went_well": 3}, client_event_id="post-1"
    )
    second = participant.assignments.order_by("position")[1]
    client_time = timezone.now() + timedelta(minutes=5)  # this clock is five minutes fast
    later = session_start(
        participant=participant, assignment=second, client_event_id="start-2", client_time=iso(client_time)
    )
    assert later.clock_offset_ms == -300_000.0 and later.clock_delay_ms == 12.0
    assert later.started_at == client_time - timedelta(minutes=5)
