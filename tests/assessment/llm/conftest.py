"""Fixtures of the LLM assessor's tests: the fake model server on loopback (which OUTBOUND_ALLOW must name,
as for the search systems' tests), no waiting between retries, and a study whose scenario S1 has a pool of
three documents that two people graded (d1 agreed, d2 and d3 not)."""

import pytest

from studies.assessment.llm import audits, setup

from ..conftest import grade_all
from .audit_judges import GRADES
from .fake_model_server import FakeModelServer

API_KEY = "sk-test-7f3a9c1e5b2d4e6f8a0b1c2d3e4f5a6b"


@pytest.fixture(autouse=True)
def loopback_allowed(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    settings.OUTBOUND_BREAKER_FAILURES = 1000  # these tests fail on purpose, often
    settings.LLM_RETRY_BACKOFF_SECONDS = 0


@pytest.fixture
def model_server():
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def pooled_study(assessed_study, make_assessors):
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    grade_all(assessed_study, {"d1": [2, 2], "d2": [1, 3], "d3": [0, 1]}, [ann, ben])
    return assessed_study


@pytest.fixture
def llm_assessor(pooled_study, model_server, alice):
    return setup.llm_assessor_create(
        study=pooled_study,
        created_by=alice,
        endpoint_url=model_server.endpoint,
        model_name="llama3.1:8b",
        api_key=API_KEY,
        requests_per_minute=100_000,
        max_retries=2,
        timeout_seconds=1,
    )


@pytest.fixture
def run_llm(django_capture_on_commit_callbacks, alice):
    """run_llm(assessor, scenarios=None) -> the run, finished (eager Celery, through the real task)."""
    from studies.assessment.llm import runs

    def run(assessor, scenarios=None):
        with django_capture_on_commit_callbacks(execute=True):
            started = runs.llm_run_start(assessor=assessor, created_by=alice, scenarios=scenarios)
        started.refresh_from_db()
        return started

    return run


@pytest.fixture
def api(client, alice):
    """The test client, signed in as Alice (a researcher of the study): the API by session."""
    client.force_login(alice)
    return client


# The robustness audit's (audit_judges.GRADES: two scenarios, two people).
@pytest.fixture
def audited_study(assessed_study, make_assessors):
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    for code, grades in GRADES.items():
        grade_all(assessed_study, grades, [ann, ben], code=code)
    return assessed_study


@pytest.fixture
def judge(audited_study, model_server, alice):
    return setup.llm_assessor_create(
        study=audited_study,
        created_by=alice,
        endpoint_url=model_server.endpoint,
        model_name="llama3.1:8b",
        api_key=API_KEY,
        requests_per_minute=100_000,
        max_retries=1,
        timeout_seconds=2,
    )


@pytest.fixture
def audit_of(django_capture_on_commit_callbacks, alice):
    def run(assessor, seed=audits.DEFAULT_SEED):
        with django_capture_on_commit_callbacks(execute=True):
            audit = audits.llm_audit_start(assessor=assessor, created_by=alice, seed=seed)
        audit.refresh_from_db()
        return audit

    return run
