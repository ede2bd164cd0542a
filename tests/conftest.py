"""Fixtures shared by every test module.

`shared_data` is the folder of real data (trec_eval's regression files, the TREC 2012 Session Track log)
that `.ci/run` names with SESSIONLAB_DATA. On a newcomer's clone it is unset and the tests that need it skip,
saying so; in CI (CI=true) a missing folder fails them instead, so a gap cannot hide. The Cranfield
collection ships with the repository (studies/demo_data/cranfield): `cranfield_folder` names that copy, and
the tests that read only Cranfield never skip.
"""

import os
import threading
from pathlib import Path

import pytest
from django.core.servers.basehttp import ThreadedWSGIServer
from django.test.testcases import LiveServerThread


class _OneRequestAtATimeOnASharedConnection(ThreadedWSGIServer):
    """The live server's request threads share the test's one in-memory SQLite connection (Django does so on
    purpose: it is the test database). Two requests at once on it can deadlock inside CPython's sqlite3 (one
    thread holds the connection's mutex in a SQL function waiting for the GIL, the other holds the GIL waiting
    for the mutex), so a browser's parallel requests are answered one at a time then. With PostgreSQL each
    thread has its own connection and requests run in parallel as in production.

    `request_lock` is that lock (None with PostgreSQL): a test thread that plays a Celery worker beside the
    browser takes it while it uses the shared connection (tests/browser/worker.py)."""

    request_lock = None  # a threading.Lock on SQLite

    def set_app(self, application):
        if not self.connections_override:
            return super().set_app(application)
        lock = self.request_lock = threading.Lock()

        def one_at_a_time(environ, start_response):
            with lock:
                return application(environ, start_response)

        return super().set_app(one_at_a_time)


LiveServerThread.server_class = _OneRequestAtATimeOnASharedConnection


def _shared_data_or_skip() -> Path:
    raw = os.environ.get("SESSIONLAB_DATA", "")
    in_ci = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
    if raw and Path(raw).is_dir():
        return Path(raw)
    message = (
        "needs the shared data folder (trec_eval and ir_measures test files, TREC Session 2012): "
        "set SESSIONLAB_DATA=../shared/data" + (f" (SESSIONLAB_DATA={raw!r} is not a folder)" if raw else "")
    )
    if in_ci:
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return _shared_data_or_skip()


SHIPPED_CRANFIELD = Path(__file__).resolve().parent.parent / "studies" / "demo_data" / "cranfield"


@pytest.fixture(scope="session")
def cranfield_folder() -> Path:
    """The Cranfield collection shipped in the repository (the demo's; SOURCE.md there), the same files as
    the shared data folder's cranfield/: the tests that read only Cranfield run on every clone."""
    assert (SHIPPED_CRANFIELD / "cran.all.1400").is_file(), (
        f"the shipped Cranfield is missing: {SHIPPED_CRANFIELD}"
    )
    return SHIPPED_CRANFIELD


# The cast (after healthchecks' hc/test.py): Alice owns the study, Bob researches on it with her,
# Charlie is a researcher with no access to it.
@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="alice-password", is_staff=True)


@pytest.fixture
def bob(django_user_model, study):
    user = django_user_model.objects.create_user("bob", password="bob-password", is_staff=True)
    study.researchers.add(user)
    return user


@pytest.fixture
def charlie(django_user_model):
    return django_user_model.objects.create_user("charlie", password="charlie-password", is_staff=True)


@pytest.fixture
def study(alice):
    from studies.design import services

    # Open, as a study is once its set-up checklist passed: most areas' tests enrol in it straight away. A new
    # study is a draft; the draft's own tests (tests/lifecycle/) make one.
    return services.study_create(
        owner=alice, name="Alice's study", consent_text="Consent text.", status="open"
    )


@pytest.fixture
def designed_study(study):
    """Alice's study with the paper's design: four scenarios, two systems, no participants yet."""
    from tests.factories import study_designed

    return study_designed(study)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2 is slow by design; tests create many users and gain nothing from it.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture
def chromium(monkeypatch):
    """Debian's Chromium driven by Playwright (never `playwright install`: nothing is downloaded here).

    Skips where Chromium is missing, except in CI, where that is a failure."""
    if not Path(CHROMIUM).exists():
        message = f"the browser test needs Debian's chromium at {CHROMIUM} (apt-get install chromium)"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(message)
        pytest.skip(message)
    # Playwright's sync API runs an event loop in this thread; the test's ORM calls stay synchronous. Set for
    # this test only, so that no later subprocess (e.g. `check --deploy`) inherits it.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(autouse=True)
def _eager_celery_unless_real_worker(request):
    """CI's second pass sets a broker for the whole suite; a test whose data sit in an uncommitted transaction
    must run its tasks in-process, so only needs_worker tests send tasks to the real worker."""
    if request.node.get_closest_marker("needs_worker"):
        yield
        return
    from sessionlab.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = saved


def pytest_collection_modifyitems(config, items):
    """`make test` runs the needs_worker tests in a serial pytest of their own (the real worker reads the
    one test database test_<name>); a test asking for `real_worker` without the marker would run among the
    parallel ones, on a database the worker never sees. Refused here rather than failing or hanging later."""
    unmarked = [
        i.nodeid
        for i in items
        if "real_worker" in getattr(i, "fixturenames", ()) and not i.get_closest_marker("needs_worker")
    ]
    if unmarked:
        raise pytest.UsageError("tests using real_worker must be marked needs_worker: " + ", ".join(unmarked))
    misplaced = [
        i.nodeid
        for i in items
        if "chromium" in getattr(i, "fixturenames", ()) and not _drives_chromium(i.nodeid)
    ]
    if misplaced:
        raise pytest.UsageError(
            "a test file that drives Chromium lives in tests/browser/ or has 'browser' in its name (the "
            "parallel run keeps those files on one process): " + ", ".join(misplaced)
        )


def _drives_chromium(nodeid: str) -> bool:
    path = nodeid.split("::", 1)[0]
    return path.startswith("tests/browser/") or "browser" in path.rsplit("/", 1)[-1]


@pytest.hookimpl(optionalhook=True)  # `-p no:xdist` (the needs_worker run) knows no such hook
def pytest_xdist_make_scheduler(config, log):
    """Files as units (`--dist loadfile`), except that every file driving Chromium goes to one process, one
    after another: two Chromiums with their live servers at once on a 2-core machine made a 15 s wait time
    out under load. The other processes take the remaining files meanwhile."""
    from xdist.scheduler import LoadFileScheduling

    class ChromiumFilesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "chromium" if _drives_chromium(nodeid) else super()._split_scope(nodeid)

    return ChromiumFilesTogether(config, log)


@pytest.fixture
def real_worker():
    """The real Celery worker that .ci/run starts in its second pass (PostgreSQL + Redis). A plain checkout
    skips the test; in CI a broker without a worker is a failure, not a skip. Under pytest-xdist the test
    database is test_<name>_gwN, which the worker (on test_<name>) never sees: a failure too, never a skip."""
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if broker and os.environ.get("SESSIONLAB_WORKER_RUNNING") == "1":
        if os.environ.get("PYTEST_XDIST_WORKER"):
            pytest.fail(
                "a needs_worker test ran under pytest-xdist, on a database the worker does not read: run the "
                "needs_worker tests serially (`-p no:xdist -m needs_worker`, as `make test` does)"
            )
        return
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"} and broker:
        pytest.fail("CELERY_BROKER_URL is set but SESSIONLAB_WORKER_RUNNING is not 1: CI must start a worker")
    pytest.skip(
        "needs a real Celery worker: set CELERY_BROKER_URL and SESSIONLAB_WORKER_RUNNING=1 (.ci/run does)"
    )


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's test database, dropped at the end even if the real Celery worker of CI's second pass is
    still in a task on it: PostgreSQL refuses to drop a database another session uses, which left the database
    behind with a warning. Those sessions are ended first (the worker is stopped right after anyway)."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
