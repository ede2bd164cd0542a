"""Arrivals at the same moment: each freed row goes to exactly one of them, each fresh row to one, and the
same panel id twice at once gets one participant; a researcher's enrolment among them shares the rows as one
more arrival (the same lock, the same choice). PostgreSQL only (the study row's lock is what orders them;
SQLite serialises writers on its own)."""

import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from studies.design import services
from studies.models import AuditEntry, Participant
from studies.participation.recruitment.join import Joined, participant_join
from studies.participation.recruitment.panels import PanelIds
from studies.participation.recruitment.states import participant_state_set

from .conftest import join, prolific_pid

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="needs connections writing at once: PostgreSQL (CI's second pass)",
    ),
]


def _at_once(study, pids, enrol=0):
    """The arrivals of `pids`, and (with `enrol`) one researcher's enrolment of that many, all at once."""
    barrier, joined, errors = threading.Barrier(len(pids) + bool(enrol)), [], []

    def arrive(pid):
        try:
            barrier.wait(timeout=10)
            if pid is None:
                enrolled = services.participants_enrol(study=study, count=enrol)
                joined.extend(Joined(p, True, p.reissue_of_id) for p in enrolled)
            else:
                joined.append(participant_join(study=study, ids=PanelIds(pid)))
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=arrive, args=(pid,)) for pid in [*pids, *([None] if enrol else [])]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    return joined


def test_eight_arrivals_at_once_share_two_freed_rows_and_six_fresh_ones(panel_study):
    left = [join(panel_study).participant for _ in range(2)]  # rows 2 and 3
    for participant in left:
        participant_state_set(participant=participant, state="returned", reason="panel")
    joined = _at_once(panel_study, [prolific_pid() for _ in range(8)])
    rows = Counter(j.participant.plan_row for j in joined)
    assert rows == Counter([2, 3, 4, 5, 6, 7, 8, 9])
    assert sorted(j.reissued_from for j in joined if j.reissued_from) == sorted(p.pk for p in left)


def test_an_enrolment_among_arrivals_at_once_shares_the_freed_and_fresh_rows(panel_study):
    left = [join(panel_study).participant for _ in range(3)]  # rows 2, 3 and 4
    for participant in left:
        participant_state_set(participant=participant, state="returned", reason="panel")
    joined = _at_once(panel_study, [prolific_pid() for _ in range(4)], enrol=4)
    rows = Counter(j.participant.plan_row for j in joined)
    assert rows == Counter([2, 3, 4, 5, 6, 7, 8, 9])
    assert sorted(j.reissued_from for j in joined if j.reissued_from) == sorted(p.pk for p in left)


def test_the_same_panel_id_twice_at_once_is_one_participant(panel_study):
    pid = prolific_pid()
    joined = _at_once(panel_study, [pid] * 4)
    assert len({j.participant.pk for j in joined}) == 1
    assert Participant.objects.filter(study=panel_study, panel_id=pid).count() == 1


def test_arrivals_at_once_time_out_the_overdue_once_and_share_their_rows(panel_study):
    overdue = [join(panel_study).participant for _ in range(2)]  # rows 2 and 3, their hour long past
    Participant.objects.filter(pk__in=[p.pk for p in overdue]).update(
        started_at=timezone.now() - timedelta(hours=2)
    )
    joined = _at_once(panel_study, [prolific_pid() for _ in range(6)])  # each arrival sweeps first
    assert Counter(j.participant.plan_row for j in joined) == Counter([2, 3, 4, 5, 6, 7])
    assert sorted(j.reissued_from for j in joined if j.reissued_from) == sorted(p.pk for p in overdue)
    for participant in overdue:  # timed out once, however many arrivals saw them overdue
        moves = AuditEntry.objects.filter(participant_code=participant.code, detail__to="timed_out")
        assert moves.count() == 1


def test_one_prolific_id_in_two_cases_at_once_is_one_participant(panel_study):
    pid = prolific_pid()
    joined = _at_once(panel_study, [pid, pid.upper(), pid, pid.upper()])
    assert len({j.participant.pk for j in joined}) == 1
    assert Participant.objects.filter(study=panel_study, panel_id__iexact=pid).count() == 1
