"""The agreement page shows, per scenario and overall, every coefficient with its interval, p-value and
method, for each pair of assessors and over all of them; the agreement CSV download holds the same figures."""

import csv
import io

import numpy as np
import pytest
from django.urls import reverse

from scoring.lib import agreement, reliability
from studies.assessment import adjudication
from studies.assessment.agreement_estimates import CSV_HEADER, PAIR_COEFFICIENTS

from .conftest import grade_all

S1 = {"d1": [0, 0, 1], "d2": [1, 2, 2], "d3": [3, 3, 3], "d4": [2, 1, 2], "d5": [0, 0, 0], "d6": [0, 1, 0]}
S2 = {"d7": [0, 0, None], "d8": [3, 2, 3], "d9": [0, 0, 0]}


@pytest.fixture
def graded(assessed_study, make_assessors, settings):
    settings.AGREEMENT_BOOTSTRAP_REPLICATES = 200
    users = make_assessors(assessed_study, "ann", "ben", "cat", per_document=3)
    grade_all(assessed_study, S1, users)
    grade_all(assessed_study, S2, users, code="S2")
    return assessed_study


def grades(by_document):
    return np.array([[np.nan if g is None else g for g in row] for row in by_document.values()]).T


def test_the_blocks_carry_every_coefficient_equal_to_the_library(graded):
    blocks = adjudication.assessor_agreement(study=graded)
    first = blocks[0]
    data = grades(S1)
    names = [estimate.coefficient for estimate in first.estimates]
    assert names == [
        "Fleiss' kappa",
        "Gwet's AC1",
        "Gwet's AC2 (linear weights)",
        "Gwet's AC2 (quadratic weights)",
        "Gwet's AC2 (ordinal weights)",
        "Krippendorff's alpha (nominal)",
        "Krippendorff's alpha (ordinal)",
        "Krippendorff's alpha (interval)",
        "Percent agreement",
        "Brennan-Prediger",
    ]
    assert first.estimates[0] == reliability.fleiss_kappa_estimate(data, range(4))
    assert first.estimates[6] == reliability.krippendorff_alpha_bootstrap(
        data, "ordinal", range(4), replicates=200, seed=reliability.DEFAULT_SEED
    )
    assert first.estimates[7].estimate == pytest.approx(first.alpha_interval)
    ann_ben = first.pairs[0]
    assert len(ann_ben.estimates) == len(PAIR_COEFFICIENTS)
    kappa_linear = ann_ben.estimates[2]
    assert kappa_linear.coefficient == "Cohen's kappa (linear weights)"
    assert kappa_linear.estimate == pytest.approx(ann_ben.kappa_linear)
    assert kappa_linear == reliability.cohen_kappa_estimate(
        agreement.confusion_matrix(data[0], data[1], range(4)), "linear"
    )
    overall = blocks[-1]
    assert overall.scenario is None and overall.estimates[0].n == len(S1) + len(S2)


def test_the_page_shows_the_intervals_and_methods(client, alice, graded):
    client.force_login(alice)
    page = client.get(reverse("assessment:agreement", args=[graded.slug])).content.decode()
    assert page.count("All assessors: coefficients with 95% intervals") == 5  # S1..S4 and overall
    assert "ann × ben: coefficients with 95% intervals" in page
    assert "Gwet&#x27;s AC2 (ordinal weights)" in page and "Fleiss&#x27; kappa" in page
    assert "bootstrap over documents, B = 200, seed 2014, percentile interval" in page
    assert "analytic variance (Gwet 2014), t interval on n − 1 df" in page
    kappa = adjudication.assessor_agreement(study=graded)[0].pairs[0].estimates[2]
    assert f"[{kappa.ci_low:.3f}, {kappa.ci_high:.3f}]" in page
    assert reverse("exports:agreement_csv", args=[graded.slug]) in page


def test_the_csv_holds_a_row_per_coefficient_pair_and_scenario(client, alice, graded):
    client.force_login(alice)
    response = client.get(reverse("exports:agreement_csv", args=[graded.slug]))
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{graded.slug}-agreement.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    # The columns as they were, then `comparison` (each assessor against the reference too).
    assert rows[0] == [*CSV_HEADER, "comparison"]
    blocks = adjudication.assessor_agreement(study=graded)
    expected = sum(len(b.estimates) + sum(len(p.estimates) for p in b.pairs) for b in blocks)
    assert len(rows) - 1 == expected
    fleiss_s1 = next(r for r in rows if r[0] == "S1" and r[3] == "Fleiss' kappa")
    estimate = blocks[0].estimates[0]
    assert fleiss_s1[1:3] == ["", ""]
    assert [float(x) for x in fleiss_s1[4:9]] == pytest.approx(
        [estimate.estimate, estimate.se, estimate.ci_low, estimate.ci_high, estimate.p_value]
    )
    assert int(fleiss_s1[9]) == estimate.n == len(S1)
    ann_cat = [r for r in rows if r[0] == "all" and r[1:3] == ["ann", "cat"]]
    assert [r[3] for r in ann_cat][:2] == ["Percent agreement", "Cohen's kappa"]
    # a scenario nobody graded: its coefficients are there, empty
    s3 = next(r for r in rows if r[0] == "S3" and r[3] == "Gwet's AC1")
    assert s3[4:9] == ["", "", "", "", ""] and s3[9] == "0"


def test_the_downloads_page_lists_the_agreement_csv(client, alice, graded):
    client.force_login(alice)
    page = client.get(reverse("exports:downloads", args=[graded.slug])).content.decode()
    assert reverse("exports:agreement_csv", args=[graded.slug]) in page
