"""A run can be cancelled: queued, it never sends a request; running, it stops before its next request and
keeps what it stored."""

import pytest
from django.urls import reverse

from studies.assessment.llm import client as llm_client
from studies.assessment.llm import runs
from studies.errors import AssessmentError
from studies.models import AssessorJudgment, LLMRun
from studies.tasks import llm_run_task


def test_a_queued_run_cancelled_sends_nothing(
    client, alice, pooled_study, llm_assessor, model_server, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as queued:
        run = runs.llm_run_start(assessor=llm_assessor, created_by=alice)
    client.force_login(alice)
    response = client.post(
        reverse("assessment:llm_run_cancel", args=[pooled_study.slug, run.pk]), follow=True
    )
    assert "Run cancelled" in response.content.decode()
    for callback in queued:
        callback()  # the worker gets the task after all
    run.refresh_from_db()
    assert run.status == "cancelled" and model_server.requests == []
    again = client.post(reverse("assessment:llm_run_cancel", args=[pooled_study.slug, run.pk]), follow=True)
    assert "already ended" in again.content.decode()


def test_a_running_run_stops_before_its_next_request(llm_assessor, model_server, run_llm, monkeypatch):
    calls = []

    def complete_then_cancel(**kwargs):
        outcome = llm_client.chat_complete(**kwargs)
        calls.append(outcome)
        LLMRun.objects.filter(assessor=llm_assessor).update(status=LLMRun.Status.CANCELLED)  # from the page
        return outcome

    monkeypatch.setattr(runs, "chat_complete", complete_then_cancel)
    run = run_llm(llm_assessor)
    assert run.status == "cancelled" and len(calls) == 1
    assert AssessorJudgment.objects.filter(assessor=llm_assessor.membership.user).count() == 1
    assert run.done == 1


def test_one_run_at_a_time_and_the_task_is_idempotent(
    llm_assessor, alice, model_server, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        run = runs.llm_run_start(assessor=llm_assessor, created_by=alice)
    with pytest.raises(AssessmentError, match="queued or running"):
        runs.llm_run_start(assessor=llm_assessor, created_by=alice)
    assert llm_run_task(run.pk) == "done"
    assert llm_run_task(run.pk) is None  # a second delivery does nothing
    assert len(model_server.requests) == 3


def test_a_run_over_chosen_scenarios_sends_only_theirs(pooled_study, llm_assessor, model_server, run_llm):
    from studies.assessment import pools

    other = pooled_study.scenarios.get(code="S2")
    pools.pool_add_documents(scenario=other, external_ids=["d9"], added_by=pooled_study.owner)
    run = run_llm(llm_assessor, scenarios=[other])
    assert (run.status, run.total, run.done) == ("done", 1, 1)
    assert "Title 9" in model_server.requests[0]["body"]["messages"][0]["content"]


def test_a_run_whose_worker_died_is_failed_when_the_next_starts(
    alice, llm_assessor, model_server, run_llm, django_capture_on_commit_callbacks, settings
):
    """A run left "running" by a worker that died would block every later run: once it has sent nothing
    for LLM_RUN_STALE_SECONDS, starting the next fails it, saying why; a run that is alive still blocks."""
    import datetime

    from django.utils import timezone

    settings.LLM_RUN_STALE_SECONDS = 600
    with django_capture_on_commit_callbacks(execute=False):  # its task is lost
        lost = runs.llm_run_start(assessor=llm_assessor, created_by=alice)
    LLMRun.objects.filter(pk=lost.pk).update(
        status=LLMRun.Status.RUNNING, started_at=timezone.now() - datetime.timedelta(seconds=300)
    )
    with pytest.raises(AssessmentError, match="has a run queued or running"):
        runs.llm_run_start(assessor=llm_assessor, created_by=alice)  # 300 s quiet: not lost yet
    LLMRun.objects.filter(pk=lost.pk).update(started_at=timezone.now() - datetime.timedelta(seconds=601))
    fresh = run_llm(llm_assessor)
    lost.refresh_from_db()
    assert lost.status == "failed" and "no request for 600 s: its worker stopped" in lost.error
    assert (fresh.status, fresh.done, fresh.total) == ("done", 3, 3)
    llm_run_task(lost.pk)  # the lost task, should it arrive after all, does nothing
    lost.refresh_from_db()
    assert lost.status == "failed" and len(model_server.requests) == 3
