"""A timed session whose participant closed the tab is ended by the server (a Celery beat task, and the same
sweep on each load of the study page), not only when they come back; a participant past the study-level limit
is timed out and their row freed. The sweep is idempotent."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from sessionlab.celery import app
from studies.design.rows import row_counts
from studies.models import Event, Participant, SearchSession
from studies.participation.recruitment.sweep import scheduler_heartbeat
from studies.tasks import overdue_sweep_task

from .conftest import start

pytestmark = pytest.mark.django_db


@pytest.fixture
def abandoned(running_study):
    """A session of a five-minute scenario, started ten minutes ago by a participant who closed the tab."""
    running_study.time_limit_minutes = 5
    running_study.save(update_fields=["time_limit_minutes"])
    participant = running_study.participants.order_by("enrolment_index")[0]
    session = start(participant)
    SearchSession.objects.filter(pk=session.pk).update(started_at=timezone.now() - timedelta(minutes=10))
    return session


def test_the_beat_schedule_runs_the_sweep_task_by_its_name():
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-overdue-participants"]
    assert entry["task"] == overdue_sweep_task.name == "studies.tasks.overdue_sweep_task"
    assert entry["task"] in app.tasks


def test_the_task_ends_an_abandoned_session_as_timed_out(abandoned):
    totals = overdue_sweep_task.delay().get()
    abandoned.refresh_from_db()
    assert abandoned.end_reason == "timed_out"
    assert abandoned.ended_at == abandoned.started_at + timedelta(minutes=5)
    assert (
        Event.objects.filter(session=abandoned, type="session_end", payload__data__by="server").count() == 1
    )
    assert totals["sessions_ended"] == 1


def test_a_second_sweep_changes_nothing(abandoned):
    overdue_sweep_task.delay().get()
    again = overdue_sweep_task.delay().get()
    assert again["sessions_ended"] == again["timed_out"] == again["states_changed"] == 0
    assert Event.objects.filter(session=abandoned, type="session_end").count() == 1


def test_the_ended_session_is_announced_for_scoring(abandoned, monkeypatch):
    from studies.signals import sessions_finished

    heard = []

    def listener(sender, study_id, session_ids, **kwargs):
        heard.append(session_ids)

    sessions_finished.connect(listener)
    try:
        overdue_sweep_task.delay().get()
    finally:
        sessions_finished.disconnect(listener)
    assert [abandoned.pk] in heard


def test_in_eager_mode_the_study_page_runs_the_same_sweep(client, alice, abandoned, settings):
    # Eager mode has no beat: the page is where the sweep runs (set here too for CI's pass with a worker).
    settings.CELERY_TASK_ALWAYS_EAGER = True
    client.force_login(alice)
    page = client.get(f"/studies/{abandoned.assignment.participant.study.slug}/")
    assert page.status_code == 200
    abandoned.refresh_from_db()
    assert abandoned.end_reason == "timed_out"


def test_while_a_scheduler_sweeps_the_study_page_leaves_the_sweep_to_it(client, alice, abandoned, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    scheduler_heartbeat()  # the beat's task ran a moment ago
    client.force_login(alice)
    assert client.get(f"/studies/{abandoned.assignment.participant.study.slug}/").status_code == 200
    abandoned.refresh_from_db()
    assert abandoned.ended_at is None


def test_a_participant_past_the_study_limit_is_timed_out_and_their_row_freed(panel_study):
    participant = panel_study.participants.order_by("enrolment_index")[0]
    start(participant)
    Participant.objects.filter(pk=participant.pk).update(started_at=timezone.now() - timedelta(hours=2))
    SearchSession.objects.filter(assignment__participant=participant).update(
        started_at=timezone.now() - timedelta(minutes=90)
    )
    totals = overdue_sweep_task.delay(panel_study.pk).get()
    participant.refresh_from_db()
    assert participant.state == "timed_out" and totals["timed_out"] == 1
    assert SearchSession.objects.get(assignment__participant=participant).end_reason == "timed_out"
    counts = row_counts(study=panel_study)
    assert counts.open_freed == [(0, participant.pk)]


def test_a_participant_within_the_limit_is_left_alone(panel_study):
    participant = panel_study.participants.order_by("enrolment_index")[0]
    start(participant)
    Participant.objects.filter(pk=participant.pk).update(started_at=timezone.now() - timedelta(minutes=59))
    overdue_sweep_task.delay(panel_study.pk).get()
    participant.refresh_from_db()
    assert participant.state == "active"


def test_a_server_without_a_beat_sweeps_by_command(abandoned):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("sweep_overdue", abandoned.assignment.participant.study.slug, stdout=out)
    assert "1 session ended" in out.getvalue()
    abandoned.refresh_from_db()
    assert abandoned.end_reason == "timed_out"


def test_with_a_broker_but_no_beat_running_the_page_sweeps(client, alice, abandoned, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker is set, but no heartbeat: no beat runs the task
    client.force_login(alice)
    assert client.get(f"/studies/{abandoned.assignment.participant.study.slug}/").status_code == 200
    abandoned.refresh_from_db()
    assert abandoned.end_reason == "timed_out"
