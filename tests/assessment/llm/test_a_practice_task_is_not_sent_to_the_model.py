"""A practice task's documents are never sent to a model, even when its pool was built before the
fix; a run asked for it by name is refused, by the service and by the API (400 naming `scenarios`)."""

import pytest

from studies.assessment.llm import runs, setup
from studies.errors import AssessmentError
from studies.models import LLMRequest

from ..conftest import practice_pool_from_before

pytestmark = pytest.mark.django_db


@pytest.fixture
def practice_assessor(practice_study, model_server, alice):
    practice_pool_from_before(practice_study, "d9", "d10")
    return setup.llm_assessor_create(
        study=practice_study,
        created_by=alice,
        endpoint_url=model_server.endpoint,
        model_name="llama3.1:8b",
        requests_per_minute=100_000,
        max_retries=0,
        timeout_seconds=1,
    )


def test_a_run_over_every_scenario_leaves_the_practice_task_out(practice_assessor, run_llm):
    run = run_llm(practice_assessor)
    assert run.total == 0
    assert not LLMRequest.objects.filter(run=run).exists()


def test_a_run_asked_for_the_practice_task_is_refused(practice_assessor, practice_study, alice):
    with pytest.raises(AssessmentError, match="scenarios: P is a practice task"):
        runs.llm_run_start(
            assessor=practice_assessor,
            created_by=alice,
            scenarios=[practice_study.scenarios.get(code="P")],
        )
    assert not practice_assessor.runs.exists()


def test_the_api_refuses_it_naming_the_field(client, practice_assessor, practice_study, alice):
    client.force_login(alice)
    response = client.post(
        f"/api/studies/{practice_study.pk}/llm-assessors/{practice_assessor.pk}/runs/",
        {"scenarios": ["P"]},
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert "practice task" in str(response.json()["scenarios"])
    assert not practice_assessor.runs.exists()
