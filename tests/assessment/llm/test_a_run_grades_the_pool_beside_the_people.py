"""End to end through the Celery task (eager) against the fake model server: the machine's grades land as
AssessorJudgment rows of its account, each request is kept with its prompt, the people's reference is
unchanged, adjudication ignores the machine, and agreement shows it as an assessor."""

from studies.assessment import adjudication, references
from studies.assessment.llm.prompts import prompt_hash
from studies.assessment.machine import machine_assessor_provenance
from studies.models import AssessorJudgment, LLMRequest, ReferenceVersion

from .conftest import API_KEY


def test_grades_land_as_the_machine_accounts_judgments(llm_assessor, model_server, run_llm):
    model_server.grade_for = lambda prompt: 3 if "Title 2" in prompt else 1
    run = run_llm(llm_assessor)
    assert (run.status, run.done, run.failed, run.total) == ("done", 3, 0, 3)
    machine = llm_assessor.membership.user
    grades = dict(
        AssessorJudgment.objects.filter(assessor=machine).values_list(
            "pool_document__document__external_id", "grade"
        )
    )
    assert grades == {"d1": 1, "d2": 3, "d3": 1}
    assert not machine.has_usable_password() and not machine.is_staff


def test_every_request_is_kept_with_its_prompt_and_the_server_got_the_protocol(
    llm_assessor, model_server, run_llm
):
    run = run_llm(llm_assessor)
    kept = list(LLMRequest.objects.filter(run=run).order_by("id"))
    assert [k.document_external_id for k in kept] == ["d1", "d2", "d3"]
    first = kept[0]
    assert first.status == "ok" and first.model_grade == 2 and first.grade == 2 and first.attempt == 1
    assert first.prompt_hash == prompt_hash(llm_assessor.prompt_template, "llama3.1:8b")
    assert "Query: Scenario 1" in first.messages[0]["content"]
    assert "Title 1\nFull text of document 1." in first.messages[0]["content"]
    assert first.raw_answer.endswith("##final score: 2") and first.tokens_in > 0 and first.tokens_out > 0
    assert run.tokens_in == sum(k.tokens_in for k in kept)
    sent = model_server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == f"Bearer {API_KEY}"
    assert sent["body"]["model"] == "llama3.1:8b"
    assert sent["body"]["messages"] == first.messages
    assert sent["body"]["temperature"] == 0 and sent["body"]["max_tokens"] == 200


def test_a_second_run_sends_only_what_the_machine_has_not_graded(llm_assessor, model_server, run_llm):
    run_llm(llm_assessor)
    again = run_llm(llm_assessor)
    assert (again.status, again.total) == ("done", 0)
    assert len(model_server.requests) == 3


def test_the_peoples_reference_is_unchanged_and_adjudication_ignores_the_machine(
    pooled_study, llm_assessor, model_server, run_llm, alice
):
    adjudication.adjudicate(study=pooled_study, preset="majority", decided_by=alice)
    version = references.reference_version_publish(study=pooled_study, created_by=alice, allow_pending=True)
    before = sorted(version.judgments.values_list("document__external_id", "grade"))
    model_server.grade_for = lambda prompt: 3  # with the machine, d2 (1, 3) would have a majority of 3
    run_llm(llm_assessor)
    assert ReferenceVersion.objects.filter(study=pooled_study).count() == 1
    assert sorted(version.judgments.values_list("document__external_id", "grade")) == before
    result = adjudication.adjudicate(study=pooled_study, preset="majority", decided_by=alice)
    assert sorted(row.pool_document.document.external_id for row in result.to_researcher) == ["d2", "d3"]


def test_agreement_shows_the_machine_as_an_assessor(pooled_study, llm_assessor, run_llm):
    run_llm(llm_assessor)
    overall = adjudication.assessor_agreement(study=pooled_study)[-1]
    machine = llm_assessor.membership.user.username
    pairs = {(pair.first, pair.second) for pair in overall.pairs}
    assert ("ann", machine) in pairs and ("ben", machine) in pairs


def test_the_provenance_names_model_host_and_prompt_hash_never_the_key(llm_assessor):
    facts = machine_assessor_provenance(llm_assessor.membership)
    assert (
        facts["kind"] == "llm" and facts["model"] == "llama3.1:8b" and facts["endpoint_host"] == "127.0.0.1"
    )
    assert facts["prompt_hash"] == prompt_hash(llm_assessor.prompt_template, "llama3.1:8b")
    assert API_KEY not in str(facts)
