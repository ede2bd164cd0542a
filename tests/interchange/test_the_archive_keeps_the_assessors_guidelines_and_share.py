"""A study archive keeps the assessment settings: the double-judged share, the highlighting of the
participants' queries and the guidelines (the study's and each scenario's, the text as written); an archive
without them (older) imports with none, and a bad one is refused at its place with nothing imported."""

import json

import pytest
from django.core.management import call_command

from studies.assessment import assessor_work, assessors
from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive, study_archive_import
from studies.models import AssessmentGuidelines, Study

pytestmark = pytest.mark.django_db

TEXT = "  Grade 3 <b>only</b> when\n\nthe whole topic is answered.\n"


@pytest.fixture
def archived(worked_study, alice, tmp_path):
    assessors.assessment_plan_set(
        study=worked_study,
        assessors_per_document=1,
        double_judged_percent=15,
        highlight_participant_queries=True,
    )
    scenario = worked_study.scenarios.order_by("id").first()
    assessor_work.guidelines_set(study=worked_study, scenario=None, text=TEXT, by=alice)
    assessor_work.guidelines_set(study=worked_study, scenario=scenario, text="Scenario rule.", by=alice)
    path = tmp_path / "study.json"
    call_command("export_study", worked_study.slug, "-o", str(path))
    return worked_study, scenario, path


def test_the_settings_and_guidelines_come_back_as_they_were(archived, alice):
    study, scenario, path = archived
    data = json.loads(path.read_text())["assessment"]
    assert data["double_judged_percent"] == 15 and data["highlight_participant_queries"] is True
    assert data["guidelines"] == [
        {"scenario": None, "text": TEXT},
        {"scenario": scenario.code, "text": "Scenario rule."},
    ]
    copy = study_archive_import(path=path, owner=alice)
    assert study_archive(study=copy)["assessment"] == study_archive(study=study)["assessment"]
    assert copy.assessment_guidelines.get(scenario=None).text == TEXT


def test_an_older_archive_imports_with_no_guidelines(archived, alice):
    _study, _scenario, path = archived
    data = json.loads(path.read_text())
    for key in ("double_judged_percent", "highlight_participant_queries", "guidelines"):
        del data["assessment"][key]
    path.write_text(json.dumps(data))
    copy = study_archive_import(path=path, owner=alice)
    assert not copy.assessment_guidelines.exists()
    assert copy.assessment_plan.double_judged_percent is None


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        (
            lambda a: a.update(double_judged_percent=150),
            "$.assessment.double_judged_percent",
            "percent from 0 to 100",
        ),
        (
            lambda a: a["guidelines"].append({"scenario": "S9", "text": "x"}),
            "$.assessment.guidelines[2].scenario",
            "no scenario 'S9'",
        ),
        (
            lambda a: a["guidelines"].append({"scenario": None, "text": "x"}),
            "$.assessment.guidelines[2].scenario",
            "given twice",
        ),
        (
            lambda a: a["guidelines"][1].update(text=3),
            "$.assessment.guidelines[1].text",
            "not of type str",
        ),
    ],
)
def test_a_bad_setting_is_refused_at_its_place_and_nothing_is_imported(
    archived, alice, change, field, reason
):
    _study, _scenario, path = archived
    data = json.loads(path.read_text())
    change(data["assessment"])
    path.write_text(json.dumps(data, indent=1))
    studies, guidelines = Study.objects.count(), AssessmentGuidelines.objects.count()
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=path, owner=alice)
    assert failure.value.field == field
    assert reason in failure.value.reason
    assert (Study.objects.count(), AssessmentGuidelines.objects.count()) == (studies, guidelines)
