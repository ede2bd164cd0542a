"""Per event, never per batch: text is cleaned and kept, what the log cannot hold is refused for that event
alone with the field and the reason, and only an unreadable body is refused whole (a JSON 4xx)."""

import json

import pytest
from django.test import Client

from studies.models import Event, Query


@pytest.fixture
def post(participant, session):
    browser = Client(enforce_csrf_checks=True)
    browser.get(f"/p/{participant.access_token}/")  # the csrftoken cookie
    token = browser.cookies["csrftoken"].value

    def send(body, raw=False):
        return browser.post(
            f"/p/{participant.access_token}/events/",
            body if raw else json.dumps(body),
            content_type="application/json",
            headers={"X-CSRFToken": token},
        )

    return send


def query(session, cid, text="wing", **extra):
    return {"id": cid, "type": "query", "session": session.pk, "data": {"text": text}, **extra}


def test_half_an_emoji_in_a_query_is_kept_as_a_replacement_character(post, session):
    # json.dumps writes the lone surrogate as the escape "\ud83d", as a browser's JSON.stringify does.
    response = post({"events": [query(session, "q1", "wing \ud83d"), query(session, "q2", "heat")]})
    assert response.status_code == 200
    acks = response.json()["acks"]
    assert [a["ok"] for a in acks] == [True, True] and acks[0]["normalized"] == ["text"]
    assert list(Query.objects.order_by("position").values_list("text", flat=True)) == ["wing \ufffd", "heat"]
    stored = Event.objects.get(client_event_id="q1").payload["data"]
    assert stored == {"text": "wing \ufffd", "normalized": ["text"]}


def test_a_nul_is_removed_from_any_text_and_the_event_says_where(post, session):
    acks = post(
        {
            "events": [
                query(session, "q1", "wi\x00ng"),
                {"id": "t1", "type": "tab_hidden", "data": {"note": {"a\x00": ["x\x00y"]}}},
            ]
        }
    ).json()["acks"]
    assert all(a["ok"] for a in acks)
    assert Query.objects.get().text == "wing"
    assert Event.objects.get(client_event_id="t1").payload["data"] == {
        "note": {"a": ["xy"]},
        "normalized": ["note.a", "note.a.0"],
    }


@pytest.mark.parametrize(
    "bad, reason",
    [
        ({"seq": 2**31}, "seq: a whole number from 0 to 2147483647"),
        ({"seq": 2**63}, "seq: a whole number from 0 to 2147483647"),
        ({"seq": -1}, "seq: a whole number from 0 to 2147483647"),
        ({"seq": "7"}, "seq: a whole number"),
        ({"type": "Query!"}, "type: lower-case letters"),
        ({"id": "x" * 65}, "id: 1..64 letters"),
        ({"data": [1, 2]}, "data: a JSON object"),
        ({"data": {"text": "wing", "deep": json.loads("[" * 40 + "]" * 40)}}, "nested deeper than 16 levels"),
        ({"data": {"text": "wing", "n": 10**30}}, "data.n: a number beyond 64 bits"),
        ({"time": {"at": 1}}, "time: ISO 8601 text or milliseconds"),
    ],
)
def test_what_the_log_cannot_hold_is_refused_for_that_event_alone(post, session, bad, reason):
    event = {**query(session, "bad"), **bad}
    response = post({"events": [query(session, "q1"), event, query(session, "q2", "heat")]})
    assert response.status_code == 200
    first, refused, last = response.json()["acks"]
    assert first["ok"] and last["ok"] and refused["ok"] is False and reason in refused["error"]
    assert refused["id"] == (event["id"] if len(event["id"]) <= 64 else None)
    assert Query.objects.count() == 2 and not Event.objects.filter(client_event_id="bad").exists()


def test_a_query_position_beyond_64_bits_is_refused_not_an_error(post, session):
    """On SQLite it failed the whole batch: Python int too large to convert to SQLite INTEGER."""
    post({"events": [query(session, "q1")]})
    acks = post(
        {
            "events": [
                {
                    "id": "m1",
                    "type": "scan_mark",
                    "session": session.pk,
                    "data": {"query": 10**30, "rank": 1},
                },
                {"id": "m2", "type": "scan_mark", "session": session.pk, "data": {"query": 1e30, "rank": 1}},
                {"id": "m3", "type": "scan_mark", "session": session.pk, "data": {"query": 1, "rank": 2}},
            ]
        }
    ).json()["acks"]
    assert "data.query: a number beyond 64 bits" in acks[0]["error"]
    assert acks[1]["refused"] == "That query is not part of this search session."  # a float: no position
    assert acks[2]["ok"] and Query.objects.get().scan_mark_rank == 2


def test_nan_and_infinity_are_refused_for_that_event_alone(post, session):
    body = (
        '{"events": [{"id": "a", "type": "tab_hidden", "data": {"x": NaN}},'
        ' {"id": "b", "type": "tab_hidden", "data": {"x": 1e400}},'
        ' {"id": "c", "type": "tab_hidden", "data": {"x": 1.5}}]}'
    )
    acks = post(body, raw=True).json()["acks"]
    assert ["not a finite number" in (a.get("error") or "") for a in acks] == [True, True, False]
    assert list(Event.objects.filter(type="tab_hidden").values_list("client_event_id", flat=True)) == ["c"]


def test_an_unreadable_body_is_refused_whole_with_a_reason(post):
    deep = post('{"events": ' + "[" * 100_000 + "]" * 100_000 + "}", raw=True)
    assert deep.status_code == 400 and "nested too deeply" in deep.json()["error"]
    broken = post('{"events": [', raw=True)
    assert broken.status_code == 400 and broken.json()["error"].startswith("not JSON")
    assert post(b"\xff\xfe", raw=True).status_code == 400
    assert not Event.objects.filter(type="query").exists()


def test_past_the_200th_event_each_is_answered_never_dropped(post, session):
    events = [{"id": f"t{n}", "type": "tab_hidden", "session": session.pk} for n in range(203)]
    acks = post({"events": events}).json()["acks"]
    assert len(acks) == 203 and all(a["ok"] for a in acks[:200])
    assert [a["id"] for a in acks[200:]] == ["t200", "t201", "t202"]
    assert all("at most 200" in a["retry_later"] for a in acks[200:])
    assert Event.objects.filter(type="tab_hidden").count() == 200


def test_a_body_of_more_than_a_thousand_events_is_refused_whole(post, session):
    """Each event past the 200th gets its own answer: a megabyte of "{}" would be answered with 30 MB."""
    response = post({"events": [{}] * 1001})
    assert response.status_code == 413 and "at most 200 events" in response.json()["error"]
    assert post({"events": [{}] * 1000}).status_code == 200


def test_a_replayed_batch_with_a_bad_event_answers_the_same(post, session):
    body = {"events": [query(session, "q1", "wing \ud83d"), query(session, "bad", seq=2**40)]}
    first = post(body).json()
    assert post(body).json() == first
    assert Query.objects.count() == 1 and Event.objects.filter(type="query").count() == 1
