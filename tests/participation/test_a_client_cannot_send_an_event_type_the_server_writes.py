"""The event types the server writes (a form's step, a check, a gold answer or pin, a reload) are trusted by
their readers: a client `gold` event once skipped the gold step, a client `gold_pair` pinned a pair the
participant chose. Each is refused for that event alone on both events endpoints (the page's batch and the
participant API), stored nowhere, while an honest event beside it is stored."""

import ast
import json
from pathlib import Path

import pytest
from django.test import Client
from rest_framework.test import APIClient

from studies.kernel.gold import gold_pinned
from studies.models import Event
from studies.participation.events.event_checks import SERVER_EVENT_TYPES

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
# What the issue lists, spelled out here so that a type dropped from the set is a failure, not a shrug.
FORGED = [
    "consent",
    "consent_declined",
    "questionnaire",
    "pre_task",
    "post_task",
    "session_start",
    "check",
    "gold",
    "gold_pair",
    "page_reload",
]


def page_post(participant, events):
    response = Client().post(
        f"/p/{participant.access_token}/events/",
        json.dumps({"events": events}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    return response.json()["acks"]


def api_post(participant, events):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Participant {participant.access_token}")
    response = api.post("/api/participant/events/", {"events": events}, format="json")
    assert response.status_code == 200, response.content
    return response.json()["acks"]


def test_every_server_type_is_in_the_refused_set():
    assert sorted(SERVER_EVENT_TYPES) == sorted(FORGED)


@pytest.mark.parametrize("send", [page_post, api_post], ids=["page", "api"])
@pytest.mark.parametrize("kind", FORGED)
def test_a_forged_server_event_is_refused_and_its_neighbour_stored(participant, session, send, kind):
    before = Event.objects.filter(participant=participant, type=kind).count()
    data = {"relevant": "d1", "off_topic": "d2", "order": ["d1", "d2"], "passed": True}
    acks = send(
        participant,
        [
            {"id": f"forged-{kind}", "type": kind, "session": session.pk, "data": data},
            {"id": f"honest-{kind}", "type": "tab_hidden", "session": session.pk},
        ],
    )
    assert acks[0] == {
        "id": f"forged-{kind}",
        "ok": False,
        "error": f"type: {kind!r} is written by the server; a client cannot send it",
    }
    assert acks[1]["ok"] is True
    assert Event.objects.filter(participant=participant, type=kind).count() == before
    assert not Event.objects.filter(participant=participant, client_event_id=f"forged-{kind}").exists()
    assert Event.objects.filter(participant=participant, client_event_id=f"honest-{kind}").exists()


def test_a_forged_pin_of_real_documents_pins_nothing(participant, session):
    first, second = participant.study.collection.documents.order_by("id")[:2]
    pin = {"topic": "1", "relevant": first.external_id, "off_topic": second.external_id, "relevant_grade": 3}
    page_post(participant, [{"id": "pin", "type": "gold_pair", "session": session.pk, "data": pin}])
    assert gold_pinned(participant=participant, session=session) is None


def _types_the_server_writes() -> set[str]:
    """The literal `type=` of every event_create(...), Event.objects.create(...) and form's FormEvent(...) in
    studies/, and the module constants they name (PIN_EVENT, RELOAD_EVENT)."""
    constants: dict[str, str] = {}
    calls: list[ast.expr] = []
    for path in (ROOT / "studies").rglob("*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.endswith("_EVENT"):
                        constants[target.id] = node.value.value
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                owner = getattr(getattr(node.func, "value", None), "attr", None)
                if name in ("event_create", "FormEvent") or (name == "create" and owner == "objects"):
                    calls += [k.value for k in node.keywords if k.arg == "type"]
    types = set()
    for value in calls:
        if isinstance(value, ast.Constant):
            types.add(value.value)
        elif isinstance(value, ast.Name) and value.id in constants:
            types.add(constants[value.id])
    return types


def test_every_type_the_server_writes_is_server_owned_or_one_the_page_sends():
    written = _types_the_server_writes()
    assert {"consent", "gold", "gold_pair", "page_reload"} <= written  # the walk finds the writers
    assert written - SERVER_EVENT_TYPES <= {"session_end"}  # the page reports that one too
