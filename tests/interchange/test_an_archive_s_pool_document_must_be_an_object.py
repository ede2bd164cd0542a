"""A pool's document in an archive is an object; anything else is refused at its place (file, line, JSON
path) and nothing is imported. Before the archive's reader was cut per section, a number there failed as an
unexpected error with a traceback."""

import json

import pytest
from django.core.management import call_command

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import
from studies.models import AssessmentPool, Study

pytestmark = pytest.mark.django_db


def test_a_pool_document_that_is_no_object_names_its_place(worked_study, alice, tmp_path):
    path = tmp_path / "study.json"
    call_command("export_study", worked_study.slug, "-o", str(path))
    data = json.loads(path.read_text())
    scenario = data["scenarios"][0]["code"]
    data["assessment"] = {"pools": [{"scenario": scenario, "rule": "top_x", "top_x": 5, "documents": [7]}]}
    path.write_text(json.dumps(data, indent=1))
    studies, pools = Study.objects.count(), AssessmentPool.objects.count()
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=path, owner=alice)
    assert failure.value.field == "$.assessment.pools[0].documents[0]"
    assert failure.value.reason == "expected an object"
    assert (Study.objects.count(), AssessmentPool.objects.count()) == (studies, pools)
