"""Liveness and readiness for load balancers (docs/deploying.md, "Health endpoints").

`/health/live`: the process answers; no I/O. `/health/ready`: this node can serve: the database answers, no
migration is unapplied, the cache answers, the broker answers (when one is configured), and, for information
only, what the apps register (studies/apps.py: the search indexes this node's INDEX_ROOT holds). 200 when
ready, else 503; the JSON body names each check and its state, never a URL, a password or an exception's text
(which may hold either), and only to an operator: a request with `Authorization: Bearer <HEALTH_TOKEN>`, or a
signed-in superuser's browser (their session cookie; `is_staff` marks every lab's researcher here, not the
installation's operator). Anyone else gets the bare status (`{"status": "ready"}` or `"unready"`, with the
same code), computed from the gating checks only (the index counts, information for operators, are not read
for them).

Served by a middleware placed before SecurityMiddleware and CommonMiddleware: a balancer probes a node by its
own address over plain HTTP, which ALLOWED_HOSTS (400) and SECURE_SSL_REDIRECT (301) would otherwise refuse.
Only GET and HEAD of these two exact paths are answered here; everything else goes on down the stack.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from importlib import import_module

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

LIVE_PATH = "/health/live"
READY_PATH = "/health/ready"
BROKER_TIMEOUT_SECONDS = 2
# Once every migration is seen applied, this process does not load the migration graph again.
_migrations_applied = False


class CheckFailed(Exception):
    """A check's failure, with a short reason safe to show (no URL, no secret)."""


def check_database() -> dict:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT 1")
    return {}


def check_migrations() -> dict:
    global _migrations_applied
    if not _migrations_applied:
        executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
        unapplied = executor.migration_plan(executor.loader.graph.leaf_nodes())
        if unapplied:
            raise CheckFailed(f"{len(unapplied)} unapplied migration(s): run manage.py migrate")
        _migrations_applied = True
    return {}


def check_cache() -> dict:
    key = "sessionlab:health"
    cache.set(key, "ok", 10)
    if cache.get(key) != "ok":
        raise CheckFailed("the cache did not return what was written")
    return {}


def check_broker() -> dict:
    from celery import current_app

    if current_app.conf.task_always_eager:
        return {"configured": False}
    with current_app.connection_for_write(connect_timeout=BROKER_TIMEOUT_SECONDS) as connection:
        connection.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
    return {"configured": True}


# name -> check; a failure makes the node unready unless informational or in HEALTH_READY_IGNORE. The apps
# add their own checks with `register` (studies/apps.py), so that this module never imports them.
CHECKS: dict[str, Callable[[], dict]] = {
    "database": check_database,
    "migrations": check_migrations,
    "cache": check_cache,
    "broker": check_broker,
}
INFORMATIONAL: set[str] = set()


def register(name: str, check: Callable[[], dict], *, informational: bool = False) -> None:
    """Add an app's check to the readiness report; `informational` ones are read for operators only and
    never make the node unready."""
    CHECKS[name] = check
    if informational:
        INFORMATIONAL.add(name)


def readiness(*, informational: bool = True) -> tuple[bool, dict]:
    """(ready, per-check report). A check that raises fails with its CheckFailed reason, or only its
    exception's class name (a driver's message may hold a host or a password). informational=False leaves
    out the checks that cannot make the node unready."""
    report: dict[str, dict] = {}
    ready = True
    ignored = set(settings.HEALTH_READY_IGNORE) | INFORMATIONAL
    for name, check in CHECKS.items():
        if not informational and name in INFORMATIONAL:
            continue
        try:
            report[name] = {"ok": True, **check()}
        except CheckFailed as failure:
            report[name] = {"ok": False, "error": str(failure)}
        except Exception as error:  # noqa: BLE001 - any failure of a dependency is "not ready", never a 500
            logger.warning("readiness check %s failed: %r", name, error)
            report[name] = {"ok": False, "error": type(error).__name__}
        if not report[name]["ok"] and name not in ignored:
            ready = False
        elif not report[name]["ok"]:
            report[name]["gating"] = False
    return ready, report


def is_operator(request) -> bool:
    """Whether the request is an operator's: it carries the operator's token (HEALTH_TOKEN, compared in
    constant time; empty: no token is), or a signed-in, active superuser's session cookie (not is_staff: every
    lab's researcher has it, docs/security.md, "Roles"). A probe that sends neither costs no query here."""
    token = settings.HEALTH_TOKEN
    sent = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return True
    return _is_superuser_session(request)


def _is_superuser_session(request) -> bool:
    """The session middleware has not run (this middleware is before it): the session is read as it would
    read it, and the user as AuthenticationMiddleware would (get_user checks the session's password hash)."""
    key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    if not key:
        return False
    from django.contrib.auth import get_user  # the app registry is ready by the first request

    request.session = import_module(settings.SESSION_ENGINE).SessionStore(key)
    try:
        user = get_user(request)
    except Exception as error:  # noqa: BLE001 - the sessions' store down: not an operator, never a 500
        logger.warning("health: the session could not be read: %r", error)
        return False
    return bool(user.is_active and user.is_superuser)


def _no_store(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store"
    return response


class HealthProbeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        path = request.path_info.rstrip("/")
        if request.method not in ("GET", "HEAD") or path not in (LIVE_PATH, READY_PATH):
            return self.get_response(request)
        if path == LIVE_PATH:
            return _no_store(JsonResponse({"status": "live"}))
        operator = is_operator(request)
        ready, report = readiness(informational=operator)
        if not operator:  # a bare status: which check fails, and the node's indexes, are the operator's
            return _no_store(
                JsonResponse({"status": "ready" if ready else "unready"}, status=200 if ready else 503)
            )
        failing = sorted(
            name for name, entry in report.items() if not entry["ok"] and entry.get("gating", True)
        )
        body = {"status": "ready" if ready else "unready", "failing": failing, "checks": report}
        return _no_store(JsonResponse(body, status=200 if ready else 503))
