"""Scenarios assigned to named assessors: a scenario's pool documents go only to its assessors, a
changed choice deals unjudged work again and never withdraws judged work, and a scenario nobody judges is
flagged on the assessment page."""

import pytest
from django.urls import reverse

from studies.assessment import assessor_work, assessors, pools
from studies.errors import AssessmentError
from studies.models import (
    AssessorAssignment,
    AssessorScenario,
    AuditAction,
    LLMAssessor,
    StudyAssessor,
)


def dealt(study):
    """scenario code -> set of usernames dealt its documents."""
    out: dict[str, set[str]] = {}
    for code, username in AssessorAssignment.objects.filter(assessor__study=study).values_list(
        "pool_document__pool__scenario__code", "assessor__user__username"
    ):
        out.setdefault(code, set()).add(username)
    return out


@pytest.fixture
def pooled(assessed_study, make_assessors):
    users = make_assessors(assessed_study, "ann", "ben", "cat")
    for n, code in enumerate(["S1", "S2", "S3"]):
        ids = [f"d{4 * n + i}" for i in range(1, 5)]
        pools.pool_add_documents(
            scenario=assessed_study.scenarios.get(code=code), external_ids=ids, added_by=assessed_study.owner
        )
    return assessed_study, users


def membership(study, user):
    return StudyAssessor.objects.get(study=study, user=user)


@pytest.mark.parametrize("per_document", [1, 2, 3])
def test_every_scenarios_documents_go_only_to_its_assessors(pooled, per_document):
    study, (ann, ben, cat) = pooled
    assessors.assessment_plan_set(study=study, assessors_per_document=per_document)
    assessor_work.assessor_scenarios_set(
        membership=membership(study, ann), scenario_codes=["S1"], by=study.owner
    )
    assessor_work.assessor_scenarios_set(
        membership=membership(study, ben), scenario_codes=["S1", "S2"], by=study.owner
    )
    # cat chose nothing: cat judges every scenario.
    teams = {"S1": {"ann", "ben", "cat"}, "S2": {"ben", "cat"}, "S3": {"cat"}}
    got = dealt(study)
    for code, team in teams.items():
        assert got[code] <= team
    for pool_document in study.scenarios.get(code="S2").assessment_pool.documents.all():
        allocated = pool_document.assessor_assignments.count()
        assert allocated == min(per_document, len(teams["S2"]))
    assert all(
        pd.assessor_assignments.count() == 1
        for pd in study.scenarios.get(code="S3").assessment_pool.documents.all()
    )


def test_a_grown_pool_deals_its_new_documents_only_to_the_scenarios_assessors(pooled):
    study, (ann, _ben, _cat) = pooled
    for user in pooled[1]:
        codes = ["S1"] if user == ann else ["S2", "S3"]
        assessor_work.assessor_scenarios_set(
            membership=membership(study, user), scenario_codes=codes, by=study.owner
        )
    pools.pool_add_documents(
        scenario=study.scenarios.get(code="S1"), external_ids=["d12"], added_by=study.owner
    )
    new = study.scenarios.get(code="S1").assessment_pool.documents.get(document__external_id="d12")
    assert list(new.assessor_assignments.values_list("assessor__user__username", flat=True)) == ["ann"]


def test_changing_the_choice_redeals_unjudged_work_and_keeps_judged_work(pooled):
    study, (ann, ben, cat) = pooled
    s1 = study.scenarios.get(code="S1").assessment_pool
    judged_by_ann = [
        a.pool_document for a in AssessorAssignment.objects.filter(assessor__user=ann, pool_document__pool=s1)
    ]
    assert judged_by_ann
    assessors.assessor_judgment_record(assessor=ann, pool_document=judged_by_ann[0], grade=1)
    assessor_work.assessor_scenarios_set(
        membership=membership(study, ann), scenario_codes=["S3"], by=study.owner
    )
    ann_s1 = AssessorAssignment.objects.filter(assessor__user=ann, pool_document__pool=s1)
    assert [a.pool_document_id for a in ann_s1] == [judged_by_ann[0].id]
    # every S1 document is still dealt to somebody
    assert all(pd.assessor_assignments.exists() for pd in s1.documents.all())
    entry = study.audit_entries.get(action=AuditAction.ASSESSOR_SCENARIOS_CHANGED)
    assert entry.detail == {"assessor": "ann", "old": [], "new": ["S3"], "by": "alice"}


def test_an_unknown_scenario_is_refused_and_nothing_changes(pooled):
    study, (ann, _ben, _cat) = pooled
    before = sorted(AssessorAssignment.objects.values_list("assessor_id", "pool_document_id"))
    with pytest.raises(AssessmentError, match="no scenario 'S9'"):
        assessor_work.assessor_scenarios_set(
            membership=membership(study, ann), scenario_codes=["S1", "S9"], by=study.owner
        )
    assert not AssessorScenario.objects.exists()
    assert sorted(AssessorAssignment.objects.values_list("assessor_id", "pool_document_id")) == before


def test_a_machine_assessor_is_not_given_scenarios(pooled, django_user_model):
    study, _users = pooled
    machine = django_user_model.objects.create_user("llm-1")
    machine.set_unusable_password()
    machine.save()
    member = StudyAssessor.objects.create(study=study, user=machine)
    LLMAssessor.objects.create(membership=member, endpoint_url="http://127.0.0.1:9/v1", model_name="m")
    with pytest.raises(AssessmentError, match="machine assessor"):
        assessor_work.assessor_scenarios_set(membership=member, scenario_codes=["S1"], by=study.owner)


def test_the_page_flags_a_scenario_nobody_judges(client, alice, pooled):
    study, users = pooled
    for user in users:
        assessor_work.assessor_scenarios_set(
            membership=membership(study, user), scenario_codes=["S1"], by=alice
        )
    client.force_login(alice)
    page = client.get(reverse("assessment:manage", args=[study.slug])).content.decode()
    assert 'id="scenarios-without-assessor"' in page
    flagged = page.split('id="scenarios-without-assessor">')[1].split("</p>")[0]
    assert "S2" in flagged and "S3" in flagged and "S4" in flagged and "S1" not in flagged
    assert page.count("no-assessor") == 3


def test_the_form_on_the_assessment_page_sets_an_assessors_scenarios(client, alice, pooled):
    study, (ann, _ben, _cat) = pooled
    client.force_login(alice)
    url = reverse("assessment:assessor_scenarios", args=[study.slug])
    response = client.post(url, {"assessor": membership(study, ann).pk, "scenarios": ["S2", "S1"]})
    assert response.status_code == 302 and response["Location"].endswith("#assessors")
    assert sorted(AssessorScenario.objects.values_list("scenario__code", flat=True)) == ["S1", "S2"]
    page = client.get(reverse("assessment:manage", args=[study.slug])).content.decode()
    assert "ann judges S1, S2" in page
    # back to all: nothing ticked
    client.post(url, {"assessor": membership(study, ann).pk})
    assert not AssessorScenario.objects.exists()


def test_another_studys_assessor_cannot_be_given_scenarios_here(client, alice, pooled, django_user_model):
    study, _users = pooled
    client.force_login(alice)
    url = reverse("assessment:assessor_scenarios", args=[study.slug])
    response = client.post(url, {"assessor": 999999, "scenarios": ["S1"]})
    assert response.status_code == 404
    assert not AssessorScenario.objects.exists()


def test_the_assessment_pages_queries_do_not_grow_with_the_team(client, alice, pooled, make_assessors):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    study, users = pooled
    assessor_work.assessor_scenarios_set(
        membership=membership(study, users[0]), scenario_codes=["S1"], by=alice
    )
    client.force_login(alice)
    url = reverse("assessment:manage", args=[study.slug])
    client.get(url)  # the session and the like, once
    with CaptureQueriesContext(connection) as three:
        assert client.get(url).status_code == 200
    make_assessors(study, "dan", "eve", "fay")
    with CaptureQueriesContext(connection) as six:
        assert client.get(url).status_code == 200
    assert len(six) == len(three)
