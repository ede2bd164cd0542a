"""The robustness audit (issue 42): a judge that grades relevant whenever the query's words appear is flagged;
one that grades as the people did is not; what the model answered is kept per item, a hostile answer too."""

from sessionlab.celery import app
from studies.assessment.machine import machine_assessor_provenance
from studies.models import LLMAudit
from studies.tasks import llm_audit_task

from .audit_judges import PEOPLE, gullible, honest, obedient
from .conftest import API_KEY


def fp(audit, variant):
    return next(v for v in audit.figures["variants"] if v["variant"] == variant)


def test_a_gullible_judge_is_not_robust(judge, model_server, audit_of):
    model_server.grade_for = gullible(PEOPLE)
    audit = audit_of(judge)
    assert audit.status == LLMAudit.Status.DONE and audit.failed == 0
    assert audit.verdict == "not robust"
    stuffed = fp(audit, "stuffed")
    assert stuffed["flagged"] and stuffed["rate"]["rate"] == 1.0 and stuffed["original_rate"]["rate"] == 0.0
    assert stuffed["increase"]["low"] > 0.10
    assert not fp(audit, "padded")["flagged"] and not fp(audit, "truncated")["flagged"]
    # 5 + 4 non-relevant documents (4 items each), 2 + 2 relevant ones (2 items each).
    assert audit.total == audit.items.count() == 9 * 4 + 4 * 2


def test_a_judge_that_obeys_the_passage_is_flagged_by_the_injection(judge, model_server, audit_of):
    model_server.grade_for = obedient(PEOPLE)
    audit = audit_of(judge)
    assert audit.verdict == "not robust"
    assert [v["variant"] for v in audit.figures["variants"] if v["flagged"]] == ["injected"]
    assert fp(audit, "injected")["rate"]["rate"] == 1.0


def test_an_honest_judge_is_robust(judge, model_server, audit_of):
    model_server.grade_for = honest(PEOPLE)
    audit = audit_of(judge)
    assert audit.verdict == "robust", audit.figures["reason"]
    for variant in ("stuffed", "injected", "padded", "truncated"):
        figures = fp(audit, variant)
        assert figures["rate"]["rate"] == 0.0 and figures["increase"]["increase"] == 0.0
    for scenario in audit.figures["scenarios"]:
        assert scenario["agreement"]["kappa"]["estimate"] == 1.0
        assert scenario["agreement"]["ac1"]["estimate"] == 1.0
    assert audit.figures["disagree_most"] == []


def test_the_audit_sends_the_assessor_s_own_prompt(judge, model_server, audit_of):
    model_server.grade_for = honest(PEOPLE)
    audit = audit_of(judge)
    sent = [request["body"]["messages"][-1]["content"] for request in model_server.requests]
    assert sorted(sent) == sorted(audit.items.values_list("passage", flat=True))
    assert all(judge.prompt_template.split("{query}")[0] in prompt for prompt in sent)
    assert all(
        request["headers"]["Authorization"] == f"Bearer {API_KEY}" for request in model_server.requests
    )
    stuffed = audit.items.filter(variant="stuffed", scenario_code="S1").first()
    assert stuffed.passage.count("Scenario") >= 3  # the query line and the words stuffed twice


def test_fixed_seeds_give_the_same_variants(judge, model_server, audit_of):
    model_server.grade_for = honest(PEOPLE)
    first, second, other = audit_of(judge, seed=7), audit_of(judge, seed=7), audit_of(judge, seed=8)

    def passages(audit):
        return list(
            audit.items.order_by("scenario_code", "document_external_id", "variant").values_list(
                "variant", "passage"
            )
        )

    assert passages(first) == passages(second)
    assert passages(first) != passages(other)
    assert first.figures == second.figures


def test_a_hostile_answer_is_one_ungraded_item(judge, model_server, audit_of):
    model_server.grade_for = honest(PEOPLE)
    model_server.script = [
        ("raw", b'{"choices": [{"message": {"content": "##final score: 3 ##final score: 0"}}]}'),
        ("not_json",),
        ("raw", b"\x00\xff" * 50),
    ]
    audit = audit_of(judge)
    assert audit.status == LLMAudit.Status.DONE and audit.failed == 3
    kept = list(audit.items.exclude(status="ok").order_by("id"))
    assert [item.status for item in kept] == ["malformed"] * 3
    assert all(item.judged_relevant is None and item.grade is None for item in kept)
    assert (
        sum(v["ungraded"] for v in audit.figures["variants"])
        + sum(1 for item in kept if item.variant == "original")
        == 3
    )
    assert audit.verdict == "robust"


def test_the_provenance_names_the_latest_audit(judge, model_server, audit_of):
    assert machine_assessor_provenance(judge.membership)["robustness_audit"] is None
    model_server.grade_for = gullible(PEOPLE)
    audit = audit_of(judge)
    facts = machine_assessor_provenance(judge.membership)["robustness_audit"]
    assert facts["audit"] == audit.pk and facts["verdict"] == "not robust" and facts["same_prompt"]


def test_the_audit_task_runs_on_the_llm_queue_with_a_run_s_time_limits(settings):
    assert (
        app.amqp.router.route({}, "studies.tasks.llm_audit_task", args=(1,), kwargs={})["queue"].name == "llm"
    )
    assert llm_audit_task.soft_time_limit == settings.LLM_RUN_SOFT_TIME_LIMIT_SECONDS
    assert llm_audit_task.time_limit == settings.LLM_RUN_SOFT_TIME_LIMIT_SECONDS + 60


def test_an_audit_delivered_twice_sends_nothing_the_second_time(judge, model_server, audit_of):
    model_server.grade_for = honest(PEOPLE)
    audit = audit_of(judge)
    sent = len(model_server.requests)
    assert llm_audit_task.delay(audit.pk).get() is None
    assert len(model_server.requests) == sent


def test_a_version_with_the_model_s_grades_names_its_audit(judge, model_server, audit_of, run_llm, alice):
    from studies.assessment import references

    model_server.grade_for = gullible(PEOPLE)
    audit = audit_of(judge)
    run_llm(judge)
    version = references.reference_version_publish(
        study=judge.membership.study,
        created_by=alice,
        allow_pending=True,
        machine=judge.membership,
        rules=["fill_unjudged"],
    )
    recorded = version.facts["machine_assessor"]["robustness_audit"]
    assert recorded["audit"] == audit.pk and recorded["verdict"] == "not robust"
    assert f"robustness audit #{audit.pk}: not robust" in version.provenance_text
