"""A plan's progress lives on the plan: a reload of its page (or the status JSON) shows how far the chunks
have got, and a chunk delivered twice counts once."""

import pytest
from django.urls import reverse

from scoring.models import PowerChunk, PowerPlan
from scoring.planning import services

pytestmark = pytest.mark.django_db


def _plan(study):
    a, b = study.systems.order_by("id")
    plan, reused = services.power_plan_create(
        study=study,
        first_system=a,
        second_system=b,
        counts=[8, 16],
        difference=0.4,
        spread=1.0,
        replications=500,
    )
    assert not reused
    return plan


def test_progress_is_the_sum_of_stored_chunks_and_a_reload_shows_it(client, designed_study):
    plan = _plan(designed_study)  # not queued: the on-commit callback is not run here
    chunks = services.power_plan_start(plan_id=plan.pk)
    assert chunks == [(8, 0, 250), (8, 250, 250), (16, 0, 250), (16, 250, 250)]
    services.power_chunk_compute(plan_id=plan.pk, count=8, start=0, replications=250)
    services.power_chunk_compute(plan_id=plan.pk, count=16, start=250, replications=250)
    client.force_login(designed_study.owner)
    status = client.get(reverse("scoring:planning_status", args=[designed_study.slug, plan.pk])).json()
    assert status == {"status": "running", "done": 500, "total": 1000, "error": "", "finished": False}
    page = client.get(reverse("scoring:planning_plan", args=[designed_study.slug, plan.pk]))
    assert b"500/1000 simulated studies" in page.content
    assert b'data-finished="0"' in page.content  # planning.js follows it until it is finished
    # The partial curve shows the counts so far; the smallest count waits for the whole plan.
    payload = client.get(reverse("scoring:planning_chart", args=[designed_study.slug, plan.pk])).json()
    assert payload["complete"] is False
    assert payload["figure"]["data"][0]["x"] == [8, 16]
    assert not any(note.startswith("The smallest count") for note in payload["notes"])


def test_a_redelivered_chunk_counts_once_and_gives_the_same_rejections(designed_study):
    plan = _plan(designed_study)
    services.power_plan_start(plan_id=plan.pk)
    first = services.power_chunk_compute(plan_id=plan.pk, count=8, start=250, replications=250)
    again = services.power_chunk_compute(plan_id=plan.pk, count=8, start=250, replications=250)
    assert first == again
    assert PowerChunk.objects.filter(plan=plan).count() == 1
    plan.refresh_from_db()
    assert plan.progress_done == 250


def test_a_failed_chunk_marks_the_plan_failed_with_the_reason(designed_study):
    plan = _plan(designed_study)
    services.power_plan_start(plan_id=plan.pk)
    PowerPlan.objects.filter(pk=plan.pk).update(spread=-1.0)  # as if the row were damaged
    assert services.power_chunk_compute(plan_id=plan.pk, count=8, start=0, replications=250) == 0
    plan.refresh_from_db()
    assert plan.status == "failed" and "spread must be > 0" in plan.error
    services.power_plan_finish(plan_id=plan.pk)
    plan.refresh_from_db()
    assert plan.status == "failed"
