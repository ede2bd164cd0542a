"""A language-model run on the real Celery worker (.ci/run's second pass: PostgreSQL, Redis, a worker serving
both queues): the run is routed to the `llm` queue, the worker takes it from there, calls the local fake model
server and grades the pool, and this process sees the finished run. Skipped on a plain checkout."""

import time

import pytest

from studies.assessment.llm import runs, setup
from studies.models import LLMRun

pytestmark = [pytest.mark.needs_worker, pytest.mark.django_db(transaction=True)]


def test_a_run_queued_on_llm_is_graded_by_the_worker(real_worker, pooled_study, model_server, alice):
    assessor = setup.llm_assessor_create(
        study=pooled_study,
        created_by=alice,
        endpoint_url=model_server.endpoint,
        model_name="llama3.1:8b",
        requests_per_minute=100_000,
        timeout_seconds=5,
    )
    run = runs.llm_run_start(assessor=assessor, created_by=alice)  # autocommit: queued at once
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.finished:
            break
        time.sleep(0.25)
    assert run.status == LLMRun.Status.DONE, (run.status, run.error)
    assert run.done == run.total == 3 and len(model_server.requests) == 3
