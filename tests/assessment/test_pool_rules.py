"""Pools per scenario: the paper's rule (judged relevant by a participant), top X shown, their union; growth
with new sessions; hand-added documents."""

from studies.assessment import assessors, pools
from studies.errors import AssessmentError
from studies.models import AssessorJudgment, PoolDocument

from .conftest import pool_ids, record_session


def test_relevant_rule_pools_documents_a_participant_judged_grade_1_or_more(sessions_study):
    pools.pool_build(study=sessions_study, rule="relevant")
    assert pool_ids(sessions_study) == {"d2", "d3", "d8"}
    assert pool_ids(sessions_study, "S2") == set()


def test_top_x_rule_pools_documents_shown_at_rank_x_or_better_in_any_query(sessions_study):
    pools.pool_build(study=sessions_study, rule="top_x", top_x=10)
    assert pool_ids(sessions_study) == {"d1", "d2", "d3", "d4", "d5", "d6"}
    pools.pool_build(study=sessions_study, rule="top_x", top_x=2)
    assert pool_ids(sessions_study) == {"d1", "d2", "d3", "d6"}
    assert sessions_study.scenarios.get(code="S1").assessment_pool.top_x == 2


def test_union_rule_pools_both(sessions_study):
    changes = pools.pool_build(study=sessions_study, rule="union", top_x=10)
    assert pool_ids(sessions_study) == {"d1", "d2", "d3", "d4", "d5", "d6", "d8"}
    assert changes["S1"].added == 7
    why = dict(
        PoolDocument.objects.filter(
            pool__scenario__code="S1", pool__scenario__study=sessions_study
        ).values_list("document__external_id", "source_detail")
    )
    assert why["d2"] == "judged relevant + top 10"
    assert why["d8"] == "judged relevant"
    assert why["d1"] == "top 10"


def test_pool_grows_when_new_sessions_arrive_and_keeps_its_rule(sessions_study):
    pools.pool_build(study=sessions_study, rule="relevant")
    p1 = sessions_study.participants.get(code="P001")
    record_session(p1, "S2", [{1: "d9"}], {"d9": 2, "d10": 0})
    changes = pools.pool_build(study=sessions_study)
    assert changes["S2"].added == 1
    assert pool_ids(sessions_study, "S2") == {"d9"}
    assert pool_ids(sessions_study) == {"d2", "d3", "d8"}


def test_a_narrower_rule_keeps_documents_an_assessor_already_judged(sessions_study, make_assessors):
    pools.pool_build(study=sessions_study, rule="union", top_x=10)
    (ann,) = make_assessors(sessions_study, "ann")
    pool = sessions_study.scenarios.get(code="S1").assessment_pool
    assessors.assessor_judgment_record(
        assessor=ann, pool_document=pool.documents.get(document__external_id="d1"), grade=1
    )
    changes = pools.pool_build(study=sessions_study, rule="relevant")
    assert pool_ids(sessions_study) == {"d1", "d2", "d3", "d8"}
    assert (changes["S1"].removed, changes["S1"].kept_judged) == (3, 1)
    assert AssessorJudgment.objects.filter(assessor=ann).count() == 1


def test_withdrawn_participants_sessions_do_not_feed_the_pool(sessions_study):
    from django.utils import timezone

    sessions_study.participants.filter(code="P002").update(withdrawn_at=timezone.now())
    pools.pool_build(study=sessions_study, rule="relevant")
    assert pool_ids(sessions_study) == {"d2"}


def test_documents_added_by_hand_stay_when_the_pool_is_rebuilt(sessions_study, alice):
    s1 = sessions_study.scenarios.get(code="S1")
    assert pools.pool_add_documents(scenario=s1, external_ids=["d11", "d12"], added_by=alice) == 2
    pools.pool_build(study=sessions_study, rule="relevant")
    assert pool_ids(sessions_study) == {"d2", "d3", "d8", "d11", "d12"}
    added = PoolDocument.objects.get(pool__scenario=s1, document__external_id="d11")
    assert (added.source, added.source_detail) == ("manual", "added by alice")


def test_adding_an_unknown_document_by_hand_adds_nothing(sessions_study, alice):
    import pytest

    s1 = sessions_study.scenarios.get(code="S1")
    with pytest.raises(AssessmentError, match="nope"):
        pools.pool_add_documents(scenario=s1, external_ids=["d11", "nope"], added_by=alice)
    assert not PoolDocument.objects.filter(pool__scenario=s1).exists()
