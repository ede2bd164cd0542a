"""An assessor of another lab becomes a study's assessor only by accepting: until then there is a
pending invitation on their home page, no membership, no work allocated and no page of the study."""

import pytest
from django.urls import reverse

from studies.assessment import assessors, pools
from studies.design import services
from studies.errors import AssessmentError
from studies.models import AssessorAssignment, AssessorInvitation, StudyAssessor


@pytest.fixture
def bobs_study(alice, bob, collection):
    """Bob's own study (Bob is of another lab than Alice's assessors), with a pool of three documents."""
    study = services.study_create(owner=bob, name="Bob's study")
    services.scenario_add(study=study, code="S1", title="S", text="T", topic_id="1")
    study.collection = collection
    study.save(update_fields=["collection"])
    pools.pool_add_documents(scenario=study.scenarios.get(), external_ids=["d1", "d2", "d3"], added_by=bob)
    return study


@pytest.fixture
def ann(assessed_study, alice):
    membership, _password = assessors.assessor_invite(study=assessed_study, username="ann", invited_by=alice)
    return membership.user


def test_an_assessor_of_another_lab_gets_a_pending_invitation_and_no_membership(ann, bobs_study, bob, client):
    invitation, password = assessors.assessor_invite(study=bobs_study, username="ann", invited_by=bob)
    assert isinstance(invitation, AssessorInvitation) and password is None
    assert invitation.status == "pending" and invitation.user == ann and invitation.invited_by == bob
    assert not StudyAssessor.objects.filter(study=bobs_study, user=ann).exists()
    assert not AssessorAssignment.objects.filter(assessor__user=ann, assessor__study=bobs_study).exists()
    client.force_login(ann)
    assert client.get(reverse("assessment:assessor_study", args=[bobs_study.slug])).status_code == 404
    home = client.get(reverse("assessment:home")).content.decode()
    assert (
        "Bob&#x27;s study" in home and reverse("assessment:invitation_answer", args=[invitation.pk]) in home
    )


def test_accepting_makes_them_an_assessor_with_their_share_of_the_pool(ann, bobs_study, bob, client):
    invitation, _ = assessors.assessor_invite(study=bobs_study, username="ann", invited_by=bob)
    client.force_login(ann)
    answer = reverse("assessment:invitation_answer", args=[invitation.pk])
    response = client.post(answer, {"answer": "accept"})
    assert response.status_code == 302
    invitation.refresh_from_db()
    assert invitation.status == "accepted" and invitation.answered_at is not None
    membership = StudyAssessor.objects.get(study=bobs_study, user=ann)
    assert membership.invited_by == bob
    assert AssessorAssignment.objects.filter(assessor=membership).count() == 3
    assert client.get(reverse("assessment:assessor_study", args=[bobs_study.slug])).status_code == 200
    # Answered once: a second answer finds nothing to answer.
    assert client.post(answer, {"answer": "decline"}).status_code == 404
    assert StudyAssessor.objects.filter(study=bobs_study, user=ann).exists()


def test_declining_leaves_no_membership_and_the_researcher_may_ask_again(ann, bobs_study, bob, client):
    invitation, _ = assessors.assessor_invite(study=bobs_study, username="ann", invited_by=bob)
    client.force_login(ann)
    client.post(reverse("assessment:invitation_answer", args=[invitation.pk]), {"answer": "decline"})
    invitation.refresh_from_db()
    assert invitation.status == "declined"
    assert not StudyAssessor.objects.filter(study=bobs_study, user=ann).exists()
    client.force_login(bob)
    page = client.get(reverse("assessment:manage", args=[bobs_study.slug])).content.decode()
    assert "ann: declined" in page
    again, _ = assessors.assessor_invite(study=bobs_study, username="ann", invited_by=bob)
    assert again.pk == invitation.pk and again.status == "pending" and again.answered_at is None


def test_only_the_invited_assessor_can_answer(ann, bobs_study, bob, client, django_user_model):
    invitation, _ = assessors.assessor_invite(study=bobs_study, username="ann", invited_by=bob)
    zoe = django_user_model.objects.create_user("zoe", password="zoe-password")
    answer = reverse("assessment:invitation_answer", args=[invitation.pk])
    for user in (zoe, bob):
        client.force_login(user)
        assert client.post(answer, {"answer": "accept"}).status_code == 404
    with pytest.raises(AssessmentError, match="not yours"):
        assessors.assessor_invitation_answer(invitation=invitation, user=zoe, accept=True)
    invitation.refresh_from_db()
    assert invitation.status == "pending"
    assert not StudyAssessor.objects.filter(study=bobs_study).exists()


def test_the_researchers_page_says_the_invitation_waits(ann, bobs_study, bob, client):
    client.force_login(bob)
    response = client.post(
        reverse("assessment:assessor_invite", args=[bobs_study.slug]), {"invite-username": "ann"}, follow=True
    )
    [message] = [str(m) for m in response.context["messages"]]
    assert "another lab" in message and "accept" in message
    assert "ann: waiting for the assessor" in response.content.decode()
    assert not StudyAssessor.objects.filter(study=bobs_study, user=ann).exists()


def test_an_assessor_of_one_of_the_owners_studies_is_added_at_once(ann, assessed_study, alice):
    second = services.study_create(owner=alice, name="Alice's second study")
    membership, password = assessors.assessor_invite(study=second, username="ann", invited_by=alice)
    assert isinstance(membership, StudyAssessor) and membership.study == second and password is None
    assert not AssessorInvitation.objects.exists()


def test_a_new_account_made_by_the_invitation_is_added_at_once(bobs_study, bob):
    membership, password = assessors.assessor_invite(study=bobs_study, username="newbie", invited_by=bob)
    assert isinstance(membership, StudyAssessor) and password
    assert AssessorAssignment.objects.filter(assessor=membership).count() == 3


def test_the_admin_cannot_add_a_membership_around_the_rule(admin_client):
    assert admin_client.get("/admin/studies/studyassessor/add/").status_code == 403
