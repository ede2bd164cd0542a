"""A worked study with two reference versions and two finished scoring runs (different parameters; the
default on version 2, the other on version 1), packaged as a zip file."""

import pytest

from scoring.package import study_package_zip
from scoring.services import scoring_run_create
from studies.assessment.references import reference_version_import_qrels
from studies.models import Collection, Document
from tests.factories import study_with_sessions

QRELS_V1 = ["1 0 d1 2", "1 0 d3 1", "2 0 d4 3", "2 0 d6 1"]
QRELS_V2 = [*QRELS_V1, "1 0 d4 3", "1 0 d5 2", "2 0 d2 2", "2 0 d7 1", "2 0 d8 3"]


@pytest.fixture
def collection(db):
    collection = Collection.objects.create(name="tiny")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{n}", title=f"Title {n}", text=f"Text {n}")
        for n in range(1, 9)
    )
    return collection


@pytest.fixture
def scored_study(designed_study, collection, alice, django_capture_on_commit_callbacks):
    study = study_with_sessions(designed_study, collection)
    reference_version_import_qrels(study=study, lines=QRELS_V1, path="v1.qrels", created_by=alice)
    with django_capture_on_commit_callbacks(execute=True):
        first = scoring_run_create(study=study, created_by=alice, label="the paper's")
    with django_capture_on_commit_callbacks(execute=True):
        second = scoring_run_create(
            study=study,
            created_by=alice,
            label="steeper",
            weights=[0, 1, 3, 7],
            b=3.0,
            bq=6.0,
            top=5,
            scan="observed",
            measures=["srbp", "ndcg_mean", "u_measure"],
        )
    # The default run follows the new version (re-scored); the other stays on version 1.
    with django_capture_on_commit_callbacks(execute=True):
        reference_version_import_qrels(study=study, lines=QRELS_V2, path="v2.qrels", created_by=alice)
    for run in (first, second):
        run.refresh_from_db()
        assert run.status == "done", run.error
    return study


@pytest.fixture
def package(scored_study, tmp_path):
    path = tmp_path / "package.zip"
    path.write_bytes(study_package_zip(study=scored_study))
    return path
