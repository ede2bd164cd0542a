"""The issue's simulation: 60 arrivals through the public link, 30% of them dropping out at random points
(never going past the link, abandoning mid-scenario, returning on the panel), played by the simulated
participants; the time-outs come from the study-level limit through the sweep. Afterwards every cell of
completed sessions is within one of its planned share, and every freed row was re-issued exactly once."""

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from studies.models import Participant, Recruitment, SearchSession
from studies.participation.recruitment.panel_status import panel_status_record
from studies.participation.recruitment.sweep import study_sweep
from studies.participation.way.form_steps import session_start
from studies.participation.way.steps import participant_withdraw, query_log
from studies.simulation.participants import SimulatedParticipant

from .conftest import assert_balanced_with_rows_reissued_once, cid, prolific_pid, ready

pytestmark = pytest.mark.django_db

ARRIVALS, DROPOUTS, LAST_DROPOUT, LIMIT_IN_ARRIVALS = (
    60,
    18,
    45,
    6,
)  # an arrival every 10 minutes, 60-minute limit


def age(participant):
    """Their hour is up: the study clock (and any session) started two hours ago."""
    past = timezone.now() - timedelta(hours=2)
    Participant.objects.filter(pk=participant.pk).update(started_at=past)
    SearchSession.objects.filter(assignment__participant=participant).update(started_at=past)


def test_sixty_arrivals_with_thirty_percent_attrition(client, panel_study):
    rng = random.Random(17)
    # The two researcher-enrolled participants never came: withdrawn, their rows are free from the start.
    for enrolled in panel_study.participants.all():
        participant_withdraw(participant=enrolled)
    token = Recruitment.objects.get(study=panel_study).public_token
    reference = {
        s.topic_id: {str(d): (3 if d <= 5 else 1 if d <= 15 else 0) for d in range(1, 41)}
        for s in panel_study.scenarios.all()
    }
    dropping = dict(
        zip(
            sorted(rng.sample(range(LAST_DROPOUT), DROPOUTS)),
            (rng.choice(["never", "abandon", "return"]) for _ in range(DROPOUTS)),
            strict=True,
        )
    )
    due = []  # (arrival at which their hour is up, participant)
    for arrival in range(ARRIVALS):
        for when, participant in [d for d in due if d[0] <= arrival]:
            age(participant)
            due.remove((when, participant))
        study_sweep(study=panel_study)
        response = client.get(f"/join/{token}/", {"PROLIFIC_PID": prolific_pid()})
        assert response.status_code == 302
        participant = Participant.objects.get(access_token=response.url.split("/")[2])
        kind = dropping.get(arrival)
        if kind is None:
            SimulatedParticipant(participant, reference, random.Random(arrival)).run()
        elif kind == "return":
            ready(participant)
            panel_status_record(
                study=panel_study, key=f"n{arrival}", panel_id=participant.panel_id, status="returned"
            )
        else:
            if kind == "abandon":
                ready(participant)
                first = participant.assignments.order_by("position").first()
                session = session_start(participant=participant, assignment=first, client_event_id=cid())
                query_log(participant=participant, session=session, text="wing", client_event_id=cid())
            due.append((arrival + LIMIT_IN_ARRIVALS, participant))
    assert not due
    study_sweep(study=panel_study)

    assert_balanced_with_rows_reissued_once(panel_study, arrivals=ARRIVALS, dropouts=DROPOUTS)
