"""A pass that cannot be queued (the broker is down) fails nobody: the error is logged, the run is left stale
and owing a full pass, a later partial pass does not clear that, and `manage.py requeue_stale_runs` queues
the full pass that scores every session. In-process (any database, no broker needed): the broker's failure
is simulated, and "the broker is back" runs the tasks eagerly."""

import pytest
from django.core.management import call_command
from kombu.exceptions import OperationalError as BrokerError

from scoring import services
from scoring.models import ScoringRun, SessionScore
from scoring.tasks import scoring_run_start_task
from sessionlab.celery import app
from studies.models import Collection, Document
from tests.dashboards.conftest import build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def broker(monkeypatch):
    """broker.down(): queueing raises as kombu does when
    Redis is unreachable; broker.up(): tasks run eagerly."""
    saved = app.conf.task_always_eager

    class Broker:
        def down(self):
            app.conf.task_always_eager = False

            def refuse(*args, **kwargs):
                raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

            monkeypatch.setattr(scoring_run_start_task, "apply_async", refuse)

        def up(self):
            monkeypatch.undo()
            app.conf.task_always_eager = True

    yield Broker()
    monkeypatch.undo()
    app.conf.task_always_eager = saved


@pytest.fixture
def scored(designed_study, broker, django_capture_on_commit_callbacks):
    collection = Collection.objects.create(name="Requeue collection")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{i}", title=f"Doc {i}") for i in range(30)
    )
    designed_study.collection = collection
    designed_study.save(update_fields=["collection"])
    built = build_study(
        designed_study, {d.external_id: d for d in collection.documents.all()}, participants=4
    )
    broker.up()
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=designed_study, weights=[0, 1, 10, 100])
    run.refresh_from_db()
    assert run.status == ScoringRun.Status.DONE and SessionScore.objects.filter(run=run).count() == 16
    return built, run


def test_a_pass_that_cannot_be_queued_is_owed_until_a_full_pass_runs(
    scored, broker, caplog, django_capture_on_commit_callbacks
):
    built, run = scored
    first, second = built.sessions[0]["id"], built.sessions[1]["id"]
    SessionScore.objects.filter(
        run=run, session_id__in=[first, second]
    ).delete()  # what the lost pass would redo

    broker.down()
    with django_capture_on_commit_callbacks(execute=True):
        services.study_scores_mark_stale(study_id=built.study.pk, session_ids=[first])  # does not raise
    run.refresh_from_db()
    assert run.stale and run.error.startswith(services.NOT_QUEUED)
    assert "could not queue scoring.tasks.scoring_run_start_task" in caplog.text

    # The broker is back; a later partial pass scores its own session but leaves the run owing the lost one.
    broker.up()
    with django_capture_on_commit_callbacks(execute=True):
        services.study_scores_mark_stale(study_id=built.study.pk, session_ids=[second])
    run.refresh_from_db()
    assert run.stale and run.error.startswith(services.NOT_QUEUED)
    assert not SessionScore.objects.filter(run=run, session_id=first).exists()

    call_command("requeue_stale_runs")
    run.refresh_from_db()
    assert not run.stale and run.error == "" and run.status == ScoringRun.Status.DONE
    assert SessionScore.objects.filter(run=run).count() == 16
    assert services.stale_runs_requeue() == []  # nothing owed any more


def test_requeue_picks_only_runs_that_are_owed(scored, broker):
    _, run = scored
    assert services.stale_runs_requeue() == []
    ScoringRun.objects.filter(pk=run.pk).update(status=ScoringRun.Status.PENDING, started_at=None)
    assert services.stale_runs_requeue() == [run.pk]  # never started (its first pass was lost)
    run.refresh_from_db()
    assert run.status == ScoringRun.Status.DONE and not run.stale
