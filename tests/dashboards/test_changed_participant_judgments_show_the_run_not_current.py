"""A run on the participants' own judgments is current only while each scored session's judgments are those
it was scored with: a grade changed or a judgment added since shows, with the count of sessions, until the
re-score."""

from datetime import timedelta

import pytest
from django.utils import timezone

from scoring import services
from scoring.freshness import judgments_checksum, run_freshness
from studies.models import Judgment, JudgmentChange

pytestmark = pytest.mark.django_db


def _judge(session_id, document, grade):
    """A participant's grade as the event ingest leaves it: the judgment and its history."""
    at = timezone.now() - timedelta(minutes=30)
    judgment, _ = Judgment.objects.update_or_create(
        session_id=session_id,
        document=document,
        defaults={"grade": grade, "created_at": at, "updated_at": at},
    )
    JudgmentChange.objects.create(judgment=judgment, grade=grade, changed_at=at)


@pytest.fixture
def participant_run(constructed, collection_docs, django_capture_on_commit_callbacks):
    for record in constructed.sessions[:6]:
        for ext in record["lists"][0][:3]:
            _judge(record["id"], collection_docs[ext], 2)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(
            study=constructed.study, judgments="participant", make_default=False
        )
    run.refresh_from_db()
    assert run.status == "done" and run_freshness(run).current
    return constructed, run


def test_a_changed_or_added_grade_shows_until_the_session_is_rescored(
    participant_run, collection_docs, django_capture_on_commit_callbacks
):
    built, run = participant_run
    first, other = built.sessions[0], built.sessions[7]
    _judge(first["id"], collection_docs[first["lists"][0][0]], 3)
    assert run_freshness(run).reasons == ("judgments changed in 1 session since",)
    _judge(other["id"], collection_docs[other["lists"][0][0]], 1)  # a session judged for the first time
    assert run_freshness(run).reasons == ("judgments changed in 2 sessions since",)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.scoring_run_make_default(run=run)
    assert not run_freshness(run).current
    for callback in callbacks:
        callback()
    run.refresh_from_db()
    assert run_freshness(run).current and run.progress_total == 2  # only the two sessions re-scored


def test_the_checksum_tells_two_grades_swapped_between_documents():
    assert judgments_checksum([(11, 1), (12, 2)]) != judgments_checksum([(11, 2), (12, 1)])
    assert judgments_checksum([(11, 0)]) != judgments_checksum([]) == 0
