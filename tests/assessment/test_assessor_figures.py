"""Per-assessor figures, people and machines alike: judgments made, time per judgment (breaks left
out), drift between the first and last third of their work, and agreement with the reference (adjudicated
grades, else the newest reference version) with a confusion matrix and every pair coefficient with its
interval; on the assessment page, the agreement page and in the agreement CSV."""

import csv
import io
from datetime import timedelta

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from scoring.lib import reliability
from studies.assessment import adjudication, pools
from studies.assessment.assessor_figures import BREAK_SECONDS, assessor_figures, time_per_judgment
from studies.assessment.references import reference_version_create
from studies.models import AssessorJudgment, LLMAssessor, ReferenceJudgment, StudyAssessor

T0 = timezone.now() - timedelta(days=1)


def test_time_per_judgment_leaves_breaks_out():
    times = [T0 + timedelta(seconds=s) for s in (0, 10, 30, 30 + BREAK_SECONDS + 1, 30 + BREAK_SECONDS + 41)]
    gaps, breaks, median, q1, q3 = time_per_judgment(times)
    assert (gaps, breaks) == (3, 1)
    assert (median, q1, q3) == (20.0, 15.0, 30.0)  # of the gaps 10, 20, 40
    assert np.isnan(time_per_judgment([T0])[2])


def judge_at(user, pool_document, grade, seconds):
    """A judgment recorded as if made `seconds` after T0 (the created time is what the figures read)."""
    AssessorJudgment.objects.create(
        assessor=user,
        pool_document=pool_document,
        grade=grade,
        created_at=T0 + timedelta(seconds=seconds),
        updated_at=T0 + timedelta(seconds=seconds),
    )


@pytest.fixture
def machine(assessed_study, django_user_model):
    """A machine assessor made directly: an account that cannot log in, its membership, its LLMAssessor."""
    user = django_user_model.objects.create_user("umbrela")
    user.set_unusable_password()
    user.save()
    membership = StudyAssessor.objects.create(study=assessed_study, user=user)
    LLMAssessor.objects.create(membership=membership, endpoint_url="http://127.0.0.1:9/v1", model_name="qwen")
    return user


@pytest.fixture
def judged(assessed_study, make_assessors, machine):
    """S1 pools d1..d6; ann and ben judge all six (k = 2), the machine too. Reference (adjudicated by hand):
    0, 0, 1, 2, 2, 3."""
    study = assessed_study
    ann, ben = make_assessors(study, "ann", "ben", per_document=2)
    scenario = study.scenarios.get(code="S1")
    pools.pool_add_documents(
        scenario=scenario, external_ids=[f"d{n}" for n in range(1, 7)], added_by=study.owner
    )
    documents = list(scenario.assessment_pool.documents.order_by("id"))
    reference = [0, 0, 1, 2, 2, 3]
    grades = {
        ann: [0, 0, 1, 2, 2, 3],  # agrees on every document
        ben: [1, 0, 1, 3, 3, 3],  # stricter start... drifts upwards
        machine: [0, 1, 1, 1, 2, 2],
    }
    for user, values in grades.items():
        for n, (pool_document, grade) in enumerate(zip(documents, values, strict=True)):
            judge_at(user, pool_document, grade, seconds=60 * n)
    for pool_document, grade in zip(documents, reference, strict=True):
        adjudication.adjudication_decide(pool_document=pool_document, grade=grade, decided_by=study.owner)
    return study, ann, ben, machine, documents, reference


def figures_of(report, name):
    return next(f for f in report.assessors if f.name == name)


def test_each_assessors_count_time_and_drift(judged):
    study, *_ = judged
    report = assessor_figures(study=study)
    assert [(f.name, f.kind) for f in report.assessors] == [
        ("ann", "person"),
        ("ben", "person"),
        ("umbrela", "machine"),
    ]
    ben = figures_of(report, "ben")
    assert ben.judgments == 6 and (ben.gaps, ben.breaks) == (5, 0)
    assert ben.median_seconds == 60.0 and ben.time_text == "60 s (IQR 60–60 s)"
    # first third: d1, d2 graded 1, 0; last third: d5, d6 graded 3, 3
    assert (ben.first_mean, ben.last_mean, ben.mean_drift) == (0.5, 3.0, 2.5)
    # against the reference 0, 0 / 2, 3: first third agrees on one of two, last third on one of two
    assert (ben.first_agreement, ben.last_agreement, ben.agreement_drift) == (0.5, 0.5, 0.0)


def test_agreement_with_the_adjudicated_grades_has_a_confusion_matrix_and_intervals(judged):
    study, _ann, _ben, _machine, _documents, reference = judged
    report = assessor_figures(study=study)
    assert report.reference_label == "adjudicated grades"
    machine = figures_of(report, "umbrela")
    assert machine.reference_n == 6
    # rows: the machine's grades 0..3, columns: the reference's
    assert machine.matrix.tolist() == [
        [1, 0, 0, 0],
        [1, 1, 1, 0],
        [0, 0, 1, 1],
        [0, 0, 0, 0],
    ]
    # Cohen's kappa by hand: po = 3/6; pe = sum(row share x column share)
    rows, cols = machine.matrix.sum(axis=1) / 6, machine.matrix.sum(axis=0) / 6
    pe = float(rows @ cols)
    kappa = next(e for e in machine.estimates if e.coefficient == "Cohen's kappa")
    assert kappa.estimate == pytest.approx((0.5 - pe) / (1 - pe))
    assert kappa.ci_low < kappa.estimate < kappa.ci_high and kappa.n == 6
    expected = reliability.pair_estimates(machine.matrix)
    assert [e.coefficient for e in machine.estimates] == [e.coefficient for e in expected]
    ann = figures_of(report, "ann")
    assert np.trace(ann.matrix) == 6 and ann.estimates[0].estimate == 1.0


def test_without_adjudication_the_newest_reference_version_is_the_reference(assessed_study, machine):
    study = assessed_study
    scenario = study.scenarios.get(code="S1")
    pools.pool_add_documents(scenario=scenario, external_ids=["d1", "d2", "d3"], added_by=study.owner)
    documents = list(scenario.assessment_pool.documents.order_by("id"))
    for n, pool_document in enumerate(documents):
        judge_at(machine, pool_document, 1, seconds=n)
    collection = study.collection
    for number, grade in ((1, 0), (2, 1)):
        reference_version_create(
            study=study,
            judgments=[
                ReferenceJudgment(
                    topic_id=scenario.topic_id, document=collection.documents.get(external_id=d), grade=grade
                )
                for d in ("d1", "d2")
            ],
            number=number,
        )
    report = assessor_figures(study=study)
    assert report.reference_label == "reference version 2"
    figures = figures_of(report, "umbrela")
    assert figures.reference_n == 2 and figures.matrix[1, 1] == 2  # d3 is not in the reference


def test_with_no_reference_there_is_no_agreement(assessed_study, machine):
    report = assessor_figures(study=assessed_study)
    assert report.reference_label == ""
    assert figures_of(report, "umbrela").matrix is None and figures_of(report, "umbrela").judgments == 0


def test_the_figures_take_a_fixed_number_of_queries(judged, django_assert_max_num_queries, make_assessors):
    study, *_ = judged
    with django_assert_max_num_queries(8):
        assessor_figures(study=study)
    make_assessors(study, "cat", "dan", "eve")
    with django_assert_max_num_queries(8):
        assessor_figures(study=study)


def test_the_assessment_and_agreement_pages_show_each_assessor_against_the_reference(client, alice, judged):
    study, *_ = judged
    client.force_login(alice)
    manage = client.get(reverse("assessment:manage", args=[study.slug])).content.decode()
    assert 'id="assessor-figures-table"' in manage and "umbrela" in manage
    assert '<strong id="figures-reference">adjudicated grades</strong>' in manage
    page = client.get(reverse("assessment:agreement", args=[study.slug])).content.decode()
    assert "Each assessor against the reference" in page
    assert "umbrela (machine) × adjudicated grades: n = 6" in page
    assert "umbrela × reference: coefficients with 95% intervals" in page


def test_the_agreement_csv_adds_each_assessor_against_the_reference(client, alice, judged):
    study, *_ = judged
    client.force_login(alice)
    response = client.get(reverse("exports:agreement_csv", args=[study.slug]))
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    header = rows[0]
    assert header[-1] == "comparison" and header[:3] == ["scenario", "first", "second"]
    mine = [r for r in rows[1:] if r[-1] == "assessor against reference"]
    assert {r[1] for r in mine} == {"ann", "ben", "umbrela"}
    assert {r[2] for r in mine} == {"adjudicated grades"} and {r[0] for r in mine} == {"all"}
    machine_kappa = next(r for r in mine if r[1] == "umbrela" and r[3] == "Cohen's kappa")
    estimate = figures_of(assessor_figures(study=study), "umbrela").estimates[1]
    assert float(machine_kappa[4]) == pytest.approx(estimate.estimate)
    others = {r[-1] for r in rows[1:]} - {"assessor against reference"}
    assert others == {"all assessors", "assessor pair"}
    pair = next(r for r in rows[1:] if r[-1] == "assessor pair")
    assert pair[1] and pair[2]
