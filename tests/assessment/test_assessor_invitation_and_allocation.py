"""Inviting assessors and deciding how many judge each document."""

from collections import Counter

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from studies.assessment import assessors, pools, selectors
from studies.errors import AssessmentError
from studies.models import AssessorAssignment, AssessorJudgment


def test_inviting_creates_an_assessor_account_without_researcher_rights(assessed_study, alice):
    membership, password = assessors.assessor_invite(study=assessed_study, username="ann", invited_by=alice)
    assert password and membership.user.check_password(password)
    assert not membership.user.is_staff and not membership.user.is_superuser
    assert membership.invited_by == alice


def test_inviting_an_existing_assessor_to_another_study_keeps_their_password(assessed_study, alice, bob):
    from studies.design import services

    first, password = assessors.assessor_invite(study=assessed_study, username="ann", invited_by=alice)
    other = services.study_create(owner=bob, name="Bob's study")
    invitation, again = assessors.assessor_invite(study=other, username="ann", invited_by=bob)
    assert invitation.user == first.user and again is None
    # Bob's study is another lab's: Ann accepts first (tests/assessment/test_an_assessor_of_another_lab_...).
    second = assessors.assessor_invitation_answer(invitation=invitation, user=first.user, accept=True)
    assert second.study == other and second.user.check_password(password)


def test_a_researcher_account_cannot_be_invited_as_an_assessor(assessed_study, alice, charlie):
    with pytest.raises(AssessmentError, match="researcher account"):
        assessors.assessor_invite(study=assessed_study, username="charlie", invited_by=alice)


def test_each_document_gets_the_chosen_number_of_assessors_evenly(assessed_study, alice, make_assessors):
    scenario = assessed_study.scenarios.get(code="S1")
    pools.pool_add_documents(scenario=scenario, external_ids=[f"d{n}" for n in range(1, 7)], added_by=alice)
    make_assessors(assessed_study, "ann", "ben", "cat", per_document=2)
    per_document = Counter(AssessorAssignment.objects.values_list("pool_document_id", flat=True))
    per_assessor = Counter(AssessorAssignment.objects.values_list("assessor__user__username", flat=True))
    assert set(per_document.values()) == {2} and len(per_document) == 6
    assert per_assessor == {"ann": 4, "ben": 4, "cat": 4}


def test_lowering_the_number_withdraws_only_unjudged_allocations(assessed_study, alice, make_assessors):
    scenario = assessed_study.scenarios.get(code="S1")
    pools.pool_add_documents(scenario=scenario, external_ids=["d1", "d2"], added_by=alice)
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    d1 = scenario.assessment_pool.documents.get(document__external_id="d1")
    assessors.assessor_judgment_record(assessor=ann, pool_document=d1, grade=2)
    assessors.assessor_judgment_record(assessor=ben, pool_document=d1, grade=1)
    assessors.assessment_plan_set(study=assessed_study, assessors_per_document=1)
    assert AssessorAssignment.objects.filter(pool_document=d1).count() == 2  # both judged: both kept
    assert AssessorAssignment.objects.filter(pool_document__document__external_id="d2").count() == 1


def test_new_assessors_get_documents_of_an_existing_pool(assessed_study, alice, make_assessors):
    scenario = assessed_study.scenarios.get(code="S1")
    pools.pool_add_documents(scenario=scenario, external_ids=["d1", "d2"], added_by=alice)
    make_assessors(assessed_study, "ann", per_document=2)
    (ben,) = make_assessors(assessed_study, "ben")
    assert AssessorAssignment.objects.filter(assessor__user=ben).count() == 2


def test_the_database_refuses_a_grade_outside_the_scale_or_from_a_non_member(
    assessed_study, alice, make_assessors, django_user_model
):
    scenario = assessed_study.scenarios.get(code="S1")
    pools.pool_add_documents(scenario=scenario, external_ids=["d1"], added_by=alice)
    (ann,) = make_assessors(assessed_study, "ann")
    pool_document = scenario.assessment_pool.documents.get()
    stranger = django_user_model.objects.create_user("stranger")
    now = timezone.now()
    for user, grade, message in ((ann, 4, "grade scale"), (stranger, 1, "assessors of the study")):
        with pytest.raises(IntegrityError, match=message), transaction.atomic():
            AssessorJudgment.objects.create(
                pool_document=pool_document, assessor=user, grade=grade, created_at=now, updated_at=now
            )
    judgment = AssessorJudgment.objects.create(
        pool_document=pool_document, assessor=ann, grade=3, created_at=now, updated_at=now
    )
    with pytest.raises(IntegrityError, match="grade scale"), transaction.atomic():
        AssessorJudgment.objects.filter(pk=judgment.pk).update(grade=9)


def test_progress_counts_per_assessor_and_per_scenario(assessed_study, alice, make_assessors):
    scenario = assessed_study.scenarios.get(code="S1")
    pools.pool_add_documents(scenario=scenario, external_ids=["d1", "d2", "d3"], added_by=alice)
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    pool = scenario.assessment_pool
    for external_id, (a, b) in {"d1": (1, 1), "d2": (0, 2)}.items():
        pd = pool.documents.get(document__external_id=external_id)
        assessors.assessor_judgment_record(assessor=ann, pool_document=pd, grade=a)
        assessors.assessor_judgment_record(assessor=ben, pool_document=pd, grade=b)
    assessors.assessor_judgment_record(
        assessor=ann, pool_document=pool.documents.get(document__external_id="d3"), grade=3
    )
    per_assessor, per_scenario = selectors.assessment_progress(study=assessed_study)
    assert [(row.membership.user.username, row.assigned, row.judged) for row in per_assessor] == [
        ("ann", 3, 3),
        ("ben", 3, 2),
    ]
    s1 = per_scenario[0]
    assert (s1.documents, s1.complete, s1.disagreements, s1.decided) == (3, 2, 1, 0)
