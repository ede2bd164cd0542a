"""Each way the model server can fail is kept as a request with its status, shown on the run page, and
stores no grade; transient failures (429, 5xx, timeouts) are tried again, up to the assessor's retries."""

from django.urls import reverse

from studies.models import AssessorJudgment, LLMRequest


def kept(run):
    return list(
        LLMRequest.objects.filter(run=run)
        .order_by("id")
        .values_list("document_external_id", "attempt", "status")
    )


def judged(assessor):
    return set(
        AssessorJudgment.objects.filter(assessor=assessor.membership.user).values_list(
            "pool_document__document__external_id", flat=True
        )
    )


def test_a_500_then_a_429_are_retried_and_the_grade_lands(llm_assessor, model_server, run_llm):
    model_server.script = [("status", 500), ("status", 429)]
    run = run_llm(llm_assessor)
    assert kept(run)[:3] == [("d1", 1, "http_error"), ("d1", 2, "http_error"), ("d1", 3, "ok")]
    assert (run.status, run.done, run.failed) == ("done", 3, 0)
    assert judged(llm_assessor) == {"d1", "d2", "d3"}


def test_retries_run_out_and_the_document_is_failed_without_a_grade(llm_assessor, model_server, run_llm):
    model_server.script = [("status", 503)] * 3
    run = run_llm(llm_assessor)
    assert kept(run)[:4] == [
        ("d1", 1, "http_error"),
        ("d1", 2, "http_error"),
        ("d1", 3, "http_error"),
        ("d2", 1, "ok"),
    ]
    assert (run.status, run.done, run.failed) == ("done", 2, 1)
    assert judged(llm_assessor) == {"d2", "d3"}
    assert LLMRequest.objects.filter(run=run, status="http_error").first().http_status == 503


def test_a_slow_answer_times_out_and_is_tried_again(llm_assessor, model_server, run_llm):
    model_server.script = [("slow", 1.6)]
    run = run_llm(llm_assessor)
    assert kept(run)[:2] == [("d1", 1, "timeout"), ("d1", 2, "ok")]
    assert LLMRequest.objects.get(run=run, status="timeout").error == "timed out"


def test_malformed_answers_store_no_grade_and_are_not_retried(llm_assessor, model_server, run_llm):
    model_server.script = [("not_json",), ("no_grade",), ("no_choices",)]
    run = run_llm(llm_assessor)
    assert kept(run) == [("d1", 1, "malformed"), ("d2", 1, "malformed"), ("d3", 1, "malformed")]
    assert (run.status, run.done, run.failed) == ("done", 0, 3)
    assert judged(llm_assessor) == set()
    no_grade = LLMRequest.objects.get(run=run, document_external_id="d2")
    assert no_grade.raw_answer == "The passage is about wings." and no_grade.grade is None
    assert no_grade.tokens_out > 0  # the tokens it cost are counted all the same
    assert (
        "<html>upstream error</html>" in LLMRequest.objects.get(run=run, document_external_id="d1").raw_answer
    )


def test_an_endpoint_outside_the_allow_list_is_refused_and_stops_the_run(
    llm_assessor, model_server, run_llm, settings
):
    settings.OUTBOUND_ALLOW = []
    run = run_llm(llm_assessor)
    assert run.status == "failed" and "refused (address not allowed)" in run.error
    assert kept(run) == [("d1", 1, "refused")]
    assert model_server.requests == []


def test_the_run_page_shows_each_failure(client, alice, pooled_study, llm_assessor, model_server, run_llm):
    model_server.script = [("status", 500), ("status", 500), ("status", 500), ("slow", 1.6), ("not_json",)]
    run = run_llm(llm_assessor)
    client.force_login(alice)
    page = client.get(reverse("assessment:llm_run", args=[pooled_study.slug, run.pk])).content.decode()
    assert "HTTP error (500)" in page and "timed out" in page and "malformed answer" in page
    assert "not a chat completion" in page
    assert "1 graded, 2 failed, of 3 documents" in page
    only_failures = client.get(
        reverse("assessment:llm_run", args=[pooled_study.slug, run.pk]), {"status": "timeout"}
    )
    assert only_failures.content.decode().count('class="request-') == 1
