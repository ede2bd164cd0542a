"""The researcher's enrolment (study page, API, services) takes its rows as public-link arrivals do: a row
freed by a return or a time-out goes to the next enrolled participant, once, recorded as re-issued
(reissue_of) and shown so in the balance table; N enrolled at once take the freed rows first (lowest first),
then fresh rows; rows touching a closed cell are never issued."""

from datetime import timedelta

import pytest
from django.utils import timezone

from studies.design import selectors, services
from studies.design.latin_square import participant_assignment
from studies.models import Participant
from studies.participation.recruitment.panel_status import panel_status_record
from studies.participation.recruitment.panels import recruitment_update
from studies.participation.recruitment.states import participant_state_set
from studies.participation.recruitment.sweep import study_sweep

from .conftest import join

pytestmark = pytest.mark.django_db


def orders(participant):
    return [(a.scenario.code, a.system.code) for a in participant.assignments.order_by("position")]


def free(study, participant, ending):
    if ending == "returned":
        panel_status_record(
            study=study, key=f"n-{participant.pk}", panel_id=participant.panel_id, status="returned"
        )
    else:  # past the study-level limit of 60 minutes: the sweep times them out
        Participant.objects.filter(pk=participant.pk).update(started_at=timezone.now() - timedelta(hours=2))
        assert study_sweep(study=study).timed_out == 1
    participant.refresh_from_db()
    assert participant.state == ending


@pytest.mark.parametrize("ending", ["returned", "timed_out"])
def test_the_next_enrolment_receives_a_freed_row_once(panel_study, ending):
    gone = join(panel_study).participant  # row 2 (rows 0 and 1: the two enrolled participants)
    free(panel_study, gone, ending)
    [first] = services.participants_enrol(study=panel_study, count=1)
    assert (first.plan_row, first.reissue_of_id) == (2, gone.pk)
    assert orders(first) == orders(gone)
    # Intention to treat: the one who left keeps their assignment.
    assert gone.assignments.count() == 4
    [second] = services.participants_enrol(study=panel_study, count=1)
    assert (second.plan_row, second.reissue_of_id) == (3, None)
    # Neither does a public-link arrival get the row again.
    assert join(panel_study).participant.plan_row == 4


def test_the_balance_table_shows_the_row_re_issued(panel_study):
    gone = join(panel_study).participant
    free(panel_study, gone, "returned")
    services.participants_enrol(study=panel_study, count=1)
    table = selectors.study_balance(study=panel_study)
    cells = list(table.by_system.values())
    assert sum(c.reissued for c in cells) == 4  # the re-issued participant's four assignments
    assert sum(c.freed for c in cells) == 4
    assert sum(c.planned for c in cells) == 12  # rows 0-2 as first issued


def test_n_enrolled_at_once_fill_the_freed_rows_first_then_fresh_ones(panel_study):
    enrolled = panel_study.participants.get(enrolment_index=1)  # row 1
    arrivals = [join(panel_study).participant for _ in range(3)]  # rows 2, 3, 4
    participant_state_set(participant=arrivals[1], state="returned", reason="panel")
    participant_state_set(participant=enrolled, state="screened_out", reason="check")
    batch = services.participants_enrol(study=panel_study, count=4)
    assert [(p.plan_row, p.reissue_of_id) for p in batch] == [
        (1, enrolled.pk),
        (3, arrivals[1].pk),
        (5, None),
        (6, None),
    ]
    assert [p.enrolment_index for p in batch] == [5, 6, 7, 8]
    assert [orders(p) for p in batch[:2]] == [orders(enrolled), orders(arrivals[1])]
    # Every freed row re-issued once: the next choice is fresh, by enrolment or by arrival.
    assert services.participants_enrol(study=panel_study, count=1)[0].plan_row == 7
    assert join(panel_study).participant.plan_row == 8


def test_a_freed_row_touching_a_closed_cell_is_not_issued(panel_study):
    gone = join(panel_study).participant  # row 2
    free(panel_study, gone, "returned")
    scenario, system = orders(gone)[0]
    recruitment_update(study=panel_study, closed_cells=[[scenario, system]])
    [enrolled] = services.participants_enrol(study=panel_study, count=1)
    assert enrolled.plan_row != 2 and enrolled.reissue_of_id is None
    assert (scenario, system) not in orders(enrolled)
    # Reopened, the freed row is the next one issued.
    recruitment_update(study=panel_study, closed_cells=[])
    assert services.participants_enrol(study=panel_study, count=1)[0].plan_row == 2


def test_enrolment_is_refused_when_every_row_touches_a_closed_cell(panel_study):
    scenarios = list(panel_study.scenarios.order_by("id"))
    systems = list(panel_study.systems.order_by("id"))
    # Every scenario closed on the first system: every row uses it somewhere.
    first = systems[0].code
    recruitment_update(study=panel_study, closed_cells=[[s.code, first] for s in scenarios])
    assert all(
        any(y.code == first for _, y in participant_assignment(scenarios, systems, row)) for row in range(8)
    )
    with pytest.raises(services.DesignError, match="closed cell"):
        services.participants_enrol(study=panel_study, count=1)
    assert panel_study.participants.count() == 2


def test_the_study_page_s_enrol_button_re_issues_and_says_so(client, panel_study):
    gone = join(panel_study).participant
    free(panel_study, gone, "returned")
    client.force_login(panel_study.owner)
    response = client.post(
        f"/studies/{panel_study.slug}/participants/enrol/", {"enrol-count": "2"}, follow=True
    )
    assert "Enrolled 2 participants with balanced orders (1 on rows freed by attrition, re-issued)." in (
        response.content.decode()
    )
    rows = panel_study.participants.order_by("-enrolment_index").values_list("plan_row", "reissue_of")[:2]
    assert sorted(rows) == [(2, gone.pk), (3, None)]
