"""The attrition-aware assignment works the same for every design: a row freed by a return or a screen-out
goes to the next participant (public link or researcher's enrolment), once, with the same order; a closed cell
is never issued (between-subjects, it closes its system's arm). Within-subject with 3 scenarios on 2 systems,
between-subjects, and a study with a practice task."""

import secrets
from collections import Counter

import pytest

from studies.design import services
from studies.models import Recruitment
from studies.participation.recruitment.join import participant_join
from studies.participation.recruitment.panels import PanelIds, recruitment_update
from studies.participation.recruitment.states import participant_state_set

pytestmark = pytest.mark.django_db

DESIGNS = {
    "uneven_within": ("within", ["S1", "S2", "S3"], []),
    "between": ("between", ["S1", "S2", "S3", "S4"], []),
    "with_practice": ("within", ["S1", "S2", "S3", "S4"], ["WARM"]),
}


@pytest.fixture(params=list(DESIGNS))
def linked(request, study):
    design, scored, practice = DESIGNS[request.param]
    for code in practice:
        services.scenario_add(study=study, code=code, title=code, text="t", topic_id=code, practice=True)
    for code in scored:
        services.scenario_add(study=study, code=code, title=code, text="t", topic_id=code)
    services.system_add(study=study, code="A", name="A")
    services.system_add(study=study, code="B", name="B")
    services.study_design_set(study=study, design=design)
    Recruitment.objects.create(study=study, panel="prolific", time_limit_minutes=60)
    study.refresh_from_db()
    return study


def join(study):
    return participant_join(study=study, ids=PanelIds(secrets.token_hex(12), "S", "X")).participant


def order(participant):
    return [(a.scenario.code, a.system.code) for a in participant.assignments.order_by("position")]


def test_a_freed_row_goes_to_the_next_arrival_and_then_to_nobody_else(linked):
    arrivals = [join(linked) for _ in range(3)]
    assert [p.plan_row for p in arrivals] == [0, 1, 2]
    gone = arrivals[1]
    participant_state_set(participant=gone, state="returned", reason="panel")
    again = join(linked)
    assert (again.plan_row, again.reissue_of_id) == (1, gone.pk)
    assert order(again) == order(gone)
    assert join(linked).plan_row == 3  # the freed row went once


def test_the_researcher_s_enrolment_re_issues_a_screened_out_row(linked):
    arrivals = [join(linked) for _ in range(2)]
    participant_state_set(participant=arrivals[0], state="screened_out", reason="check")
    first, second = services.participants_enrol(study=linked, count=2)
    assert (first.plan_row, first.reissue_of_id) == (0, arrivals[0].pk)
    assert order(first) == order(arrivals[0])
    assert (second.plan_row, second.reissue_of_id) == (2, None)


def test_a_closed_cell_is_never_issued(linked):
    scenario = linked.scenarios.filter(practice=False).order_by("id").first()
    recruitment_update(study=linked, closed_cells=[[scenario.code, "A"]])
    arrivals = [join(linked) for _ in range(4)]
    for person in arrivals:
        assert (scenario.code, "A") not in order(person)
    if linked.design == "between":  # the arm of system A is closed: every arrival is in B's
        assert Counter(u for person in arrivals for _, u in order(person)) == {"B": 16}
