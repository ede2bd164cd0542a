"""The double-judged share: with one assessor per document, that percent of each scenario's pool
documents gets a second assessor, exact to rounding, chosen by a hash of the document so the choice is stable
as the pool grows; shown in the plan form and the progress table."""

import random

import pytest
from django.urls import reverse

from studies.assessment import assessors, pools, selectors
from studies.assessment.assessors import double_judged_choice
from studies.errors import AssessmentError


def rounded(percent, n):
    """percent of n, halves up (what the page promises)."""
    return int(percent * n / 100 + 0.5)


@pytest.mark.parametrize("seed", range(20))
def test_the_share_is_exact_to_rounding_and_stable_as_the_pool_grows(seed):
    rng = random.Random(seed)
    percent = rng.randint(0, 100)
    ids = rng.sample(range(1, 100000), 60)
    chosen: set[int] = set()
    for size in range(1, len(ids) + 1):
        grown = double_judged_choice(ids[:size], already=chosen, percent=percent)
        assert len(grown) == rounded(percent, size)
        assert chosen <= grown  # an earlier choice is never withdrawn
        chosen = grown


def test_the_choice_depends_on_the_documents_not_on_their_order():
    ids = list(range(1, 41))
    assert double_judged_choice(ids, already=set(), percent=25) == double_judged_choice(
        ids[::-1], already=set(), percent=25
    )


def test_a_half_rounds_up():
    assert len(double_judged_choice([1, 2, 3], already=set(), percent=50)) == 2  # 1.5 -> 2
    assert len(double_judged_choice([1, 2, 3], already=set(), percent=0)) == 0
    assert len(double_judged_choice([1, 2, 3], already=set(), percent=100)) == 3


@pytest.fixture
def pooled(assessed_study, make_assessors):
    make_assessors(assessed_study, "ann", "ben", "cat")
    pools.pool_add_documents(
        scenario=assessed_study.scenarios.get(code="S1"),
        external_ids=[f"d{n}" for n in range(1, 11)],
        added_by=assessed_study.owner,
    )
    pools.pool_add_documents(
        scenario=assessed_study.scenarios.get(code="S2"),
        external_ids=["d11", "d12"],
        added_by=assessed_study.owner,
    )
    return assessed_study


def allocated_counts(study, code):
    pool = study.scenarios.get(code=code).assessment_pool
    return [pd.assessor_assignments.count() for pd in pool.documents.order_by("id")]


def test_allocation_gives_the_share_a_second_assessor_in_each_scenario(pooled):
    assessors.assessment_plan_set(study=pooled, assessors_per_document=1, double_judged_percent=30)
    assert sorted(allocated_counts(pooled, "S1")) == [1] * 7 + [2] * 3
    assert sorted(allocated_counts(pooled, "S2")) == [1, 2]  # 0.6 -> 1
    per_scenario = {row.scenario.code: row for row in selectors.assessment_progress(study=pooled)[1]}
    assert per_scenario["S1"].double_judged == 3 and per_scenario["S2"].double_judged == 1


def test_a_grown_pool_keeps_its_double_judged_documents(pooled):
    assessors.assessment_plan_set(study=pooled, assessors_per_document=1, double_judged_percent=50)
    pool = pooled.scenarios.get(code="S2").assessment_pool
    before = {pd.id for pd in pool.documents.all() if pd.assessor_assignments.count() == 2}
    pools.pool_add_documents(scenario=pool.scenario, external_ids=["d1", "d2"], added_by=pooled.owner)
    after = {pd.id for pd in pool.documents.all() if pd.assessor_assignments.count() == 2}
    assert before <= after and len(after) == 2


def test_with_more_than_one_assessor_per_document_the_share_changes_nothing(pooled):
    assessors.assessment_plan_set(study=pooled, assessors_per_document=3, double_judged_percent=30)
    assert allocated_counts(pooled, "S1") == [3] * 10


def test_a_share_outside_0_to_100_is_refused(pooled):
    with pytest.raises(AssessmentError, match="0 to 100"):
        assessors.assessment_plan_set(study=pooled, assessors_per_document=1, double_judged_percent=101)


def test_the_plan_form_sets_and_shows_the_share(client, alice, pooled):
    client.force_login(alice)
    response = client.post(
        reverse("assessment:plan_set", args=[pooled.slug]),
        {"plan-assessors_per_document": "1", "plan-double_judged_percent": "20"},
        follow=True,
    )
    page = response.content.decode()
    assert "Each document is judged by 1 assessor(s), 20% of them by two." in page
    assert 'name="plan-double_judged_percent" value="20"' in page
    assert '<td class="double-judged">2</td>' in page  # S1: 20% of 10
    pooled.assessment_plan.refresh_from_db()
    assert pooled.assessment_plan.double_judged_percent == 20


def test_an_empty_share_in_the_form_means_none(client, alice, pooled):
    client.force_login(alice)
    client.post(reverse("assessment:plan_set", args=[pooled.slug]), {"plan-assessors_per_document": "1"})
    pooled.assessment_plan.refresh_from_db()
    assert pooled.assessment_plan.double_judged_percent == 0
    assert allocated_counts(pooled, "S1") == [1] * 10
