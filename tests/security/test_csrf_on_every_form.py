"""CSRF: every form a page renders carries the token, and every state-changing request without one is
refused (403) and changes nothing, except the endpoints that authenticate by a header or by credentials in
the body, which a browser cannot be tricked into sending (DOCUMENTED_EXEMPT, docs/security.md)."""

import re
import secrets

import pytest
from django.test import Client

from studies.participation.way.form_steps import consent_record, questionnaire_save, session_start
from studies.participation.way.steps import session_end

from .conftest import cid
from .permission_matrix import OK, db_snapshot, role_clients, send_row
from .test_permission_matrix import ALL_ROWS
from .test_permission_matrix_api import API_ROWS
from .test_permission_matrix_pages import PAGE_ROWS

# Authenticated by `Authorization: Participant <token>` (never a cookie) or by the username and password in
# the body (no session is opened): a cross-site form cannot forge either, so no CSRF token is asked.
# The panel's status endpoint authenticates only by the study's secret in `X-SessionLab-Secret`, a header too.
DOCUMENTED_EXEMPT = {
    "api:token",
    "api:participant_session_start",
    "api:participant_events",
    "panel:status",
    "api:participant_consent",
    "api:participant_questionnaire",
    "api:participant_check",
    "api:participant_pre_task",
    "api:participant_gold",
    "api:participant_post_task",
    "api:participant_withdraw_self",
}
PREFERRED = ("researcher", "assessor", "participant", "other_participant", "anonymous", "other_researcher")
FORM = re.compile(r"<form\b([^>]*)>(.*?)</form>", re.S | re.I)


def _allowed_role(row):
    # Rows nobody passes (logout: a redirect for all; Bob deleting Alice's study) are sent as Bob.
    return next((role for role in PREFERRED if row.expect.get(role) == OK), "researcher")


def _post_forms(html: str):
    return [
        (attrs, body) for attrs, body in FORM.findall(html) if re.search(r"method=[\"']?post", attrs, re.I)
    ]


def _csrf_clients(world):
    clients = role_clients(world)
    for role, client in clients.items():
        enforced = Client(enforce_csrf_checks=True, **client.defaults)
        enforced.cookies = client.cookies
        clients[role] = enforced
    return clients


def _pages(world):
    """(name, role, path) of every page a GET row renders for an allowed role."""
    for (name, method), row in sorted(ALL_ROWS.items(), key=str):
        if method == "GET" and not name.startswith("admin:") and "admin/" not in name:
            role = _allowed_role(row)
            yield name, role, row.path(world, role)
    yield "admin:login", "anonymous", "/admin/login/"


def test_every_post_form_on_every_page_carries_the_csrf_token(world):
    clients = role_clients(world)
    seen = 0
    missing = []
    for name, role, path in _pages(world):
        response = clients[role].get(path, follow=True)
        if "text/html" not in response.get("Content-Type", ""):
            continue
        for attrs, body in _post_forms(response.content.decode()):
            seen += 1
            if 'name="csrfmiddlewaretoken"' not in body:
                missing.append(f"{name} {path}: <form{attrs}>")
    assert not missing, "\n".join(missing)
    assert seen >= 10  # the researcher, assessment and login pages have many


def test_every_step_of_the_participants_way_carries_the_csrf_token(world):
    """The participant's page is a different form at each step: consent, questionnaire, scenario, search,
    post-task, withdraw."""
    p = world.other_participant
    client = Client()
    home = f"/p/{p.access_token}/"

    def forms_ok(path=home):
        html = client.get(path).content.decode()
        forms = _post_forms(html)
        assert forms and all('name="csrfmiddlewaretoken"' in body for _a, body in forms), path
        return html

    assert "consent" in forms_ok().lower()
    consent_record(participant=p, consent_version=p.study.consent_version, client_event_id=cid())
    forms_ok()
    questionnaire_save(
        participant=p,
        client_event_id=cid(),
        answers={"search_engine_years": 1, "domain_years": 1, "search_skill": 1},
    )
    forms_ok()
    session = session_start(
        participant=p, assignment=p.assignments.order_by("position").first(), client_event_id=cid()
    )
    html = client.get(home).content.decode()
    assert "csrfmiddlewaretoken" in html or "csrftoken" in client.cookies  # the search page posts by fetch
    session_end(participant=p, session=session, reason="satisfied", client_event_id=cid())
    forms_ok()
    forms_ok(home + "withdraw/")


@pytest.mark.parametrize(
    "key", sorted((k for k in ALL_ROWS if k[1] != "GET"), key=str), ids=lambda k: f"{k[1]} {k[0]}"
)
def test_a_state_changing_request_without_the_token_is_refused(key, world):
    row = ALL_ROWS[key]
    role = _allowed_role(row)
    client = _csrf_clients(world)[role]
    if key[0] in ("login", "admin:login"):
        client.get(row.path(world, role))  # the login form sets the cookie first
    before = db_snapshot(world)
    response = send_row(client, row, world, role)
    if key[0] in DOCUMENTED_EXEMPT:
        assert response.status_code != 403 or b"CSRF" not in response.content
        return
    assert response.status_code == 403 and b"CSRF" in response.content, f"{key}: {response.status_code}"
    assert db_snapshot(world) == before


def test_the_login_forms_refuse_a_post_without_the_token(world):
    client = Client(enforce_csrf_checks=True)
    for path in ("/accounts/login/", "/admin/login/"):
        response = client.post(path, {"username": "alice", "password": "alice-password"})
        assert response.status_code == 403, path


def test_the_exempt_endpoints_are_exactly_those_documented():
    """A new endpoint is not exempt by accident: every non-GET row is refused above unless listed here, and
    every listed name is a route whose authentication is a header or the body."""
    names = {name for name, _ in {**PAGE_ROWS, **API_ROWS}}
    assert DOCUMENTED_EXEMPT <= names


def test_the_api_refuses_a_session_write_without_the_token_but_takes_a_token_header(world):
    researcher = Client(enforce_csrf_checks=True)
    researcher.force_login(world.users["bob"])
    path = f"/api/studies/{world.study.pk}/"
    assert researcher.patch(path, {"description": "x"}, content_type="application/json").status_code == 403
    from rest_framework.authtoken.models import Token

    key = Token.objects.create(user=world.users["bob"]).key
    by_header = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Token {key}")
    assert by_header.patch(path, {"description": "x"}, content_type="application/json").status_code == 200


def test_the_participants_event_batch_needs_the_token_from_a_browser(world):
    client = Client(enforce_csrf_checks=True)
    path = f"/p/{world.participant.access_token}/events/"
    body = {
        "events": [{"id": secrets.token_hex(8), "type": "page_view", "session": world.session.pk, "data": {}}]
    }
    assert client.post(path, body, content_type="application/json").status_code == 403
    client.get(f"/p/{world.participant.access_token}/")  # sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    response = client.post(path, body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200
