"""A machine assessor's grades enter a reference version only by an explicit rule: "fill
unjudged documents" and "break ties", recorded in the version's provenance; with no rule chosen its grades
never enter, whatever else happens. A decided document never takes a machine grade."""

import pytest

from studies.assessment import adjudication, machine, references
from studies.errors import AssessmentError

from .conftest import grade_all
from .machine_factories import machine_assessor_make, machine_grades_give, machine_words

# ann, ben: d1 agreed (2), d6 one point apart (decided in turn), d2 and d3 two points apart (left to the
# researcher by the 2002 preset: ties), d4 judged by ann only, d5 by nobody.
PEOPLE = {"d1": [2, 2], "d2": [1, 3], "d3": [0, 2], "d4": [1, None], "d5": [None, None], "d6": [1, 2]}
# The machine: d2 = 2 is equally near 1 and 3 (the lower, 1, is taken); d3 = 2 is ben's grade.
MACHINE = {"d1": 0, "d2": 2, "d3": 2, "d4": 3, "d5": 1, "d6": 0}


@pytest.fixture
def judged(assessed_study, make_assessors, alice):
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    grade_all(assessed_study, PEOPLE, [ann, ben])
    adjudication.adjudicate(study=assessed_study, preset="2002", decided_by=alice)
    llm = machine_assessor_make(assessed_study)
    machine_grades_give(llm, MACHINE)
    return assessed_study, llm


def grades(version):
    return dict(version.judgments.values_list("document__external_id", "grade"))


def by_machine(version, llm):
    return dict(version.judgments.filter(judged_by=llm.user).values_list("document__external_id", "source"))


def test_with_no_rule_the_machines_grades_never_enter(judged, alice):
    study, llm = judged
    with pytest.raises(AssessmentError, match="2 judged documents have no decision"):
        references.reference_version_publish(study=study, created_by=alice, machine=llm)
    version = references.reference_version_publish(
        study=study, created_by=alice, machine=llm, rules=[], allow_pending=True
    )
    assert set(grades(version)) == {"d1", "d6"} and grades(version)["d1"] == 2
    assert by_machine(version, llm) == {} and version.facts == {}


def test_breaking_ties_takes_the_machines_grade_or_the_nearest_peoples_grade(judged, alice):
    study, llm = judged
    plan = references.reference_version_publish_plan(study=study, machine=llm, rules=["break_ties"])
    assert (plan.ties_broken, plan.filled, plan.pending) == (2, 0, 0)  # no longer waiting: no allow_pending
    version = references.reference_version_publish(
        study=study, created_by=alice, machine=llm, rules=["break_ties"]
    )
    assert grades(version)["d2"] == 1 and grades(version)["d3"] == 2
    assert "d4" not in grades(version) and "d5" not in grades(version)
    assert grades(version)["d1"] == 2  # decided: never the machine's 0
    assert by_machine(version, llm) == {"d2": "machine tie-break v1", "d3": "machine tie-break v1"}
    assert version.facts == {
        "machine_rules": ["break_ties"],
        "machine_assessor": machine.machine_assessor_provenance(llm),
        "documents_filled": 0,
        "ties_broken": 2,
    }


def test_filling_grades_only_the_documents_people_have_not_completely_judged(judged, alice):
    study, llm = judged
    version = references.reference_version_publish(
        study=study, created_by=alice, machine=llm, rules=["fill_unjudged"], allow_pending=True
    )
    assert {doc: grades(version)[doc] for doc in ("d4", "d5")} == {"d4": 3, "d5": 1}
    assert "d2" not in grades(version) and "d3" not in grades(version)  # ties are not "unjudged"
    assert by_machine(version, llm) == {"d4": "machine fill v1", "d5": "machine fill v1"}
    assert version.facts["documents_filled"] == 2 and version.facts["ties_broken"] == 0
    assert version.judgments.get(document__external_id="d4").judge_name == "llm-judge"


def test_both_rules_together_and_the_note_says_so(judged, alice):
    study, llm = judged
    version = references.reference_version_publish(
        study=study, created_by=alice, machine=llm, rules=["fill_unjudged", "break_ties"]
    )
    assert set(by_machine(version, llm)) == {"d2", "d3", "d4", "d5"}
    assert version.facts["machine_rules"] == ["fill_unjudged", "break_ties"]
    assert "2 filled and 2 ties broken by a machine assessor" in version.note
    assert version.provenance_text == (f"{machine_words(llm)}: 2 documents filled; 2 ties broken")


def test_a_tie_decided_by_hand_is_never_broken_by_the_machine(judged, alice):
    study, llm = judged
    d2 = study.scenarios.get(code="S1").assessment_pool.documents.get(document__external_id="d2")
    adjudication.adjudication_decide(pool_document=d2, grade=3, decided_by=alice)
    version = references.reference_version_publish(
        study=study, created_by=alice, machine=llm, rules=["break_ties"]
    )
    assert grades(version)["d2"] == 3 and version.facts["ties_broken"] == 1


def test_filling_never_overrides_a_grade_the_merged_version_holds(judged, alice):
    study, llm = judged
    references.reference_version_import_qrels(
        study=study, lines=["1 0 d5 2"], path="v1.qrels", created_by=alice
    )
    version = references.reference_version_publish(
        study=study, created_by=alice, machine=llm, rules=["fill_unjudged"], allow_pending=True
    )
    assert grades(version)["d5"] == 2 and version.facts["documents_filled"] == 1


def test_a_merge_says_it_keeps_machine_grades_from_its_base(judged, alice):
    study, llm = judged
    references.reference_version_publish(
        study=study, created_by=alice, machine=llm, rules=["fill_unjudged"], allow_pending=True
    )
    second = references.reference_version_publish(study=study, created_by=alice, allow_pending=True)
    assert second.facts == {"machine_grades_kept": 2, "machine_grades_kept_from": 1}
    assert second.machine_grades


@pytest.mark.parametrize(
    ("rules", "who", "message"),
    [
        (["fill_unjudged"], None, "needs the machine assessor"),
        (["guess"], "machine", "unknown machine rule 'guess'"),
        (["break_ties"], "person", "ann is not a machine assessor of this study"),
    ],
)
def test_a_rule_without_a_machine_of_the_study_is_refused_and_nothing_is_published(
    judged, alice, rules, who, message
):
    study, llm = judged
    chosen = {"machine": llm, "person": study.assessors.get(user__username="ann"), None: None}[who]
    with pytest.raises(AssessmentError, match=message):
        references.reference_version_publish(
            study=study, created_by=alice, machine=chosen, rules=rules, allow_pending=True
        )
    assert not study.reference_versions.exists()


def test_a_machine_of_another_study_is_refused(judged, alice, designed_study):
    study, _llm = judged
    from studies.design import services

    other = services.study_create(owner=alice, name="Other", consent_text="c", status="open")
    stranger = machine_assessor_make(other, "llm-other")
    with pytest.raises(AssessmentError, match="llm-other is not a machine assessor of this study"):
        references.reference_version_publish_plan(study=study, machine=stranger, rules=["break_ties"])


@pytest.mark.parametrize(
    ("people", "grade", "taken"), [([1, 3], 2, 1), ([0, 2], 2, 2), ([0, 3], 1, 0), ([0, 3], 2, 3)]
)
def test_tie_broken(people, grade, taken):
    assert machine.tie_broken(people, grade) == taken
