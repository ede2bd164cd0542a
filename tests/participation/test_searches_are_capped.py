"""Searches (queries and new result pages) are capped per batch and per participant per minute: past a cap an
event is answered "retry later" with the reason, nothing stored, and is stored when sent again."""

import pytest
from django.core.cache import cache

from studies.models import Event, Query
from studies.participation.way.steps import events_ingest, query_log

from .conftest import cid


@pytest.fixture(autouse=True)
def _counts_start_empty():
    cache.clear()
    yield
    cache.clear()


def queries(session, *ids):
    return [{"id": i, "type": "query", "session": session.pk, "data": {"text": "wing"}} for i in ids]


def test_past_the_batch_cap_searches_and_what_follows_them_wait(participant, session, settings):
    settings.EVENTS_SEARCHES_PER_BATCH = 3
    events = queries(session, "a", "b", "c", "d") + [
        {"id": "t", "type": "tab_hidden", "session": session.pk},
        {"id": "u", "type": "tab_hidden"},
    ]
    acks = events_ingest(participant=participant, events=events)
    assert [a["ok"] for a in acks] == [True, True, True, False, False, True]
    assert acks[3]["retry_later"] == "Send it again later: more than 3 searches a batch."
    assert "waiting" in acks[4]["retry_later"]  # in order behind the search that waits
    assert Query.objects.count() == 3 and not Event.objects.filter(client_event_id__in=["d", "t"]).exists()
    acks = events_ingest(participant=participant, events=events)
    assert all(a["ok"] for a in acks) and Query.objects.count() == 4


def test_past_the_minute_cap_searches_wait(participant, session, settings):
    settings.EVENTS_SEARCHES_PER_MINUTE = 4
    assert all(
        a["ok"] for a in events_ingest(participant=participant, events=queries(session, "a", "b", "c"))
    )
    acks = events_ingest(participant=participant, events=queries(session, "d", "e"))
    assert acks[0]["ok"] and acks[1]["retry_later"] == "Send it again later: more than 4 searches a minute."
    cache.clear()  # the next minute
    assert events_ingest(participant=participant, events=queries(session, "e"))[0]["ok"]
    assert Query.objects.count() == 5


def test_pages_shown_before_are_no_search(participant, session, settings):
    settings.EVENTS_SEARCHES_PER_BATCH = 2
    events_ingest(participant=participant, events=queries(session, "q"))
    pages = [
        {
            "id": f"p{n}",
            "type": "results_page",
            "session": session.pk,
            "data": {"query_event": "q", "page": p},
        }
        for n, p in enumerate([2, 1, 2, 3, 1])
    ]
    acks = events_ingest(participant=participant, events=pages)
    assert [a["ok"] for a in acks] == [True, True, True, True, True]  # two searches: pages 2 and 3


def test_the_services_are_not_capped(participant, session, settings):
    """The simulated participants of the demo search through the services, faster than any person."""
    settings.EVENTS_SEARCHES_PER_MINUTE = 1
    for _ in range(3):
        query_log(participant=participant, session=session, text="wing", client_event_id=cid())
    assert Query.objects.count() == 3


def test_a_cache_that_is_down_leaves_searches_uncapped_not_failing(
    participant, session, settings, monkeypatch
):
    """With CACHE_URL (Redis) down, the cap cannot count: searches go on (the batch is what matters)."""

    def down(*args, **kwargs):
        raise ConnectionError("Redis is down")

    for name in ("get", "add", "incr", "set"):
        monkeypatch.setattr(cache, name, down)
    acks = events_ingest(participant=participant, events=queries(session, "a", "b"))
    assert all(a["ok"] for a in acks) and Query.objects.count() == 2
