"""The interchange tests' worked study (two participants, queries, shown results, judgments), and the same
study scored against a reference version."""

import pytest

from studies.assessment import references
from tests.interchange.conftest import collection, worked_study  # noqa: F401 (fixtures)


@pytest.fixture
def scored_run(worked_study, alice, django_capture_on_commit_callbacks):  # noqa: F811
    """A finished scoring run of the worked study (the first participant's two sessions, two queries each)."""
    from scoring import services

    lines = [f"{topic} 0 d{n} {(n + topic) % 4}" for topic in range(1, 5) for n in range(1, 9)]
    references.reference_version_import_qrels(
        study=worked_study, lines=lines, path="ref.qrels", created_by=alice
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=worked_study, created_by=alice)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run
