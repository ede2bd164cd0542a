"""Agreement between assessors per scenario and overall, and participants against the reference."""

import math

import pytest

from scoring.lib import agreement
from studies.assessment import adjudication, references

from .conftest import grade_all


def test_pairs_get_weighted_kappa_with_their_confusion_matrix_per_scenario_and_overall(
    assessed_study, make_assessors
):
    ann, ben, cat = make_assessors(assessed_study, "ann", "ben", "cat", per_document=3)
    s1 = {"d1": [0, 0, 1], "d2": [1, 2, 2], "d3": [3, 3, 3], "d4": [2, 1, 2]}
    s2 = {"d5": [0, 1, 0], "d6": [3, 2, 3]}
    grade_all(assessed_study, s1, [ann, ben, cat])
    grade_all(assessed_study, s2, [ann, ben, cat], code="S2")
    blocks = adjudication.assessor_agreement(study=assessed_study)
    assert [block.scenario.code if block.scenario else None for block in blocks] == [
        "S1",
        "S2",
        "S3",
        "S4",
        None,
    ]
    first = blocks[0]
    assert first.units == 4
    ann_ben = first.pairs[0]
    a = [grades[0] for grades in s1.values()]
    b = [grades[1] for grades in s1.values()]
    assert (ann_ben.first, ann_ben.second, ann_ben.n) == ("ann", "ben", 4)
    assert ann_ben.kappa_linear == pytest.approx(agreement.weighted_kappa(a, b, range(4), "linear"))
    assert ann_ben.kappa_quadratic == pytest.approx(agreement.weighted_kappa(a, b, range(4), "quadratic"))
    assert ann_ben.matrix.tolist() == agreement.confusion_matrix(a, b, range(4)).tolist()
    data = [[grades[i] for grades in s1.values()] for i in range(3)]
    assert first.alpha_ordinal == pytest.approx(
        agreement.krippendorff_alpha(data, "ordinal", values=range(4))
    )
    overall = blocks[-1]
    both = {**s1, **s2}
    assert overall.units == 6
    assert overall.alpha_interval == pytest.approx(
        agreement.krippendorff_alpha(
            [[g[i] for g in both.values()] for i in range(3)], "interval", values=range(4)
        )
    )
    assert blocks[2].units == 0 and math.isnan(blocks[2].alpha_ordinal) and blocks[2].pairs == []
    assert blocks[2].text["alpha_ordinal"] == "n/a"


def test_participants_are_compared_with_the_newest_reference_version(sessions_study, alice):
    # P001 judged d2 = 2, d4 = 0 and saw d1..d7; P002 judged d3 = 1, d8 = 3 and saw d3.
    lines = ["1 0 d1 1", "1 0 d2 2", "1 0 d3 2", "1 0 d4 0", "1 0 d8 3"]
    references.reference_version_import_qrels(
        study=sessions_study, lines=["1 0 d2 0"], path="old", created_by=alice
    )
    references.reference_version_import_qrels(
        study=sessions_study, lines=lines, path="ref.qrels", created_by=alice
    )
    version, per_participant, per_scenario = adjudication.participant_reference_agreement(
        study=sessions_study
    )
    assert version.number == 2
    p1, p2 = per_participant
    assert (p1.label, p1.n, p1.percent, p1.kappa_linear, p1.missed) == (
        "P001",
        2,
        1.0,
        1.0,
        2,
    )  # missed d1, d3
    assert (p2.label, p2.n, p2.percent, p2.missed) == ("P002", 2, 0.5, 0)
    assert p2.kappa_linear == pytest.approx(0.5)  # O: (1,2) and (3,3); worked in the test's comment below
    s1 = per_scenario[0]
    assert (s1.label, s1.n, s1.percent, s1.missed) == ("S1", 4, 0.75, 2)
    assert s1.kappa_quadratic == pytest.approx(
        agreement.weighted_kappa([2, 0, 1, 3], [2, 0, 2, 3], range(4), "quadratic")
    )
    assert per_scenario[1].n == 0 and per_scenario[1].text["kappa_linear"] == "n/a"
    # P002 by hand: rows 1 and 3, columns 2 and 3, E = 1/2 each; linear w = |i-j|/3; observed 1/3,
    # chance (1/3 + 2/3 + 1/3) / 2 = 2/3; kappa = 1 - (1/3)/(2/3) = 1/2.


def test_without_a_reference_version_there_is_nothing_to_compare(sessions_study):
    assert adjudication.participant_reference_agreement(study=sessions_study) == (None, [], [])
