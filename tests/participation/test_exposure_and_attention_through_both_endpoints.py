"""`Exposure` and `attention` reports through both events endpoints (the page's, with its CSRF
token, and the participant API's): aggregated per shown result, page and session; re-sent reports counted
once; hostile reports refused one by one with the item and field, their neighbours stored; a study that does
not record a family refuses its reports. Runs on SQLite and, with DATABASE_URL, on PostgreSQL."""

import json

import pytest
from django.test import Client

from studies.models import AttentionSpan, Event, PageExposure, ResultExposure, ShownResult
from studies.participation.events.exposure import active_ms, attention_checked

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["page", "api"])
def post(request, participant, session):
    """A batch sender for either endpoint."""
    if request.param == "page":
        browser = Client(enforce_csrf_checks=True)
        browser.get(f"/p/{participant.access_token}/")  # the csrftoken cookie
        headers = {"X-CSRFToken": browser.cookies["csrftoken"].value}
        url = f"/p/{participant.access_token}/events/"
    else:
        browser = Client()
        headers = {"Authorization": f"Participant {participant.access_token}"}
        url = "/api/participant/events/"

    def send(*events):
        answer = browser.post(
            url, json.dumps({"events": list(events)}), content_type="application/json", headers=headers
        )
        assert answer.status_code == 200, answer.content
        return answer.json()["acks"]

    return send


def session_began_ago(session, *, seconds: int) -> None:
    from datetime import timedelta

    from django.utils import timezone

    type(session).objects.filter(pk=session.pk).update(started_at=timezone.now() - timedelta(seconds=seconds))


def event(session, cid, kind, **data):
    return {"id": cid, "type": kind, "session": session.pk, "data": data}


def test_a_page_s_exposure_is_summed_per_shown_result(post, session):
    (query,) = post(event(session, "q1", "query", text="wing flow"))
    assert query["ok"] and len(query["results"]) == 10
    first = event(
        session,
        "x1",
        "exposure",
        query_event="q1",
        page=1,
        scroll_permille=400,
        items=[[1, 0, 3000, 1000, 250, 1, 3000], [2, 0, 2800, 1000], [3, 40, 900, 620, 0, 0, 940]],
    )
    later = event(
        session,
        "x2",
        "exposure",
        query=1,
        page=1,
        scroll_permille=300,
        items=[[1, 9000, 500, 800, 0, 0, 9500], [3, 8000, 1500, 1000, 40, 2, 9600]],
    )
    acks = post(first, later, first)  # the first re-sent (a lost acknowledgement): counted once
    assert [a["ok"] for a in acks] == [True, True, True] and acks[0] == acks[2]
    assert acks[0] == {"id": "x1", "ok": True, "query": 1, "page": 1, "ranks": 3}
    by_rank = {
        e.shown_result.rank: (e.first_visible_ms, e.visible_ms, e.max_permille, e.hover_ms, e.hovers)
        for e in ResultExposure.objects.select_related("shown_result")
    }
    assert by_rank == {1: (0, 3500, 1000, 250, 1), 2: (0, 2800, 1000, 0, 0), 3: (40, 2400, 1000, 40, 2)}
    # When each last left the screen: the latest report's moment, whichever report came first; none when
    # no report said it was at least half visible.
    last = dict(ResultExposure.objects.values_list("shown_result__rank", "last_visible_ms"))
    assert last == {1: 9500, 2: None, 3: 9600}
    assert list(PageExposure.objects.values_list("page", "scroll_permille")) == [(1, 400)]
    assert Event.objects.filter(type="exposure").count() == 2


def test_hostile_reports_are_refused_one_by_one(post, session):
    post(event(session, "q1", "query", text="wing"))
    acks = post(
        event(session, "x1", "exposure", query=1, items=[[1, 0, 100, 1001]]),
        event(session, "x2", "exposure", query=1, items=[[2, 0, 200, 500]]),
        event(session, "x3", "exposure", query=1, items=[[1, 0, -1, 5]]),
        event(session, "x4", "exposure", query=1, items=[[n, 0, 1, 1] for n in range(1, 300)]),
        event(session, "x5", "exposure", query=7, items=[[1, 0, 1, 1]]),
        event(session, "a1", "attention", spans=[["away", 0, 10]]),
        event(session, "a2", "attention", spans=[["hidden", 1000, 2000]]),
        event(session, "a3", "attention", spans=[["blur", 0, 10], ["idle", "soon", 5]]),
        {"id": "x6", "type": "exposure", "session": 999999, "data": {"query": 1, "items": [[1, 0, 1, 1]]}},
    )
    ok = {a["id"]: a["ok"] for a in acks}
    assert ok == {
        "x1": False,
        "x2": True,
        "x3": False,
        "x4": False,
        "x5": True,
        "a1": False,
        "a2": True,
        "a3": False,
        "x6": False,
    }
    errors = {a["id"]: a.get("refused") or a.get("error", "") for a in acks}
    assert "items[0].max_permille must be a whole number from 0 to 1000" in errors["x1"]
    assert "items[0].visible_ms" in errors["x3"]
    assert "at most 200" in errors["x4"]
    assert "spans[0].kind must be one of hidden, blur, idle" in errors["a1"]
    assert "spans[1].start_ms" in errors["a3"]
    # Only the good neighbours added anything; a query the session never had matches nothing.
    assert list(ResultExposure.objects.values_list("shown_result__rank", "visible_ms")) == [(2, 200)]
    assert list(AttentionSpan.objects.values_list("kind", "start_ms", "duration_ms")) == [
        ("hidden", 1000, 2000)
    ]


def test_attention_spans_give_the_session_s_active_time(post, session):
    session_began_ago(session, seconds=90)  # the spans below end 70 s in: within the session so far
    acks = post(
        event(session, "a1", "attention", spans=[["hidden", 10_000, 10_000], ["blur", 15_000, 10_000]]),
        event(session, "a2", "attention", spans=[["idle", 50_000, 20_000]]),
    )
    assert [a["spans"] for a in acks] == [2, 1]
    spans = attention_checked(
        {"spans": [[s.kind, s.start_ms, s.duration_ms] for s in session.attention_spans.order_by("start_ms")]}
    )
    assert active_ms(spans, 60_000) == 35_000


def test_reports_after_the_session_ended_are_kept(post, session):
    post(event(session, "q1", "query", text="wing"), event(session, "e1", "session_end", reason="satisfied"))
    (ack,) = post(event(session, "x1", "exposure", query=1, items=[[1, 0, 700, 900]]))
    assert ack["ok"]
    assert ResultExposure.objects.get().visible_ms == 700


def test_a_study_that_does_not_record_a_family_refuses_its_reports(post, session):
    study = session.assignment.participant.study
    study.record_exposure = False
    study.record_attention = False
    study.save(update_fields=["record_exposure", "record_attention"])
    post(event(session, "q1", "query", text="wing"))
    acks = post(
        event(session, "x1", "exposure", query=1, items=[[1, 0, 700, 900]]),
        event(session, "a1", "attention", spans=[["hidden", 0, 10]]),
    )
    assert [a["ok"] for a in acks] == [False, False]
    assert "does not record which results were on screen" in acks[0]["refused"]
    assert "does not record when the page was hidden" in acks[1]["refused"]
    assert not ResultExposure.objects.exists() and not AttentionSpan.objects.exists()
    assert ShownResult.objects.count() == 10


def test_a_query_keeps_how_long_it_took_to_write_and_a_bad_timing_never_loses_it(post, session):
    from studies.models import Query

    acks = post(
        event(session, "q1", "query", text="wing", formulation={"first_key_ms": 1200, "submit_ms": 5400}),
        event(session, "q2", "query", text="flow", formulation={"first_key_ms": 9000, "submit_ms": 5400}),
        event(session, "q3", "query", text="heat", formulation={"first_key_ms": None, "submit_ms": 800}),
        event(session, "q4", "query", text="shock", formulation="fast"),
    )
    assert all(a["ok"] for a in acks)
    assert list(Query.objects.order_by("position").values_list("text", "first_key_ms", "formulation_ms")) == [
        ("wing", 1200, 5400),
        ("flow", None, None),
        ("heat", None, 800),
        ("shock", None, None),
    ]
    ignored = Event.objects.get(client_event_id="q2").payload["data"]["formulation_ignored"]
    assert "formulation.first_key_ms must be a whole number from 0 to 5400" in ignored
    assert (
        "formulation must be an object"
        in Event.objects.get(client_event_id="q4").payload["data"]["formulation_ignored"]
    )


def test_a_close_keeps_how_far_the_document_was_read(post, session):
    (query,) = post(event(session, "q1", "query", text="wing"))
    doc = query["results"][2]["doc"]

    def close(cid, read, rank=3):
        return event(
            session, cid, "document_close", doc=doc, query=1, rank=rank, dwell_ms=900, read_permille=read
        )

    acks = post(
        event(session, "o1", "document_open", doc=doc, query=1, rank=3),
        close("c1", 400),
        close("c2", 250),  # a second reading, less far: the deepest stays
        close("c3", 1500),  # out of range: the close kept, the depth left out and said
    )
    assert all(a["ok"] for a in acks)
    exposure = ResultExposure.objects.get(shown_result__rank=3)
    assert exposure.read_permille == 400 and exposure.first_visible_ms is None and exposure.visible_ms == 0
    assert (
        "read_permille must be"
        in Event.objects.get(client_event_id="c3").payload["data"]["read_permille_ignored"]
    )
    post(event(session, "x1", "exposure", query=1, items=[[3, 50, 900, 1000]]))
    exposure.refresh_from_db()
    assert (exposure.first_visible_ms, exposure.visible_ms, exposure.read_permille) == (50, 900, 400)


def test_times_past_the_session_or_out_of_order_are_refused_each_with_its_field(post, session):
    """Until_ms before start_ms was stored, and 42 days of visible time for a 2.7-minute session (a
    participant could inflate the exposure that scan=exposure scores)."""
    session_began_ago(session, seconds=160)
    post(event(session, "q1", "query", text="wing flow"))
    days = 6 * 24 * 3600 * 1000  # within the week any one number may be, far past the session
    acks = post(
        event(session, "x1", "exposure", query=1, page=1, items=[[1, 0, days, 1000, 0, 0, days]]),
        event(session, "x2", "exposure", query=1, page=1, items=[[2, 9000, 100, 1000, 0, 0, 500]]),
        event(session, "x3", "exposure", query=1, page=1, items=[[3, 0, 60_000, 1000, 0, 0, 1_000]]),
        event(session, "a1", "attention", spans=[["idle", 100_000, 3_600_000]]),
        event(session, "x4", "exposure", query=1, page=1, items=[[4, 0, 2_000, 1000, 0, 0, 2_000]]),
    )
    assert [a["ok"] for a in acks] == [False, False, False, False, True]
    assert "items[0].visible_ms" in str(acks[0]) and "past the session so far" in str(acks[0])
    assert "items[0].until_ms 500 is before its start_ms 9000" in str(acks[1])
    assert "items[0].visible_ms 60000 is longer than from its start_ms to its until_ms" in str(acks[2])
    assert "spans[0] ends at 3700000 ms, after the session so far" in str(acks[3])
    assert list(ResultExposure.objects.values_list("shown_result__rank", flat=True)) == [4]
    assert not session.attention_spans.exists()


def test_hover_time_past_the_session_is_refused_naming_the_item_s_field(post, session):
    """Hover time was stored whatever its size, within a week, while visible time was held to the session."""
    session_began_ago(session, seconds=60)
    post(event(session, "q1", "query", text="wing flow"))
    acks = post(
        event(session, "x1", "exposure", query=1, items=[[1, 0, 100, 1000, 3_600_000, 1, 100]]),
        event(session, "x2", "exposure", query=1, items=[[2, 55_000, 100, 1000, 20_000, 1, 55_100]]),
        # The pointer may rest on a result less than half visible: hover past its until_ms is kept.
        event(session, "x3", "exposure", query=1, items=[[3, 0, 1_000, 400, 30_000, 2, 1_000]]),
    )
    assert [a["ok"] for a in acks] == [False, False, True]
    assert "items[0].hover_ms 3600000 is past the session so far" in acks[0]["refused"]
    assert "items[0].hover_ms 20000 is longer than from its start_ms 55000" in acks[1]["refused"]
    assert list(ResultExposure.objects.values_list("shown_result__rank", "hover_ms")) == [(3, 30_000)]


def test_many_reports_each_within_the_session_never_sum_past_it(post, session):
    """Each report within the session so far, ten of them summed to ten times its length."""
    from studies.participation.events.exposure import SLACK_MS

    session_began_ago(session, seconds=30)
    post(event(session, "q1", "query", text="wing flow"))
    item = [1, 0, 30_000, 1000, 30_000, 1, 30_000]
    acks = post(*(event(session, f"x{n}", "exposure", query=1, items=[item]) for n in range(10)))
    assert all(a["ok"] for a in acks)
    stored = ResultExposure.objects.get()
    assert 30_000 + SLACK_MS <= stored.visible_ms < 30_000 + SLACK_MS + 5_000, stored.visible_ms
    assert stored.hover_ms == stored.visible_ms and stored.hovers == 10
    assert Event.objects.filter(type="exposure").count() == 10  # each report kept as sent
