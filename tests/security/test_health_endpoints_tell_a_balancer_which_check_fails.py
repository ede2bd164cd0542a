"""/health/live and /health/ready (sessionlab/health.py): a balancer's probe by a node's own address over
plain HTTP gets an answer, 200 when ready, 503 naming each failing check, and no secret in the body."""

import json

import pytest
from django.test import Client

from sessionlab import health

TOKEN = "operator-token"


def _probe(path, *, operator=True, **extra):
    # A node's own address as Host (not in ALLOWED_HOSTS), plain HTTP; an operator's monitor sends the token.
    if operator:
        extra.setdefault("HTTP_AUTHORIZATION", f"Bearer {TOKEN}")
    return Client().get(path, HTTP_HOST="10.0.0.5:8000", **extra)


@pytest.fixture
def production_like(settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["lab.example.org"]
    settings.HEALTH_TOKEN = TOKEN
    return settings


@pytest.mark.django_db
@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Bearer {TOKEN}x", "Basic x"])
def test_anyone_without_the_token_gets_the_bare_status_only(production_like, monkeypatch, authorization):
    """/health/ready once answered anyone with its checks and this node's index counts (~120 ms)."""
    counted = []
    monkeypatch.setitem(health.CHECKS, "search_indexes", lambda: counted.append(1) or {})
    extra = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    response = _probe("/health/ready", operator=False, **extra)
    assert response.status_code == 200 and response.json() == {"status": "ready"}
    assert counted == []  # the operator's information is not even read
    monkeypatch.setitem(health.CHECKS, "cache", lambda: (_ for _ in ()).throw(RuntimeError("down")))
    response = _probe("/health/ready", operator=False, **extra)
    assert response.status_code == 503 and response.json() == {"status": "unready"}


@pytest.mark.django_db
def test_without_a_token_set_nobody_gets_details(production_like):
    production_like.HEALTH_TOKEN = ""
    response = _probe("/health/ready", HTTP_AUTHORIZATION="Bearer ")
    assert response.json() == {"status": "ready"}


def test_live_answers_without_io_and_without_the_host_check(production_like):
    response = _probe("/health/live")  # no django_db mark: a query would raise
    assert response.status_code == 200
    assert response.json() == {"status": "live"}
    assert response["Cache-Control"] == "no-store"


@pytest.mark.django_db
def test_ready_is_200_with_every_check_when_the_node_is_ready(production_like):
    response = _probe("/health/ready")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ready" and body["failing"] == []
    assert set(body["checks"]) == {"database", "migrations", "cache", "broker", "search_indexes"}
    assert all(entry["ok"] for entry in body["checks"].values())
    assert body["checks"]["broker"] == {"ok": True, "configured": False}  # eager: no broker configured


def _secret_failure():
    raise RuntimeError("could not connect to postgres://lab:hunter2@db.internal:5432/sessionlab")


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["database", "migrations", "cache", "broker"])
def test_each_failing_check_makes_the_node_unready_and_is_named(production_like, monkeypatch, name):
    monkeypatch.setitem(health.CHECKS, name, _secret_failure)
    response = _probe("/health/ready")
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == [name]
    assert body["checks"][name] == {"ok": False, "error": "RuntimeError"}
    assert "hunter2" not in response.content.decode() and "db.internal" not in response.content.decode()


@pytest.mark.django_db
def test_an_unapplied_migration_is_reported(production_like, monkeypatch):
    class Executor:
        def __init__(self, connection):
            self.loader = type(
                "Loader", (), {"graph": type("Graph", (), {"leaf_nodes": lambda self: []})()}
            )()

        def migration_plan(self, targets):
            return [("studies", "0099_future")]

    monkeypatch.setattr(health, "_migrations_applied", False)
    monkeypatch.setattr(health, "MigrationExecutor", Executor)
    body = json.loads(_probe("/health/ready").content)
    assert body["failing"] == ["migrations"]
    assert body["checks"]["migrations"]["error"] == "1 unapplied migration(s): run manage.py migrate"


@pytest.mark.django_db
def test_an_unreachable_broker_fails_readiness(production_like, monkeypatch):
    from celery import current_app

    monkeypatch.setitem(current_app.conf, "task_always_eager", False)
    monkeypatch.setitem(current_app.conf, "broker_url", "redis://127.0.0.1:1/0")
    # Celery's conf.broker_url reads the CELERY_BROKER_URL environment first, which CI's broker pass sets.
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:1/0")
    response = _probe("/health/ready")
    assert response.status_code == 503
    assert response.json()["failing"] == ["broker"]


@pytest.mark.django_db
def test_an_ignored_check_is_reported_but_does_not_fail_readiness(production_like, monkeypatch):
    production_like.HEALTH_READY_IGNORE = ["broker"]
    monkeypatch.setitem(health.CHECKS, "broker", _secret_failure)
    response = _probe("/health/ready")
    assert response.status_code == 200
    assert response.json()["checks"]["broker"] == {"ok": False, "error": "RuntimeError", "gating": False}


@pytest.mark.django_db
def test_the_search_indexes_of_this_node_are_information_only(production_like, tmp_path):
    production_like.INDEX_ROOT = tmp_path / "nothing-here"  # no version recorded, no folder: still ready
    response = _probe("/health/ready")
    assert response.status_code == 200
    assert response.json()["checks"]["search_indexes"] == {
        "ok": True,
        "index_root": "missing",
        "current": 0,
        "stale": 0,
        "missing": 0,
    }


def test_other_paths_and_methods_keep_the_host_check(production_like):
    assert Client().post("/health/ready", HTTP_HOST="10.0.0.5:8000").status_code == 400
    assert _probe("/health/other").status_code == 400
