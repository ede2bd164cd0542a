"""Withdrawals made before a withdrawal reached every run left the participant's session scores in
the runs not re-scored since, and in the pilot plans that resampled them. The migration (scoring 0009) deletes
them from every run, bumps those runs' chart generations and fails those plans (asking again computes them
anew); the other participants' rows are untouched. Run backwards to before it and forwards again."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from scoring import services
from scoring.models import PowerChunk, ScoringRun, SessionScore
from scoring.planning import services as planning

pytestmark = pytest.mark.django_db(transaction=True)


def _migrate(targets):
    MigrationExecutor(connection).migrate(targets)


def test_scores_of_earlier_withdrawals_leave_every_run(scored):
    built, default = scored
    study = built.study
    older = services.scoring_run_create(study=study, make_default=False, b=3.0)
    older.refresh_from_db()
    assert older.status == "done", older.error
    a, b = study.systems.order_by("id")

    plan, _ = planning.power_plan_create(
        study=study, first_system=a, second_system=b, counts=[8], replications=250, effect="pilot"
    )
    plan.refresh_from_db()
    assert plan.status == "done" and PowerChunk.objects.filter(plan=plan).exists()
    # As an earlier withdrawal left it: the participant withdrawn, their scores still in both runs.
    participant = study.participants.get(code=built.sessions[0]["participant"])
    participant.withdrawn_at = timezone.now()
    participant.save(update_fields=["withdrawn_at"])
    generations = dict(ScoringRun.objects.values_list("pk", "generation"))
    assert SessionScore.objects.filter(participant=participant).count() == 8

    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        _migrate([("scoring", "0008_session_score_provenance")])
        _migrate(leaves)
    finally:
        _migrate(leaves)
    assert not SessionScore.objects.filter(participant=participant).exists()
    assert (
        SessionScore.objects.filter(run=default).count()
        == SessionScore.objects.filter(run=older).count()
        == 28
    )
    for pk, generation in ScoringRun.objects.values_list("pk", "generation"):
        assert generation == generations[pk] + 1
    plan.refresh_from_db()
    assert (plan.status, plan.sample, PowerChunk.objects.filter(plan=plan).count()) == ("failed", {}, 0)
    assert "withdrew" in plan.error
