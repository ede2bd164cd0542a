"""Recruitment fixtures: the participant's way's running study (tests/participation/conftest.py), a study with
a public Prolific link and a study-level time limit, and helpers that play a participant's way."""

import secrets
from collections import Counter

import pytest

from studies.design.rows import plan_row_of
from studies.models import Recruitment
from studies.participation.recruitment.join import participant_join
from studies.participation.recruitment.panels import PanelIds
from studies.participation.recruitment.states import FREEING
from studies.participation.way.form_steps import post_task_save, session_start
from studies.participation.way.steps import session_end
from tests.participation.conftest import (  # noqa: F401  (fixtures)
    cid,
    index_root,
    other_participant,
    participant,
    prebuilt_indexes,
    ready,
    running_study,
    small_collection,
    start,
)


def prolific_pid() -> str:
    return secrets.token_hex(12)


@pytest.fixture
def panel_study(running_study):  # noqa: F811  (the imported fixture)
    """Alice's running study with its public Prolific link open and a 60-minute study-level limit."""
    Recruitment.objects.create(study=running_study, panel="prolific", time_limit_minutes=60)
    running_study.refresh_from_db()
    return running_study


def join(study, pid=None):
    return participant_join(study=study, ids=PanelIds(pid or prolific_pid(), "S", "X"))


def finish(person):
    """Work every scenario to the end and answer its questions: the person completes."""
    ready(person)
    for assignment in person.assignments.order_by("position"):
        session = session_start(participant=person, assignment=assignment, client_event_id=cid())
        session_end(participant=person, session=session, reason="satisfied", client_event_id=cid())
        post_task_save(
            participant=person, session=session, client_event_id=cid(), answers={"search_went_well": 4}
        )
    return person


def assert_balanced_with_rows_reissued_once(study, *, arrivals: int, dropouts: int) -> list:
    """What a study that balances itself shows after `arrivals` with `dropouts` who left (two enrolled
    participants withdrawn at the start): every freed row re-issued exactly once, the completed rows exactly
    the plan's first rows, and every completed cell (scenario by system, scenario by position) within one of
    its share. Returns every participant."""
    everyone = list(study.participants.all())
    states = Counter(p.state for p in everyone)
    assert states["completed"] == arrivals - dropouts
    assert states["timed_out"] + states["returned"] == dropouts and states["withdrawn"] == 2
    # Every freed row re-issued exactly once (the database allows at most once; here, at least once too).
    freed = {p.pk for p in everyone if p.state in FREEING}
    reissued = Counter(p.reissue_of_id for p in everyone if p.reissue_of_id is not None)
    assert set(reissued) == freed and set(reissued.values()) == {1}
    # The completed rows are exactly the plan's first rows, each once: the balance of a plan prefix.
    completed = [p for p in everyone if p.state == "completed"]
    assert sorted(plan_row_of(p) for p in completed) == list(range(len(completed)))
    by_system, by_position = Counter(), Counter()
    for person in completed:
        for assignment in person.assignments.filter(session__ended_at__isnull=False):
            by_system[assignment.scenario_id, assignment.system_id] += 1
            by_position[assignment.scenario_id, assignment.position] += 1
    scenarios, systems = study.scenarios.count(), study.systems.count()
    assert len(by_system) == scenarios * systems and len(by_position) == scenarios * scenarios
    assert all(abs(n - len(completed) / systems) <= 1 for n in by_system.values())
    assert all(abs(n - len(completed) / scenarios) <= 1 for n in by_position.values())
    return everyone


def public_link(study, **query) -> tuple[str, dict]:
    """The study's public link and the query a panel appends to it."""
    from studies.models import Recruitment

    token = Recruitment.objects.get(study=study).public_token
    return f"/join/{token}/", query
