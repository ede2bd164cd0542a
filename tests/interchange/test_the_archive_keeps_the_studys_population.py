"""The archive keeps the study's analysis population: exported and imported back as the same
setting; one that names nothing imports nothing and says where (file, $.study.analysis_population)."""

import json

import pytest

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive, study_archive_import
from studies.models import Study

pytestmark = pytest.mark.django_db


def test_the_population_travels_and_a_bad_one_is_refused(worked_study, alice, tmp_path):
    worked_study.analysis_population = "completers:effort_flagged"
    worked_study.save(update_fields=["analysis_population"])
    data = study_archive(study=worked_study)
    assert data["study"]["analysis_population"] == "completers:effort_flagged"
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    copy = study_archive_import(path=path, owner=alice)
    assert copy.analysis_population == "completers:effort_flagged"

    data["study"]["analysis_population"] = "itt:dropouts"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    before = Study.objects.count()
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=path, owner=alice)
    assert "$.study.analysis_population" in str(failure.value) and "'dropouts'" in str(failure.value)
    assert Study.objects.count() == before
