"""Recruitment fixtures: the participant's way's running study (tests/participation/conftest.py), a study with
a public Prolific link and a study-level time limit, and helpers that play a participant's way."""

import secrets

import pytest

from studies.models import Recruitment
from studies.participation import recruitment
from studies.participation import steps as participation
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
    Recruitment.objects.create(
        study=running_study, public_link_open=True, panel="prolific", time_limit_minutes=60
    )
    running_study.refresh_from_db()
    return running_study


def join(study, pid=None):
    return recruitment.participant_join(
        study=study, ids=recruitment.PanelIds(pid or prolific_pid(), "S", "X")
    )


def finish(person):
    """Work every scenario to the end and answer its questions: the person completes."""
    ready(person)
    for assignment in person.assignments.order_by("position"):
        session = participation.session_start(
            participant=person, assignment=assignment, client_event_id=cid()
        )
        participation.session_end(
            participant=person, session=session, reason="satisfied", client_event_id=cid()
        )
        participation.post_task_save(
            participant=person, session=session, client_event_id=cid(), answers={"search_went_well": 4}
        )
    return person
