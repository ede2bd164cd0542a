"""A practice scenario is worked first and logged like any task, but never scored: the run has no score for
its sessions (so the dashboards, statistics and score exports, all read from the run, never show them), while
the tidy CSV still lists them, marked practice."""

import io
import zipfile

import pytest

from scoring.models import SessionScore
from studies.design import services
from studies.interchange.tidy_csv import study_tables
from studies.models import Collection, Document, SearchSession
from tests.dashboards.conftest import make_session, reference_version
from tests.factories import study_scored

pytestmark = pytest.mark.django_db


@pytest.fixture
def practised(study):
    collection = Collection.objects.create(name="tiny")
    docs = {
        d.external_id: d
        for d in Document.objects.bulk_create(
            Document(collection=collection, external_id=f"d{n}", title=f"T{n}", text=f"text {n}")
            for n in range(1, 6)
        )
    }
    study.collection = collection
    study.save(update_fields=["collection"])
    services.scenario_add(study=study, code="WARM", title="Warm-up", text="t", topic_id="0", practice=True)
    for n in (1, 2):
        services.scenario_add(study=study, code=f"S{n}", title=f"S{n}", text="t", topic_id=str(n))
    services.system_add(study=study, code="A", name="A")
    services.system_add(study=study, code="B", name="B")
    services.participants_enrol(study=study, count=2)
    for participant in study.participants.all():
        for assignment in participant.assignments.all():
            make_session(assignment, [["d1", "d2", "d3"], ["d4", "d5"]], docs=docs)
    reference_version(study, {topic: {"d1": 3, "d2": 1, "d4": 2} for topic in ("0", "1", "2")}, docs=docs)
    return study


def test_the_practice_task_comes_first_on_the_system_the_participant_starts_with(practised):
    for participant in practised.participants.all():
        order = [(a.scenario.code, a.system.code) for a in participant.assignments.order_by("position")]
        assert order[0][0] == "WARM" and order[0][1] == order[1][1]
        assert sorted(code for code, _ in order[1:]) == ["S1", "S2"]


def test_a_scoring_run_scores_every_session_but_the_practice_ones(
    practised, django_capture_on_commit_callbacks
):
    run = study_scored(practised, django_capture_on_commit_callbacks)
    practice = set(
        SearchSession.objects.filter(assignment__scenario__practice=True).values_list("pk", flat=True)
    )
    scored = set(SessionScore.objects.filter(run=run).values_list("session_id", flat=True))
    assert len(practice) == 2 and len(scored) == 4
    assert not scored & practice
    everything = set(SearchSession.objects.values_list("pk", flat=True))
    assert scored == everything - practice


def test_the_tidy_csv_keeps_the_practice_sessions_marked(practised):
    header, *rows = study_tables(study=practised)["sessions"]
    marked = {(row[header.index("scenario")], row[header.index("practice")]) for row in rows}
    assert marked == {("WARM", 1), ("S1", 0), ("S2", 0)}
    assert len(rows) == 6


def test_the_trec_runs_leave_the_practice_sessions_out_unless_asked_to_mark_them(practised):
    from studies.interchange.trec import study_runs

    default = study_runs(study=practised)
    assert len(default) == 8  # 2 participants x 2 scored tasks x 2 queries
    assert {run.topic for run in default} == {"1", "2"}
    assert not any("practice" in run.name for run in default)
    marked = study_runs(study=practised, practice="mark")
    practice = [run for run in marked if run.topic == "0"]
    assert len(marked) == 12 and len(practice) == 4
    assert all(
        "_WARM_" in run.name and run.name.endswith(("_practice_q1.run", "_practice_q2.run"))
        for run in practice
    )
    assert sorted(run.name for run in marked if run.topic != "0") == sorted(run.name for run in default)


def test_a_bad_practice_choice_is_refused_by_name_everywhere(practised, client):
    from studies.errors import ExportError
    from studies.interchange.trec import study_runs

    with pytest.raises(ExportError, match="practice is one of leave, mark"):
        study_runs(study=practised, practice="keep")
    client.force_login(practised.owner)
    response = client.get(f"/studies/{practised.slug}/downloads/runs-query.zip?practice=keep")
    assert response.status_code == 400 and b"practice is one of leave, mark" in response.content
    marked = client.get(f"/studies/{practised.slug}/downloads/runs-query.zip?practice=mark")
    assert marked.status_code == 200
    names = zipfile.ZipFile(io.BytesIO(b"".join(marked.streaming_content))).namelist()
    assert sum("_practice_" in name for name in names) == 4


def test_the_session_track_log_marks_the_practice_sessions(practised):
    import xml.etree.ElementTree as ET

    from studies.interchange.session_track import session_track_export

    root = ET.fromstring(session_track_export(study=practised))
    sessions = root.findall("session")
    assert len(sessions) == 6
    marked = {s.find("topic").get("num"): s.get("practice") for s in sessions}
    assert marked == {"0": "1", "1": None, "2": None}
