"""A practice task's documents are dealt to no assessor and listed to none, even when its pool was
built before the fix; an assessor cannot choose it among their scenarios."""

import pytest

from studies.assessment import assessor_work, assessors
from studies.errors import AssessmentError
from studies.models import AssessorAssignment, StudyAssessor

from .conftest import practice_pool_from_before

pytestmark = pytest.mark.django_db


def test_a_practice_pool_from_before_is_dealt_to_nobody(practice_study, make_assessors):
    practice_pool_from_before(practice_study, "d9", "d10")
    make_assessors(practice_study, "ann")
    assessors.allocate(practice_study, rebalance=True)
    assert not AssessorAssignment.objects.filter(pool_document__pool__scenario__code="P").exists()


def test_the_assessor_s_pages_leave_the_practice_task_out(client, practice_study, make_assessors):
    pool = practice_pool_from_before(practice_study, "d9")
    (ann,) = make_assessors(practice_study, "ann")
    # Dealt before the fix: the list still leaves it out.
    AssessorAssignment.objects.create(
        assessor=StudyAssessor.objects.get(user=ann), pool_document=pool.documents.get()
    )
    client.force_login(ann)
    page = client.get(f"/assess/study/{practice_study.slug}/").content.decode()
    assert "Warm-up" not in page and "S1" in page
    assert client.get(f"/assess/study/{practice_study.slug}/P/").status_code == 404


def test_an_assessor_cannot_choose_the_practice_task(practice_study, make_assessors, alice):
    (ann,) = make_assessors(practice_study, "ann")
    with pytest.raises(AssessmentError, match="scenarios: 'P' is a practice task"):
        assessor_work.assessor_scenarios_set(
            membership=StudyAssessor.objects.get(user=ann), scenario_codes=["S1", "P"], by=alice
        )
