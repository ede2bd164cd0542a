"""The migration that gave each session score its provenance (scoring 0008) read an existing
database: rows of runs that were not marked stale took their run's reference version (reference runs) or the
checksum of their session's judgments as they are (participant runs), so those runs are current after it;
rows of runs marked stale took nothing, so those runs show stale until re-scored. Run backwards to before it
and forwards again over a worked study."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from scoring import services
from scoring.freshness import run_freshness
from scoring.models import ScoringRun, SessionScore
from studies.assessment import references
from tests.factories import study_scored

pytestmark = pytest.mark.django_db(transaction=True)


def _migrate(targets):
    MigrationExecutor(connection).migrate(targets)


def test_fresh_runs_stay_current_and_marked_ones_show_stale(
    worked_study, alice, django_capture_on_commit_callbacks
):
    lines = [f"{topic} 0 d{n} {(n + topic) % 4}" for topic in range(1, 5) for n in range(1, 9)]
    references.reference_version_import_qrels(
        study=worked_study, lines=lines, path="ref.qrels", created_by=alice
    )
    reference = study_scored(worked_study, django_capture_on_commit_callbacks)
    runs = {"reference": reference}
    with django_capture_on_commit_callbacks(execute=True):
        for name in ("participant", "participant marked"):
            runs[name] = services.scoring_run_create(study=worked_study, judgments="participant", label=name)
    assert SessionScore.objects.filter(run=runs["participant"]).exclude(judgments_checksum=0).exists()
    ScoringRun.objects.filter(pk=runs["participant marked"].pk).update(stale=True)

    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        _migrate([("scoring", "0006_scan_depth_from_exposure")])
        _migrate(leaves)
    finally:
        _migrate(leaves)
    fresh = {name: run_freshness(ScoringRun.objects.get(pk=run.pk)) for name, run in runs.items()}
    assert fresh["reference"].current and fresh["participant"].current
    marked = SessionScore.objects.filter(run=runs["participant marked"]).count()
    assert fresh["participant marked"].reasons == (
        f"{marked} sessions scored with no record of the judgments used",
    )
    assert set(
        SessionScore.objects.filter(run=reference).values_list("reference_version__number", flat=True)
    ) == {1}
