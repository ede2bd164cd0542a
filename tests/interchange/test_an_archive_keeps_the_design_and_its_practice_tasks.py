"""The study archive carries the design (within or between subjects) and which scenarios are practice; an
import restores both, an older archive without them reads as within-subject with no practice, and a design
that is neither is refused naming file, line and field, writing nothing."""

import json

import pytest
from django.core.management import call_command

from studies.design import services
from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import
from studies.models import Study
from tests.factories import study_with_sessions

pytestmark = pytest.mark.django_db


@pytest.fixture
def archive(designed_study, collection, tmp_path):
    services.study_design_set(study=designed_study, design="between")
    services.scenario_add(
        study=designed_study, code="WARM", title="Warm-up", text="t", topic_id="0", practice=True
    )
    study_with_sessions(designed_study, collection)
    path = tmp_path / "study.json"
    call_command("export_study", designed_study.slug, "-o", str(path))
    return path


def test_the_design_and_the_practice_scenarios_come_back(archive, alice, designed_study):
    study = study_archive_import(path=archive, owner=alice, name="again")
    assert study.design == "between"
    assert [(s.code, s.practice) for s in study.scenarios.order_by("id")] == [
        (s.code, s.practice) for s in designed_study.scenarios.order_by("id")
    ]
    assert study.scenarios.get(code="WARM").practice
    orders = [
        [(a.scenario.code, a.system.code) for a in p.assignments.order_by("position")]
        for p in study.participants.order_by("enrolment_index")
    ]
    assert all(order[0][0] == "WARM" and len({u for _, u in order}) == 1 for order in orders)


def test_an_older_archive_reads_as_within_subject_without_practice(archive, alice):
    data = json.loads(archive.read_text())
    del data["study"]["design"]
    for scenario in data["scenarios"]:
        del scenario["practice"]
    archive.write_text(json.dumps(data, indent=1))
    study = study_archive_import(path=archive, owner=alice, name="older")
    assert study.design is None
    assert not study.scenarios.filter(practice=True).exists()


def test_an_unknown_design_is_refused_by_file_line_and_field(archive, alice):
    data = json.loads(archive.read_text())
    data["study"]["design"] = "crossover"
    archive.write_text(json.dumps(data, indent=1))
    before = Study.objects.count()
    with pytest.raises(ImportFailure) as failure:
        study_archive_import(path=archive, owner=alice)
    assert failure.value.field == "$.study.design" and "'crossover' is not one of" in failure.value.reason
    assert str(failure.value).startswith(f"{archive}:{failure.value.line}: $.study.design: ")
    assert Study.objects.count() == before
