"""The cost cap: a run stops before a request that could cross it (its prompt estimated, its answer counted
at max_answer_tokens), with the status "Stopped: cost cap"; without prices, a cap in tokens does the same."""

from decimal import Decimal

from django.urls import reverse

from studies.models import AssessorJudgment, LLMRequest


def cap(assessor, **fields):
    for name, value in fields.items():
        setattr(assessor, name, value)
    assessor.max_answer_tokens = 10
    assessor.save()
    return assessor


def test_a_priced_run_stops_before_crossing_the_cap(
    client, alice, pooled_study, llm_assessor, model_server, run_llm
):
    # One request costs about (360 input x 1 + 7 output x 2) / 1e6 = 0.000374: two fit in 0.001, three not.
    cap(
        llm_assessor,
        price_input_per_million=Decimal(1),
        price_output_per_million=Decimal(2),
        cost_cap=Decimal("0.001"),
    )
    run = run_llm(llm_assessor)
    assert (run.status, run.done, run.total) == ("cost_cap", 2, 3)
    assert len(model_server.requests) == 2 and LLMRequest.objects.filter(run=run).count() == 2
    assert Decimal(0) < run.cost <= Decimal("0.001")
    assert AssessorJudgment.objects.filter(assessor=llm_assessor.membership.user).count() == 2
    client.force_login(alice)
    page = client.get(reverse("assessment:llm_run", args=[pooled_study.slug, run.pk])).content.decode()
    assert "Stopped: cost cap" in page


def test_a_token_cap_stops_a_run_without_prices(llm_assessor, model_server, run_llm):
    cap(llm_assessor, token_cap=800)  # about 370 tokens a request
    run = run_llm(llm_assessor)
    assert (run.status, run.done) == ("cost_cap", 2)
    assert run.tokens_in + run.tokens_out <= 800


def test_retries_count_against_the_cap(llm_assessor, model_server, run_llm):
    cap(llm_assessor, token_cap=800)
    model_server.script = [("no_grade",)]  # tokens spent, no grade
    run = run_llm(llm_assessor)
    assert (run.status, run.done, run.failed) == ("cost_cap", 1, 1)
