"""/health/ready's details (its checks, this node's index counts) go to the operator: the token,
or a signed-in superuser's browser. A researcher is `is_staff` in every lab here, so staff alone is not
enough; a probe without a session cookie costs no query for the user."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db


@pytest.fixture
def production_like(settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["lab.example.org"]
    settings.HEALTH_TOKEN = ""  # no token: only a session can be an operator's
    return settings


def _ready(client):
    return client.get("/health/ready", HTTP_HOST="lab.example.org", secure=True)


def test_a_signed_in_superuser_gets_every_check(production_like, django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_superuser("root", password="root-password"))
    body = _ready(client).json()
    assert body["status"] == "ready" and body["failing"] == []
    assert set(body["checks"]) == {"database", "migrations", "cache", "broker", "search_indexes"}


def test_a_researcher_s_session_gets_the_bare_status(production_like, alice):
    client = Client()
    client.force_login(alice)  # is_staff: every lab's researcher
    assert _ready(client).json() == {"status": "ready"}


def test_an_inactive_superuser_or_a_forged_session_gets_the_bare_status(production_like, django_user_model):
    root = django_user_model.objects.create_superuser("root", password="root-password")
    client = Client()
    client.force_login(root)
    root.is_active = False
    root.save(update_fields=["is_active"])
    assert _ready(client).json() == {"status": "ready"}
    forged = Client()
    forged.cookies[production_like.SESSION_COOKIE_NAME] = "not-a-session-key"
    assert _ready(forged).json() == {"status": "ready"}


def test_a_probe_without_a_session_reads_no_user(production_like):
    with CaptureQueriesContext(connection) as queries:
        assert _ready(Client()).json() == {"status": "ready"}
    assert not [q for q in queries if "session" in q["sql"] or "auth_user" in q["sql"]]
