"""The researcher's assessment pages end to end through the views: build, invite, adjudicate, publish,
export and import."""

import re

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from studies.assessment import assessors
from studies.models import ReferenceVersion, StudyAssessor

from .conftest import grade_all


def url(name, study, *args):
    return reverse(f"assessment:{name}", args=[study.slug, *args])


def messages_of(response):
    return [str(m) for m in response.context["messages"]]


def test_a_researcher_builds_pools_invites_adjudicates_and_publishes(client, alice, sessions_study):
    client.force_login(alice)
    response = client.post(
        url("pool_build", sessions_study), {"pool-rule": "relevant", "pool-top_x": 10}, follow=True
    )
    assert "S1: +3 −0" in messages_of(response)[0]
    response = client.post(url("assessor_invite", sessions_study), {"invite-username": "ann"}, follow=True)
    password = re.search(r"one-time password: (\S+)", messages_of(response)[0]).group(1)
    ann = StudyAssessor.objects.get(study=sessions_study).user
    assert ann.check_password(password)
    client.post(url("assessor_invite", sessions_study), {"invite-username": "ben"})
    client.post(url("plan_set", sessions_study), {"plan-assessors_per_document": 2})
    ben = StudyAssessor.objects.get(study=sessions_study, user__username="ben").user
    pool = sessions_study.scenarios.get(code="S1").assessment_pool
    for external_id, (a, b) in {"d2": (2, 2), "d3": (1, 2), "d8": (0, 3)}.items():
        pd = pool.documents.get(document__external_id=external_id)
        assessors.assessor_judgment_record(assessor=ann, pool_document=pd, grade=a)
        assessors.assessor_judgment_record(assessor=ben, pool_document=pd, grade=b)
    page = client.get(url("manage", sessions_study)).content.decode()
    assert "ann" in page and "100%" in page
    response = client.post(url("adjudicate", sessions_study), {"adjudicate-preset": "2002"}, follow=True)
    assert "For you to decide: 1" in messages_of(response)[0]
    page = response.content.decode()
    assert "yours to decide" in page and "d8" in page
    d8 = pool.documents.get(document__external_id="d8")
    client.post(url("decide", sessions_study), {"pool_document": d8.id, "grade": 3})
    response = client.get(url("publish", sessions_study), {"publish-note": "first"})
    assert "First version" in response.content.decode() and not ReferenceVersion.objects.exists()
    digest = response.context["plan"].digest
    response = client.post(
        url("publish", sessions_study), {"publish-note": "first", "publish-digest": digest}, follow=True
    )
    assert "Reference version 1 published (3 judgments)" in messages_of(response)[-1]
    qrels = client.get(url("version_qrels", sessions_study, 1))
    assert qrels["Content-Disposition"].endswith('-v1.qrels"')
    assert qrels.content.decode() == "1 0 d2 2\n1 0 d3 1\n1 0 d8 3\n"
    page = client.get(url("agreement", sessions_study)).content.decode()
    assert "ann × ben" in page and "κ linear" in page and "Reference version v1" in page


def test_a_bad_qrels_upload_says_file_and_line_and_imports_nothing(client, alice, assessed_study):
    client.force_login(alice)
    upload = SimpleUploadedFile("mine.qrels", b"1 0 d1 2\n1 0 d2 9\n")
    response = client.post(url("version_import", assessed_study), {"refqrels-qrels": upload}, follow=True)
    assert messages_of(response) == [
        "Nothing imported: mine.qrels:2: grade 9 is not in the study's scale [0, 1, 2, 3] (or -9..-1)"
    ]
    assert not ReferenceVersion.objects.exists()
    upload = SimpleUploadedFile("good.qrels", b"1 0 d1 2\n")
    response = client.post(url("version_import", assessed_study), {"refqrels-qrels": upload}, follow=True)
    assert messages_of(response) == ["Reference version 1 imported from good.qrels."]


def test_pool_documents_can_be_added_by_hand_and_from_qrels_through_the_page(client, alice, assessed_study):
    client.force_login(alice)
    client.post(url("pool_add", assessed_study), {"add-scenario": "S2", "add-external_ids": "d1\nd2"})
    upload = SimpleUploadedFile("p.qrels", b"3 0 d4 0\n")
    client.post(url("pool_import", assessed_study), {"poolqrels-qrels": upload})
    assert assessed_study.scenarios.get(code="S2").assessment_pool.documents.count() == 2
    assert assessed_study.scenarios.get(code="S3").assessment_pool.documents.count() == 1


def test_publishing_with_undecided_disagreements_is_refused_on_the_page(
    client, alice, assessed_study, make_assessors
):
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    grade_all(assessed_study, {"d1": [0, 3]}, [ann, ben])
    client.force_login(alice)
    client.post(url("adjudicate", assessed_study), {"adjudicate-preset": "researcher"})
    response = client.post(url("publish", assessed_study), {}, follow=True)
    assert messages_of(response)[-1] == "nothing is adjudicated yet: run a preset or decide by hand first"


def test_the_pages_of_a_study_without_pools_or_assessors_render(client, alice, designed_study):
    client.force_login(alice)
    for name in ("manage", "agreement", "disagreements"):
        response = client.get(url(name, designed_study))
        assert response.status_code == 200, name
    assert "No assessors yet." in client.get(url("manage", designed_study)).content.decode()
    assert client.get(reverse("assessment:home")).status_code == 200
