"""With the defaults (no beat, eager Celery) the sweep runs where it is needed: every arrival through the
public link times out the overdue before its row is chosen, so a freed row goes to the next arrival (once);
participants' pages run the whole sweep at most once per OVERDUE_SWEEP_SECONDS per study; the recruitment page
says whether a scheduler sweeps, from the heartbeat the sweep task writes."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from studies.design import lifecycle
from studies.models import Participant, Recruitment, SchedulerHeartbeat
from studies.participation.recruitment.sweep import (
    overdue_time_out,
    scheduler_heartbeat,
    scheduler_last_run,
    study_sweep_throttled,
)
from studies.tasks import overdue_sweep_task

from .conftest import finish, prolific_pid, ready

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()  # the throttle's claims of another test
    yield
    cache.clear()


def arrive(client, study):
    token = Recruitment.objects.get(study=study).public_token
    response = client.get(f"/join/{token}/", {"PROLIFIC_PID": prolific_pid()})
    assert response.status_code == 302
    return Participant.objects.get(access_token=response.url.split("/")[2])


def age(participant, minutes=61):
    Participant.objects.filter(pk=participant.pk).update(
        started_at=timezone.now() - timedelta(minutes=minutes)
    )


def test_an_arrival_takes_the_row_of_one_past_the_limit_without_a_sweep(client, panel_study):
    stale = arrive(client, panel_study)
    ready(stale)
    age(stale)
    taker = arrive(client, panel_study)
    stale.refresh_from_db()
    assert stale.state == "timed_out"
    assert (taker.plan_row, taker.reissue_of_id) == (stale.plan_row, stale.pk)
    assert arrive(client, panel_study).plan_row == taker.plan_row + 1  # re-issued once, then a fresh row


def test_an_arrival_still_within_the_limit_keeps_their_row(client, panel_study):
    live = arrive(client, panel_study)
    age(live, minutes=59)
    assert arrive(client, panel_study).plan_row == live.plan_row + 1
    assert Participant.objects.get(pk=live.pk).state == "started"


def test_a_refused_arrival_still_times_out_the_overdue(client, panel_study):
    stale = arrive(client, panel_study)
    age(stale)
    lifecycle.study_status_change(study=panel_study, status=lifecycle.PAUSED, by=None)
    token = Recruitment.objects.get(study=panel_study).public_token
    assert client.get(f"/join/{token}/", {"PROLIFIC_PID": prolific_pid()}).status_code == 409
    assert Participant.objects.get(pk=stale.pk).state == "timed_out"


def test_a_participant_s_page_runs_the_sweep_at_most_once_per_interval(client, panel_study, settings):
    settings.OVERDUE_SWEEP_SECONDS = 60
    first, second, other = (arrive(client, panel_study) for _ in range(3))
    cache.clear()  # the arrivals claimed the interval; a new one begins
    age(first)
    client.get(f"/p/{other.access_token}/")
    assert Participant.objects.get(pk=first.pk).state == "timed_out"
    age(second)
    client.get(f"/p/{other.access_token}/")  # within the interval: the sweep is not run again
    assert Participant.objects.get(pk=second.pk).state == "started"
    cache.clear()  # the interval is over
    client.get(f"/p/{other.access_token}/")
    assert Participant.objects.get(pk=second.pk).state == "timed_out"


def test_the_throttle_claims_one_sweep_per_study(panel_study):
    assert study_sweep_throttled(study=panel_study) is not None
    assert study_sweep_throttled(study=panel_study) is None


def test_the_arrivals_sweep_is_bounded(client, panel_study):
    stale = [arrive(client, panel_study) for _ in range(3)]
    for participant in stale:
        age(participant)
    assert overdue_time_out(study=panel_study, batch=2) == 2
    assert overdue_time_out(study=panel_study, batch=2) == 1
    assert overdue_time_out(study=panel_study, batch=2) == 0


def test_the_page_says_when_no_scheduler_sweeps(client, alice, panel_study):
    client.force_login(alice)
    html = client.get(f"/studies/{panel_study.slug}/recruitment/").content.decode()
    assert "No scheduler (Celery beat" in html and "The sweep then runs on arrivals" in html
    overdue_sweep_task()  # what the beat (or cron's manage.py sweep_overdue) runs
    assert SchedulerHeartbeat.objects.get(task="overdue_sweep").ran_at is not None
    html = client.get(f"/studies/{panel_study.slug}/recruitment/").content.decode()
    assert "No scheduler" not in html and "A scheduler (Celery beat" in html


def test_a_stale_heartbeat_says_no_scheduler_runs(client, alice, panel_study, settings):
    settings.OVERDUE_SWEEP_SECONDS = 60
    scheduler_heartbeat(timezone.now() - timedelta(minutes=10))
    ran_at, recent = scheduler_last_run()
    assert ran_at is not None and not recent
    client.force_login(alice)
    assert "No scheduler" in client.get(f"/studies/{panel_study.slug}/recruitment/").content.decode()


def test_one_who_completed_before_the_limit_is_not_timed_out_after_it(client, panel_study):
    done = finish(arrive(client, panel_study))
    assert Participant.objects.get(pk=done.pk).state == "completed"  # the last answer completes them
    Participant.objects.filter(pk=done.pk).update(state="active")  # as a state stored before that rule
    age(done)
    assert overdue_time_out(study=panel_study) == 0
    assert Participant.objects.get(pk=done.pk).state == "completed"
    assert arrive(client, panel_study).reissue_of_id is None  # their row is held: a fresh one
