"""Language-model runs cannot starve scoring or another lab: they go to a Celery queue of their own
(`llm`), a run is stopped at LLM_RUN_SOFT_TIME_LIMIT_SECONDS keeping what it graded, and at most
LLM_RUNS_PER_LAB runs of one lab (a study owner's studies) run at once, a further one waiting queued while
another lab's runs go on."""

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from sessionlab.celery import app
from studies.assessment.llm import runs, setup
from studies.design import services
from studies.models import LLMRun
from studies.tasks import llm_run_task


def queue_of(task_name: str) -> str:
    return app.amqp.router.route({}, task_name, args=(1,), kwargs={})["queue"].name


def test_llm_runs_go_to_their_own_queue_and_scoring_stays_on_the_default():
    assert queue_of("studies.tasks.llm_run_task") == "llm"
    assert queue_of("scoring.tasks.stale_runs_requeue_task") == "celery"


def test_the_task_carries_soft_and_hard_time_limits(settings):
    assert llm_run_task.soft_time_limit == settings.LLM_RUN_SOFT_TIME_LIMIT_SECONDS
    assert llm_run_task.time_limit == settings.LLM_RUN_SOFT_TIME_LIMIT_SECONDS + 60


def test_a_run_stopped_at_its_time_limit_fails_saying_so_and_keeps_what_it_graded(
    llm_assessor, model_server, run_llm, monkeypatch
):
    sent = []

    def slow_model(**kwargs):
        if sent:
            raise SoftTimeLimitExceeded()
        sent.append(1)
        return real(**kwargs)

    real = runs.chat_complete
    monkeypatch.setattr(runs, "chat_complete", slow_model)
    run = run_llm(llm_assessor)
    assert run.status == "failed" and "time limit" in run.error and "sends the rest" in run.error
    assert run.done == 1


def running_run(assessor) -> LLMRun:
    return LLMRun.objects.create(assessor=assessor, status="running", started_at=timezone.now())


@pytest.fixture
def second_assessor(pooled_study, model_server, alice):
    return setup.llm_assessor_create(
        study=pooled_study, created_by=alice, endpoint_url=model_server.endpoint, model_name="m2"
    )


def test_a_run_past_the_lab_s_cap_waits_queued_until_a_place_is_free(
    llm_assessor, second_assessor, settings, alice
):
    settings.LLM_RUNS_PER_LAB = 1
    blocker = running_run(second_assessor)
    run = LLMRun.objects.create(assessor=llm_assessor, total=3)
    with pytest.raises(runs.LabAtCap):
        runs.llm_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "queued" and run.requests.count() == 0

    LLMRun.objects.filter(pk=blocker.pk).update(status="done")
    assert runs.llm_run_execute(run_id=run.pk).status == "done"


def test_a_lost_run_holds_no_place(llm_assessor, second_assessor, settings):
    settings.LLM_RUNS_PER_LAB = 1
    lost = running_run(second_assessor)
    LLMRun.objects.filter(pk=lost.pk).update(started_at=timezone.now() - timezone.timedelta(hours=2))
    run = LLMRun.objects.create(assessor=llm_assessor)
    assert runs.llm_run_execute(run_id=run.pk).status == "done"


def test_another_lab_s_runs_do_not_count_against_this_lab(llm_assessor, model_server, settings, charlie):
    settings.LLM_RUNS_PER_LAB = 1
    other_study = services.study_create(owner=charlie, name="Charlie's", consent_text="C.", status="open")
    theirs = setup.llm_assessor_create(
        study=other_study, created_by=charlie, endpoint_url=model_server.endpoint, model_name="m"
    )
    running_run(theirs)
    run = LLMRun.objects.create(assessor=llm_assessor)
    assert runs.llm_run_execute(run_id=run.pk).status == "done"


def test_in_eager_mode_a_run_past_the_cap_fails_saying_why(llm_assessor, second_assessor, settings, run_llm):
    settings.LLM_RUNS_PER_LAB = 1
    running_run(second_assessor)
    run = run_llm(llm_assessor)
    assert run.status == "failed" and "LLM_RUNS_PER_LAB" in run.error


def test_a_worker_started_without_a_queue_serves_both():
    assert {queue.name for queue in app.conf.task_queues} == {"celery", "llm"}
