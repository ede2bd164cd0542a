"""A script starts an LLM assessor's run through the API (all scenarios or some), follows it (status,
progress, tokens, cost, error), cancels it, and pages through the requests it kept, one outcome at a time."""

import pytest

from studies.models import LLMRun


def runs_url(study, assessor):
    return f"/api/studies/{study.pk}/llm-assessors/{assessor.pk}/runs/"


def run_url(study, run_id, suffix=""):
    return f"/api/studies/{study.pk}/llm-runs/{run_id}/{suffix}"


@pytest.fixture
def start(api, django_capture_on_commit_callbacks):
    """start(study, assessor, body) -> the answer; the run's task runs (eager) on commit."""

    def started(study, assessor, body=None, execute=True):
        with django_capture_on_commit_callbacks(execute=execute):
            return api.post(runs_url(study, assessor), body or {}, content_type="application/json")

    return started


def test_a_run_started_through_the_api_grades_the_pool_and_reports(api, start, pooled_study, llm_assessor):
    llm_assessor.price_input_per_million, llm_assessor.price_output_per_million = 1, 2
    llm_assessor.save()
    answer = start(pooled_study, llm_assessor)
    assert answer.status_code == 201, answer.json()
    assert answer.json()["status"] == "queued" and answer.json()["scenarios"] == []
    run = api.get(run_url(pooled_study, answer.json()["id"])).json()
    assert (run["status"], run["total"], run["done"], run["failed"], run["progress"]) == (
        "done",
        3,
        3,
        0,
        1.0,
    )
    stored = LLMRun.objects.get(pk=run["id"])
    assert (run["tokens_in"], run["tokens_out"]) == (stored.tokens_in, stored.tokens_out) and stored.tokens_in
    assert float(run["cost"]) == pytest.approx(float(stored.cost)) and stored.cost > 0
    assert run["error"] == "" and run["created_by"] == "alice" and run["finished_at"]
    listed = api.get(runs_url(pooled_study, llm_assessor)).json()
    assert [row["id"] for row in listed["results"]] == [run["id"]]


def test_a_run_of_chosen_scenarios_names_them(start, pooled_study, llm_assessor):
    answer = start(pooled_study, llm_assessor, {"scenarios": ["S2"]})
    assert answer.status_code == 201 and answer.json()["scenarios"] == ["S2"]
    run = LLMRun.objects.get(pk=answer.json()["id"])
    assert run.scenario_ids == [pooled_study.scenarios.get(code="S2").pk] and run.total == 0


def test_an_unknown_scenario_is_a_400_and_starts_nothing(start, pooled_study, llm_assessor):
    answer = start(pooled_study, llm_assessor, {"scenarios": ["S1", "S9"]})
    assert answer.status_code == 400 and "'S9' is not a scenario code" in str(answer.json()["scenarios"])
    assert not LLMRun.objects.exists()


def test_a_second_run_while_one_is_queued_is_a_409_and_the_first_can_be_cancelled(
    api,
    start,
    pooled_study,
    llm_assessor,
    model_server,
):
    first = start(pooled_study, llm_assessor, execute=False).json()  # queued: no worker took it
    second = start(pooled_study, llm_assessor, execute=False)
    assert second.status_code == 409 and "queued or running" in second.json()["detail"]
    assert LLMRun.objects.count() == 1

    cancelled = api.post(run_url(pooled_study, first["id"], "cancel/"))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = api.post(run_url(pooled_study, first["id"], "cancel/"))
    assert again.status_code == 409 and "already ended (cancelled)" in again.json()["detail"]
    assert model_server.requests == []


def test_the_requests_are_paged_and_filtered_by_outcome(api, start, pooled_study, llm_assessor, model_server):
    model_server.script = [("status", 500), ("not_json",)]
    run_id = start(pooled_study, llm_assessor).json()["id"]
    everything = api.get(run_url(pooled_study, run_id, "requests/")).json()
    assert everything["count"] == 4
    assert [(r["document"], r["attempt"], r["status"]) for r in everything["results"]] == [
        ("d1", 1, "http_error"),
        ("d1", 2, "malformed"),
        ("d2", 1, "ok"),
        ("d3", 1, "ok"),
    ]
    first = everything["results"][0]
    assert (first["http_status"], first["error"], first["grade"]) == (500, "HTTP 500", None)
    assert first["prompt_hash"] and first["messages"][0]["role"] == "user"

    ok = api.get(run_url(pooled_study, run_id, "requests/?status=ok&page_size=1")).json()
    assert ok["count"] == 2 and len(ok["results"]) == 1 and ok["next"]
    assert ok["results"][0]["grade"] == 2 and ok["results"][0]["model_grade"] == 2

    refused = api.get(run_url(pooled_study, run_id, "requests/?status=broken"))
    assert refused.status_code == 400 and "is not one of ok, http_error" in refused.json()["status"]
    misspelt = api.get(run_url(pooled_study, run_id, "requests/?outcome=ok"))
    assert misspelt.status_code == 400 and "outcome" in misspelt.json()


def test_another_study_s_run_is_a_404(client, charlie, start, pooled_study, llm_assessor):
    run_id = start(pooled_study, llm_assessor, execute=False).json()["id"]
    client.force_login(charlie)
    assert client.get(run_url(pooled_study, run_id)).status_code == 404
    assert client.post(run_url(pooled_study, run_id, "cancel/")).status_code == 404
    assert client.get(run_url(pooled_study, run_id, "requests/")).status_code == 404
    assert LLMRun.objects.get(pk=run_id).status == "queued"


def test_the_lists_queries_do_not_grow_with_their_rows(
    api, start, pooled_study, llm_assessor, alice, django_assert_max_num_queries
):
    from studies.assessment.llm import setup

    for n in range(3):
        setup.llm_assessor_create(
            study=pooled_study, created_by=alice, endpoint_url="http://127.0.0.1:9/v1", model_name=f"m{n}"
        )
        LLMRun.objects.create(assessor=llm_assessor, created_by=alice, status="done", scenario_ids=[n + 1])
    run_id = start(pooled_study, llm_assessor).json()["id"]
    for path in (
        f"/api/studies/{pooled_study.pk}/llm-assessors/",
        runs_url(pooled_study, llm_assessor),
        run_url(pooled_study, run_id, "requests/"),
    ):
        with django_assert_max_num_queries(7):
            answer = api.get(path)
        assert answer.status_code == 200 and answer.json()["count"] >= 3
