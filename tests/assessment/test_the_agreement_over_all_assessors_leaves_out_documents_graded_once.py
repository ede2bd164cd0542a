"""A document graded by one assessor alone carries no agreement: every figure over all assessors (the page,
agreement.csv, the API) leaves it out, as the library's all_estimates does on the same grades, and the page
says how many were left out; n is the documents graded twice or more."""

import csv
import io
import re

import numpy as np
import pytest
from django.urls import reverse

from scoring.lib import reliability
from studies.assessment import adjudication

from .conftest import grade_all

# d3, d5 and d6 graded once (by ann, ann and ben): 4 documents graded twice or more in S1.
S1 = {
    "d1": [0, 0, 1],
    "d2": [1, 2, 2],
    "d3": [3, None, None],
    "d4": [2, 1, 2],
    "d5": [3, None, None],
    "d6": [None, 3, None],
    "d7": [0, 1, 0],
}
S2 = {"d8": [3, 2, 3], "d9": [0, 0, 0]}
REPLICATES = 200


@pytest.fixture
def graded(assessed_study, make_assessors, settings):
    settings.AGREEMENT_BOOTSTRAP_REPLICATES = REPLICATES
    users = make_assessors(assessed_study, "ann", "ben", "cat", per_document=3)
    grade_all(assessed_study, S1, users)
    grade_all(assessed_study, S2, users, code="S2")
    return assessed_study


def grades(by_document) -> np.ndarray:
    """graders x documents, NaN where an assessor gave no grade: every graded document, once ones too."""
    return np.array([[np.nan if g is None else g for g in row] for row in by_document.values()]).T


def library(by_document):
    return reliability.all_estimates(
        grades(by_document), range(4), replicates=REPLICATES, seed=reliability.DEFAULT_SEED
    )


def section(page: str, heading: str) -> str:
    """The page's card whose heading starts with `heading`."""
    return re.search(rf"<h2>{heading}.*?</section>", page, re.S).group(0)


def test_the_figures_over_all_assessors_are_the_librarys_on_the_same_grades(graded):
    s1, s2, *_, overall = adjudication.assessor_agreement(study=graded)
    assert (s1.units, s1.graded_once) == (4, 3)
    assert (s2.units, s2.graded_once) == (2, 0)
    assert (overall.units, overall.graded_once) == (6, 3)
    assert s1.estimates == library(S1)
    assert overall.estimates == library(S1 | S2)
    assert {estimate.n for estimate in s1.estimates} == {4}  # the n shown is the n used
    # The documents graded once would move Fleiss' kappa if they counted (irrCAC's convention).
    with_once = reliability.fleiss_kappa_estimate(grades(S1), range(4))
    assert with_once.n == 7 and abs(with_once.estimate - s1.estimates[0].estimate) > 0.01
    twice = {doc: row for doc, row in S1.items() if sum(g is not None for g in row) >= 2}
    assert s1.estimates[0] == reliability.fleiss_kappa_estimate(grades(twice), range(4))


def test_the_page_says_how_many_documents_were_left_out(client, alice, graded):
    client.force_login(alice)
    page = client.get(reverse("assessment:agreement", args=[graded.slug])).content.decode()
    s1, overall = section(page, "S1"), section(page, "Overall")
    note = "3 documents graded by one assessor only are left out"
    assert note in s1 and note in overall and page.count("graded by one assessor only") == 2
    assert (
        "Documents with two or more grades: 4 " in s1 and "Documents with two or more grades: 6 " in overall
    )
    fleiss = library(S1)[0]
    row = re.search(r"<tr><td>Fleiss&#x27; kappa</td>(.*?)</tr>", s1, re.S).group(1)
    assert f"<td>{fleiss.estimate:.3f}</td>" in row and "<td>4</td>" in row
    assert "graded by one assessor" not in section(page, "S2")


def test_the_csv_and_the_api_hold_the_same_figures_and_count(client, alice, graded):
    client.force_login(alice)
    rows = list(
        csv.reader(io.StringIO(client.get(reverse("exports:agreement_csv", args=[graded.slug])).text))
    )
    fleiss = library(S1)[0]
    [s1_fleiss] = [r for r in rows if r[0] == "S1" and r[1:3] == ["", ""] and r[3] == "Fleiss' kappa"]
    assert float(s1_fleiss[4]) == pytest.approx(fleiss.estimate) and s1_fleiss[9] == "4"
    body = client.get(f"/api/studies/{graded.pk}/agreement/").json()
    s1 = body["blocks"][0]
    assert (s1["scenario"], s1["documents"], s1["graded_once"]) == ("S1", 4, 3)
    assert s1["all_assessors"][0]["estimate"] == pytest.approx(fleiss.estimate)
    assert body["blocks"][-1]["graded_once"] == 3
