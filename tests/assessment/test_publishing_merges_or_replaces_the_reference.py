"""Publishing the assessors' adjudicated grades over an imported reference: "merge into version N" keeps
the version's other judgments (the adjudicated grades override theirs), "replace" keeps only the adjudicated
grades, and the plan says beforehand what changes, topic by topic. Publishing once replaced 1,837 imported
judgments with 3 adjudicated ones without a word."""

import pytest
from django.urls import reverse

from studies.assessment import adjudication, references
from studies.errors import AssessmentError
from studies.models import ReferenceVersion

from .conftest import grade_all

IMPORTED = ["1 0 d1 1", "1 0 d2 0", "1 0 d5 3", "2 0 d3 1", "2 0 d6 2", "3 0 d7 2"]


@pytest.fixture
def imported_then_adjudicated(assessed_study, make_assessors, alice):
    """v1 imported from qrels; then ann and ben grade d1, d2 (S1, topic 1) and d3, d4 (S2, topic 2), and the
    decisions are d1 = 2, d2 = 1 (in turn), d3 = 3, d4 = 1 (by hand)."""
    references.reference_version_import_qrels(
        study=assessed_study, lines=IMPORTED, path="v1.qrels", created_by=alice
    )
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    grade_all(assessed_study, {"d1": [2, 2], "d2": [1, 2]}, [ann, ben])
    grade_all(assessed_study, {"d3": [3, 3], "d4": [0, 3]}, [ann, ben], code="S2")
    adjudication.adjudicate(study=assessed_study, preset="2002", decided_by=alice)
    d4 = assessed_study.scenarios.get(code="S2").assessment_pool.documents.get(document__external_id="d4")
    adjudication.adjudication_decide(pool_document=d4, grade=1, decided_by=alice)
    return assessed_study


def qrels(version):
    return references.reference_version_qrels(version=version).splitlines()


def changes(plan):
    return {(c.topic_id, c.scenario): (c.added, c.changed, c.removed, c.kept) for c in plan.topics}


def test_merging_keeps_the_imported_judgments_and_overrides_the_adjudicated_ones(
    imported_then_adjudicated, alice
):
    study = imported_then_adjudicated
    plan = references.reference_version_publish_plan(study=study, mode="merge")
    assert (plan.base.number, plan.latest.number, plan.number, plan.decisions) == (1, 1, 2, 4)
    assert changes(plan) == {("1", "S1"): (0, 2, 0, 1), ("2", "S2"): (1, 1, 0, 1), ("3", "S3"): (0, 0, 0, 1)}
    assert plan.totals == {"added": 1, "changed": 3, "removed": 0, "kept": 3}
    version = references.reference_version_publish(study=study, created_by=alice, mode="merge")
    assert version.number == 2 and version.note == "adjudication of 4 documents merged into v1"
    assert qrels(version) == [
        "1 0 d1 2",
        "1 0 d2 1",
        "1 0 d5 3",
        "2 0 d3 3",
        "2 0 d4 1",
        "2 0 d6 2",
        "3 0 d7 2",
    ]
    sources = dict(version.judgments.values_list("document__external_id", "source"))
    assert sources["d5"] == "qrels v1.qrels" and sources["d1"] == "adjudication v2 (agreed)"


def test_merge_is_the_default(imported_then_adjudicated, alice):
    version = references.reference_version_publish(study=imported_then_adjudicated, created_by=alice)
    assert version.judgments.count() == 7


def test_replacing_keeps_only_the_adjudicated_grades_and_says_what_it_removes(
    imported_then_adjudicated, alice
):
    study = imported_then_adjudicated
    plan = references.reference_version_publish_plan(study=study, mode="replace")
    assert plan.base is None and plan.latest.number == 1
    assert changes(plan) == {("1", "S1"): (0, 2, 1, 0), ("2", "S2"): (1, 1, 1, 0), ("3", "S3"): (0, 0, 1, 0)}
    assert plan.totals == {"added": 1, "changed": 3, "removed": 3, "kept": 0}
    version = references.reference_version_publish(study=study, created_by=alice, mode="replace")
    assert qrels(version) == ["1 0 d1 2", "1 0 d2 1", "2 0 d3 3", "2 0 d4 1"]


def test_merging_into_an_older_version_is_compared_with_the_latest(imported_then_adjudicated, alice):
    study = imported_then_adjudicated
    references.reference_version_import_qrels(
        study=study, lines=["3 0 d8 1"], path="v2.qrels", created_by=alice
    )
    plan = references.reference_version_publish_plan(study=study, mode="merge", base_number=1)
    assert (plan.base.number, plan.latest.number, plan.number) == (1, 2, 3)
    # Against v2 (d8 only): everything of v1 and the adjudication comes back, d8 goes.
    assert changes(plan)[("3", "S3")] == (1, 0, 1, 0)
    version = references.reference_version_publish(study=study, created_by=alice, mode="merge", base_number=1)
    assert len(qrels(version)) == 7 and "3 0 d8 1" not in qrels(version)


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ({"mode": "overwrite"}, "unknown publishing mode 'overwrite'"),
        ({"mode": "merge", "base_number": 7}, "no reference version 7 to merge into"),
        ({"mode": "replace", "base_number": 1}, "a replacement merges into no version"),
    ],
)
def test_an_unknown_mode_or_version_is_refused(imported_then_adjudicated, alice, arguments, reason):
    with pytest.raises(AssessmentError, match=reason):
        references.reference_version_publish(study=imported_then_adjudicated, created_by=alice, **arguments)
    assert ReferenceVersion.objects.count() == 1


def test_a_publication_confirmed_from_a_preview_is_refused_if_anything_changed_since(
    imported_then_adjudicated, alice
):
    study = imported_then_adjudicated
    previewed = references.reference_version_publish_plan(study=study, mode="merge")
    assert previewed.digest == references.reference_version_publish_plan(study=study, mode="merge").digest
    d4 = study.scenarios.get(code="S2").assessment_pool.documents.get(document__external_id="d4")
    adjudication.adjudication_decide(pool_document=d4, grade=2, decided_by=alice)
    with pytest.raises(AssessmentError, match="changed since the preview"):
        references.reference_version_publish(
            study=study, created_by=alice, mode="merge", expected_digest=previewed.digest
        )
    assert ReferenceVersion.objects.count() == 1
    replace = references.reference_version_publish_plan(study=study, mode="replace")
    assert replace.digest != references.reference_version_publish_plan(study=study, mode="merge").digest


# --- the pages -------------------------------------------------------------------------------------------


def publish_url(study):
    return reverse("assessment:publish", args=[study.slug])


def test_the_preview_page_shows_what_a_replacement_removes_before_anything_is_published(
    client, alice, imported_then_adjudicated
):
    study = imported_then_adjudicated
    client.force_login(alice)
    assert 'method="get"' in client.get(reverse("assessment:manage", args=[study.slug])).content.decode()
    response = client.get(publish_url(study), {"publish-mode": "replace", "publish-note": "assessors only"})
    page = response.content.decode()
    assert response.status_code == 200 and ReferenceVersion.objects.count() == 1
    assert "1 added, 3 changed, 3 removed</strong>, 0 unchanged" in page
    assert "removes 3 judgments from the reference" in page
    assert "<td>3</td><td>S3</td>\n          <td>0</td><td>0</td><td>1</td><td>0</td>" in page
    digest = response.context["plan"].digest
    response = client.post(
        publish_url(study),
        {"publish-mode": "replace", "publish-note": "assessors only", "publish-digest": digest},
        follow=True,
    )
    assert [str(m) for m in response.context["messages"]] == ["Reference version 2 published (4 judgments)."]
    version = study.reference_versions.get(number=2)
    assert version.note == "assessors only" and version.judgments.count() == 4


def test_the_preview_of_a_merge_names_the_version_and_publishes_it(client, alice, imported_then_adjudicated):
    study = imported_then_adjudicated
    client.force_login(alice)
    response = client.get(publish_url(study), {"publish-mode": "merge", "publish-base": "1"})
    page = response.content.decode()
    assert "Merge into v1" in page and "1 added, 3 changed, 0 removed</strong>, 3 unchanged" in page
    confirm = response.context["confirm_form"]
    data = {f"publish-{name}": value for name, value in confirm.initial.items() if value is not None}
    client.post(publish_url(study), data)
    assert study.reference_versions.get(number=2).judgments.count() == 7


def test_a_publication_posted_without_its_preview_goes_to_the_preview(
    client, alice, imported_then_adjudicated
):
    study = imported_then_adjudicated
    client.force_login(alice)
    response = client.post(publish_url(study), {"publish-mode": "replace"})
    assert response.status_code == 302 and response.url.startswith(publish_url(study) + "?")
    assert "publish-mode=replace" in response.url
    assert ReferenceVersion.objects.count() == 1


def test_a_stale_preview_publishes_nothing_and_shows_the_preview_again(
    client, alice, imported_then_adjudicated
):
    study = imported_then_adjudicated
    client.force_login(alice)
    response = client.post(
        publish_url(study), {"publish-mode": "merge", "publish-digest": "0" * 16}, follow=True
    )
    messages = [str(m) for m in response.context["messages"]]
    assert messages == ["the adjudication or the reference versions changed since the preview; look again"]
    assert "Merge into v1" in response.content.decode()
    assert ReferenceVersion.objects.count() == 1
