"""Property: whatever mix of valid and hostile events a participant sends to either events endpoint (the
page's /p/<token>/events/ and the API's /api/participant/events/), the answer is never a 5xx, there is one ack
per event, every valid event is stored exactly once (or answered "retry later" and stored later), every
hostile one is refused on its own, and nothing else changes.
Runs on SQLite and, with DATABASE_URL, on PostgreSQL.

Valid here: any text (lone surrogates, NUL, 100,000 characters), client times anywhere (0001-01-01+14:00,
1e30 ms), numbers the columns hold, pages and positions that refer to nothing, replays, events that name
a query sent later in the batch or never. Hostile: numbers beyond a column or 64 bits, data nested deeper than
16 levels, malformed ids, types and fields, NaN and Infinity (the page's endpoint; the API refuses such a body
whole, as DRF's strict JSON does)."""

import json

import pytest
from django.conf import settings as django_settings
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studies.models import Event, Query

pytestmark = pytest.mark.django_db

SURROGATES_AND_NUL = st.sampled_from(["\ud83d", "\ude00", "\udfff", "\x00", "\ud800\x00\udbff"])
TEXT = st.one_of(
    st.text(max_size=30),
    st.lists(st.one_of(st.characters(), SURROGATES_AND_NUL), max_size=20).map("".join),
    st.just("wing " * 20_000),  # 100,000 characters
)
TIMES = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "0001-01-01T00:00:00+14:00",
            "9999-12-31T23:59:59-14:00",
            "2026-02-30T00:00:00Z",
            "1970-01-01T00:00:00Z",
            1e30,
            -1e30,
            0,
            2**62,
            "now-ish",
            "\ud83d",
        ]
    ),
)
JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63) + 1, 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=8,
)


def _deep(levels):
    value = 1
    for _ in range(levels):
        value = [value]
    return value


# (kind, params): the test builds the event from them (ids are made unique per example).
VALID = st.one_of(
    st.tuples(st.just("query"), TEXT, TIMES),
    st.tuples(st.just("tab"), st.dictionaries(TEXT, JSON, max_size=3), TIMES),
    st.tuples(st.just("page"), st.integers(-5, 40_000), st.integers(-3, 2**31)),  # ref, page
    st.tuples(st.just("mark"), st.integers(-5, 40_000), st.integers(-3, 2**31)),  # ref, rank
    st.tuples(st.just("judge"), st.integers(-5, 40_000), st.integers(-3, 9)),  # ref, grade
    st.tuples(st.just("replay"), st.integers(0, 40), st.none()),
)
HOSTILE = st.one_of(
    st.tuples(st.just("seq"), st.sampled_from([2**31, 2**63, 2**80, -1, "7", 1.5, True]), st.none()),
    st.tuples(st.just("deep"), st.integers(17, 200), st.none()),
    st.tuples(st.just("bigint"), st.sampled_from([2**63, -(2**63) - 5, 10**30]), st.none()),
    st.tuples(st.just("badid"), st.sampled_from(["", "x" * 65, "a b", "\ud83d", 5, None]), st.none()),
    st.tuples(st.just("badtype"), st.sampled_from(["", "Query", "x" * 41, "q-1", 3]), st.none()),
    st.tuples(st.just("baddata"), st.sampled_from([[1], "text", 5]), st.none()),
    st.tuples(st.just("badtime"), st.sampled_from([{"t": 1}, [1]]), st.none()),
    st.tuples(st.just("notanobject"), st.sampled_from([1, "e", [], None]), st.none()),
)
NON_FINITE = st.tuples(
    st.just("nonfinite"), st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400"]), st.none()
)


def _body(part) -> str:
    return "[" + ", ".join(e if isinstance(e, Raw) else json.dumps(e) for _, e in part) + "]"


def _under_the_byte_limit(part):
    """`part` in consecutive pieces whose request bodies stay under the endpoint's byte limit."""
    piece = []
    for item in part:
        if (
            piece
            and len(('{"events": ' + _body([*piece, item]) + "}").encode())
            > django_settings.EVENTS_MAX_BODY_BYTES
        ):
            yield piece
            piece = []
        piece.append(item)
    if piece:
        yield piece


class Raw(str):
    """An event written as JSON text (NaN and Infinity, which json.dumps would not write as a client does)."""


def _hostile(kind, a, base, cid):
    """A hostile event of `kind` (a: its bad value), built on the valid `base`."""
    if kind == "seq":
        return {**base, "type": "tab_hidden", "seq": a}
    if kind == "deep":
        return {**base, "type": "tab_hidden", "data": {"deep": _deep(a)}}
    if kind == "bigint":
        return {**base, "type": "results_page", "data": {"query": a, "page": 1}}
    if kind == "badid":
        return {**base, "type": "tab_hidden", "id": a}
    if kind == "badtype":
        return {**base, "type": a}
    if kind == "baddata":
        return {**base, "type": "tab_hidden", "data": a}
    if kind == "badtime":
        return {**base, "type": "tab_hidden", "time": a}
    if kind == "notanobject":
        return a
    if kind == "nonfinite":
        return Raw(f'{{"id": "{cid}", "type": "tab_hidden", "data": {{"x": {a}}}}}')
    raise AssertionError(kind)


class Run:
    """One example: builds its events, posts them in chunks, and checks every answer and the database."""

    counter = 0

    def __init__(self, post, session, other_session, specs):
        Run.counter += 1
        self.prefix, self.post, self.session = f"r{Run.counter}", post, session
        self.other_session = other_session
        self.events = []  # (label, event or raw JSON text)
        for n, (kind, a, b) in enumerate(specs):
            self.events.append(self.build(n, kind, a, b))

    def build(self, n, kind, a, b):
        cid, session = f"{self.prefix}-{n}", self.session.pk
        base = {"id": cid, "session": session, "seq": n}
        queries = [e["id"] for label, e in self.events if label == "valid" and e.get("type") == "query"]
        ref = (
            (queries[a % len(queries)] if queries and a >= 0 else f"{self.prefix}-never-{a}")
            if kind in ("page", "mark", "judge")
            else None
        )
        if kind == "query":
            return "valid", {**base, "type": "query", "time": b, "data": {"text": a}}
        if kind == "tab":
            return "valid", {**base, "type": "tab_hidden", "time": b, "data": a}
        if kind == "page":
            return "valid", {**base, "type": "results_page", "data": {"query_event": ref, "page": b}}
        if kind == "mark":
            return "valid", {**base, "type": "scan_mark", "data": {"query_event": ref, "rank": b}}
        if kind == "judge":
            return "valid", {
                **base,
                "type": "judgment",
                "data": {"doc": str(a % 40 + 1), "grade": b, "query_event": ref},
            }
        if kind == "replay":
            earlier = [e for label, e in self.events if label == "valid"]
            return (
                ("valid", earlier[a % len(earlier)]) if earlier else ("valid", {**base, "type": "tab_hidden"})
            )
        return "hostile", _hostile(kind, a, base, cid)

    def check(self, chunks: int, replay: bool):
        before_events = Event.objects.count()
        before_queries = Query.objects.filter(session=self.session).count()
        others = (
            Event.objects.filter(session=self.other_session).count(),
            Query.objects.filter(session=self.other_session).count(),
        )
        answers: dict[str, list[dict]] = {}
        size = max(1, -(-len(self.events) // chunks))
        parts = [self.events[i : i + size] for i in range(0, len(self.events), size)]
        # The endpoint refuses a body over EVENTS_MAX_BODY_BYTES whole (413, tested elsewhere); as the page's
        # outbox does, a part that would be larger is sent in smaller ones.
        parts = [piece for part in parts for piece in _under_the_byte_limit(part)]
        if replay and parts:
            parts.append(parts[0])
        for part in parts:
            body = _body(part)
            response = self.post('{"events": ' + body + "}")
            assert response.status_code == 200, response.content[:500]
            acks = response.json()["acks"]
            assert len(acks) == len(part)
            for (label, event), ack in zip(part, acks, strict=True):
                assert ack["ok"] is False or label == "valid"
                if label == "hostile":
                    assert set(ack) == {"id", "ok", "error"}, ack
                    continue
                assert ack["id"] == event["id"]
                assert ack["ok"] or ack.get("refused") or ack.get("retry_later"), ack
                answers.setdefault(event["id"], []).append(ack)
        stored_ids = {cid for cid, acks in answers.items() if any(a["ok"] or "refused" in a for a in acks)}
        for acks in answers.values():
            final = [a for a in acks if a["ok"] or "refused" in a]
            assert all(a == final[0] for a in final), "a re-sent event is answered as the first time"
        mine = Event.objects.filter(client_event_id__startswith=f"{self.prefix}-")
        assert sorted(mine.values_list("client_event_id", flat=True)) == sorted(stored_ids)  # each once
        assert Event.objects.count() - before_events == len(stored_ids)  # nothing else
        new_queries = Query.objects.filter(session=self.session).count() - before_queries
        assert (
            new_queries == mine.filter(type="query", payload__ack__ok=True).count()
        )  # a query per query stored
        assert others == (
            Event.objects.filter(session=self.other_session).count(),
            Query.objects.filter(session=self.other_session).count(),
        )
        for event in mine.exclude(client_time=None):  # a timestamp only within the window
            assert abs((event.client_time - event.server_time).total_seconds()) <= 24 * 3600


@pytest.fixture
def posts(participant, session):
    page = Client(enforce_csrf_checks=True)
    page.get(f"/p/{participant.access_token}/")
    token = page.cookies["csrftoken"].value
    api = Client()
    return {
        "page": lambda body: page.post(
            f"/p/{participant.access_token}/events/",
            body,
            content_type="application/json",
            headers={"X-CSRFToken": token},
        ),
        "api": lambda body: api.post(
            "/api/participant/events/",
            body,
            content_type="application/json",
            headers={"Authorization": f"Participant {participant.access_token}"},
        ),
    }


@pytest.fixture(autouse=True)
def _no_search_cap(settings):  # the caps have their own tests; here every search and size may run
    settings.EVENTS_SEARCHES_PER_BATCH = 10_000
    settings.EVENTS_SEARCHES_PER_MINUTE = 1_000_000
    settings.EVENTS_MAX_EVENT_BYTES = settings.EVENTS_MAX_BODY_BYTES
    settings.EVENTS_BYTES_PER_PARTICIPANT = 10**12


EXAMPLES = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@EXAMPLES
@given(
    specs=st.lists(st.one_of(VALID, VALID, HOSTILE, NON_FINITE), min_size=1, max_size=12),
    chunks=st.integers(1, 3),
    replay=st.booleans(),
)
def test_the_page_endpoint_holds_any_mix(posts, session, other_session, specs, chunks, replay):
    Run(posts["page"], session, other_session, specs).check(chunks, replay)


@EXAMPLES
@given(
    specs=st.lists(st.one_of(VALID, VALID, HOSTILE), min_size=1, max_size=12),
    chunks=st.integers(1, 3),
    replay=st.booleans(),
)
def test_the_api_endpoint_holds_any_mix(posts, session, other_session, specs, chunks, replay):
    Run(posts["api"], session, other_session, specs).check(chunks, replay)
