"""Each adjudication preset on constructed disagreements, and decisions by hand."""

import pytest

from studies.assessment import adjudication
from studies.errors import AssessmentError
from studies.models import AdjudicationDecision

from .conftest import grade_all


def decisions(study):
    return {
        d.pool_document.document.external_id: (
            d.grade,
            d.method,
            d.judged_by.username if d.judged_by else None,
        )
        for d in AdjudicationDecision.objects.filter(
            pool_document__pool__scenario__study=study
        ).select_related("pool_document__document", "judged_by")
    }


@pytest.fixture
def two_judges(assessed_study, make_assessors):
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    grade_all(
        assessed_study,
        {
            "d1": [2, 2],  # agreed
            "d2": [1, 2],  # one point: ann's turn
            "d3": [3, 2],  # one point: ben's turn
            "d4": [0, 1],  # one point: ann's turn again
            "d5": [0, 3],  # three points: the researcher
            "d6": [1, None],  # ben has not judged yet
        },
        [ann, ben],
    )
    return assessed_study


def test_the_2002_rule_takes_one_point_differences_from_each_judge_in_turn(two_judges, alice):
    result = adjudication.adjudicate(study=two_judges, preset="2002", decided_by=alice)
    assert decisions(two_judges) == {
        "d1": (2, "agreed", "ann"),
        "d2": (1, "in_turn", "ann"),
        "d3": (2, "in_turn", "ben"),
        "d4": (0, "in_turn", "ann"),
    }
    assert [row.pool_document.document.external_id for row in result.to_researcher] == ["d5"]
    assert result.awaiting_judgments == 1


def test_the_2002_rule_rotates_over_four_judges_and_sends_two_points_to_the_researcher(
    assessed_study, make_assessors, alice
):
    judges = make_assessors(assessed_study, "ann", "ben", "cat", "dan", per_document=4)
    grade_all(
        assessed_study,
        {
            "d1": [1, 2, 2, 2],  # ann's turn -> 1
            "d2": [2, 1, 2, 2],  # ben's turn -> 1
            "d3": [0, 0, 2, 0],  # two points -> researcher, the turn does not move
            "d4": [3, 3, 3, 2],  # cat's turn -> 3
            "d5": [1, 1, 1, 0],  # dan's turn -> 0
            "d6": [1, 0, 0, 0],  # back to ann -> 1
        },
        judges,
    )
    result = adjudication.adjudicate(study=assessed_study, preset="2002", decided_by=alice)
    assert decisions(assessed_study) == {
        "d1": (1, "in_turn", "ann"),
        "d2": (1, "in_turn", "ben"),
        "d4": (3, "in_turn", "cat"),
        "d5": (0, "in_turn", "dan"),
        "d6": (1, "in_turn", "ann"),
    }
    assert [row.pool_document.document.external_id for row in result.to_researcher] == ["d3"]


def test_researcher_preset_leaves_every_disagreement_to_the_researcher(two_judges, alice):
    result = adjudication.adjudicate(study=two_judges, preset="researcher", decided_by=alice)
    assert decisions(two_judges) == {"d1": (2, "agreed", "ann")}
    assert sorted(row.pool_document.document.external_id for row in result.to_researcher) == [
        "d2",
        "d3",
        "d4",
        "d5",
    ]


def test_majority_preset_takes_a_strict_majority_then_the_researcher(assessed_study, make_assessors, alice):
    judges = make_assessors(assessed_study, "ann", "ben", "cat", per_document=3)
    grade_all(assessed_study, {"d1": [1, 1, 2], "d2": [0, 3, 3], "d3": [0, 1, 2], "d4": [2, 2, 2]}, judges)
    result = adjudication.adjudicate(study=assessed_study, preset="majority", decided_by=alice)
    assert decisions(assessed_study) == {
        "d1": (1, "majority", None),
        "d2": (3, "majority", None),
        "d4": (2, "agreed", "ann"),
    }
    assert [row.pool_document.document.external_id for row in result.to_researcher] == ["d3"]


def test_majority_of_two_disagreeing_judges_goes_to_the_researcher(two_judges, alice):
    result = adjudication.adjudicate(study=two_judges, preset="majority", decided_by=alice)
    assert len(result.to_researcher) == 4


def test_decisions_by_hand_are_kept_when_a_preset_runs_again(two_judges, alice):
    adjudication.adjudicate(study=two_judges, preset="2002", decided_by=alice)
    d5 = two_judges.scenarios.get(code="S1").assessment_pool.documents.get(document__external_id="d5")
    adjudication.adjudication_decide(pool_document=d5, grade=2, decided_by=alice, note="read it twice")
    result = adjudication.adjudicate(study=two_judges, preset="researcher", decided_by=alice)
    assert decisions(two_judges)["d5"] == (2, "researcher", "alice")
    assert result.kept_by_hand == 1
    assert "d2" not in decisions(two_judges)  # the 2002 preset's own decisions were recomputed


def test_a_decision_outside_the_scale_is_refused(two_judges, alice):
    d5 = two_judges.scenarios.get(code="S1").assessment_pool.documents.get(document__external_id="d5")
    with pytest.raises(AssessmentError, match="scale"):
        adjudication.adjudication_decide(pool_document=d5, grade=7, decided_by=alice)


def test_an_unknown_preset_is_refused(two_judges, alice):
    with pytest.raises(AssessmentError, match="unknown preset"):
        adjudication.adjudicate(study=two_judges, preset="coin", decided_by=alice)
