"""The issue's simulation with the defaults (no beat, eager Celery, nothing calls the sweep): 60 arrivals
through the public link, 30% of them timing out (never going past the link, or abandoning mid-scenario, their
hour passing) or returning on the panel (some mid-scenario). The arrivals alone free the overdue rows: every
freed row is re-issued exactly once, every cell of completed sessions is within one of its share, the left's
sessions are ended, and the reconciliation lists no disagreement once the panel reports its side."""

import random
from collections import Counter
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from studies.models import Participant, Recruitment, SchedulerHeartbeat, SearchSession
from studies.participation.recruitment.panel_reconciliation import reconciliation, reconciliation_explained
from studies.participation.recruitment.panel_status import panel_status_record
from studies.participation.recruitment.states import FREEING
from studies.participation.way.form_steps import session_start
from studies.participation.way.steps import participant_withdraw, query_log
from studies.simulation.participants import SimulatedParticipant

from .conftest import assert_balanced_with_rows_reissued_once, cid, ready

pytestmark = pytest.mark.django_db

ARRIVALS, DROPOUTS, LAST_DROPOUT = 60, 18, 50
LIMIT_IN_ARRIVALS = 6  # an arrival every 10 minutes, the study's 60-minute limit


def age(participant):
    """Their hour is up: the study clock (and any session) started two hours ago."""
    past = timezone.now() - timedelta(hours=2)
    Participant.objects.filter(pk=participant.pk).update(started_at=past)
    SearchSession.objects.filter(assignment__participant=participant).update(started_at=past)


def open_a_session(participant):
    ready(participant)
    first = participant.assignments.order_by("position").first()
    session = session_start(participant=participant, assignment=first, client_event_id=cid())
    query_log(participant=participant, session=session, text="wing", client_event_id=cid())


def test_sixty_arrivals_with_thirty_percent_attrition_and_no_beat(client, panel_study, settings):
    # The defaults: no scheduler has swept (no heartbeat), and tasks run in process (tests/conftest.py makes
    # Celery eager for every test without needs_worker, CI's broker pass included).
    assert not SchedulerHeartbeat.objects.exists()
    cache.clear()
    rng = random.Random(26)
    for enrolled in panel_study.participants.all():  # never came: their rows are free from the start
        participant_withdraw(participant=enrolled, by="researcher")
    token = Recruitment.objects.get(study=panel_study).public_token
    reference = {
        s.topic_id: {str(d): (3 if d <= 5 else 1 if d <= 15 else 0) for d in range(1, 41)}
        for s in panel_study.scenarios.all()
    }
    kinds = ["never", "abandon", "return", "return_mid"]
    dropping = dict(
        zip(
            sorted(rng.sample(range(LAST_DROPOUT), DROPOUTS)),
            (rng.choice(kinds) for _ in range(DROPOUTS)),
            strict=True,
        )
    )
    due = []  # (arrival at which their hour is up, participant)
    for arrival in range(ARRIVALS):
        for when, participant in [d for d in due if d[0] <= arrival]:
            age(participant)  # time passes; no sweep is called: the next arrival must notice
            due.remove((when, participant))
        response = client.get(f"/join/{token}/", {"PROLIFIC_PID": f"{arrival:024x}"})
        assert response.status_code == 302
        participant = Participant.objects.get(access_token=response.url.split("/")[2])
        kind = dropping.get(arrival)
        if kind is None:
            SimulatedParticipant(participant, reference, random.Random(arrival)).run()
        elif kind.startswith("return"):
            open_a_session(participant) if kind == "return_mid" else ready(participant)
            panel_status_record(
                study=panel_study, key=f"r{arrival}", panel_id=participant.panel_id, status="returned"
            )
        else:
            if kind == "abandon":
                open_a_session(participant)
            due.append((arrival + LIMIT_IN_ARRIVALS, participant))
    assert not due

    everyone = assert_balanced_with_rows_reissued_once(panel_study, arrivals=ARRIVALS, dropouts=DROPOUTS)
    # No one who left keeps an open session.
    assert not SearchSession.objects.filter(
        assignment__participant__state__in=FREEING, ended_at__isnull=True
    ).exists()
    # The panel reports its side: the timed out returned or timed out there too; nothing is unexplained.
    theirs = Counter()
    for participant in everyone:
        if participant.state == "timed_out":
            theirs[status := rng.choice(["returned", "timed_out"])] += 1
            panel_status_record(
                study=panel_study, key=f"t{participant.pk}", panel_id=participant.panel_id, status=status
            )
    assert reconciliation(study=panel_study) == []
    explained = reconciliation_explained(study=panel_study)
    assert [row.panel for row in explained] == ["returned"] * theirs["returned"] and theirs["timed_out"]
