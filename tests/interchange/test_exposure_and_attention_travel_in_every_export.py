"""What was on screen and when the participant was away leave in the tidy CSV download (an
exposures and an attention table, and active_s on sessions) and in the JSON archive, whose round trip keeps
them exactly; an archive's bad exposure figure or span is refused where it is and imports nothing."""

import io
import json
import zipfile

import pytest

from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive, study_archive_import
from studies.interchange.downloads import tables_zip_stream
from studies.interchange.tidy_csv import TABLES, study_tables
from studies.models import AttentionSpan, PageExposure, ResultExposure, SearchSession, Study
from studies.participation.way.steps import attention_record, exposure_record

from .test_archive_round_trip_loses_nothing import without_ids

pytestmark = pytest.mark.django_db


@pytest.fixture
def seen_study(worked_study):
    """The worked study, its first session's first query's results on screen and the session once away."""
    session = (
        SearchSession.objects.filter(assignment__participant__study=worked_study, queries__isnull=False)
        .order_by("pk")
        .first()
    )
    participant = session.assignment.participant
    query = session.queries.order_by("position").first()
    ranks = list(query.shown_results.order_by("rank").values_list("rank", flat=True))
    exposure_record(
        participant=participant,
        session=session,
        query_position=query.position,
        page=1,
        items=[
            [rank, 100 * n, 1000 + n, 1000 - n, 50 * (n == 0), int(n == 0), 101 * n + 1000]
            for n, rank in enumerate(ranks)
        ],
        scroll_permille=640,
        client_event_id="exposure-1",
    )
    attention_record(
        participant=participant,
        session=session,
        spans=[["blur", 2000, 1500], ["idle", 2500, 3000]],
        client_event_id="attention-1",
    )
    return worked_study, session, ranks


def test_the_tables_hold_exposures_attention_and_active_time(seen_study):
    study, session, ranks = seen_study
    tables = study_tables(study=study)
    exposures = [dict(zip(TABLES["exposures"], row, strict=True)) for row in tables["exposures"][1:]]
    assert [row["rank"] for row in exposures] == ranks
    assert exposures[0]["visible_ms"] == 1000 and exposures[0]["hovers"] == 1
    assert [row["last_visible_ms"] for row in exposures] == [101 * n + 1000 for n in range(len(ranks))]
    assert {row["page_scroll_permille"] for row in exposures} == {640}
    attention = [row[len(TABLES["attention"]) - 3 :] for row in tables["attention"][1:]]
    assert attention == [["blur", 2000, 1500], ["idle", 2500, 3000]]
    sessions = {
        (row[1], row[2]): dict(zip(tables["sessions"][0], row, strict=True)) for row in tables["sessions"][1:]
    }
    row = sessions[(session.assignment.participant.code, session.assignment.position)]
    duration = (session.ended_at - session.started_at).total_seconds()
    # Blurred 2.0-3.5 s, idle 2.5-5.5 s: 3.5 s away, each moment once (when the session lasted that long).
    assert float(row["active_s"]) == pytest.approx(
        max(0.0, duration - min(duration, 5.5) + min(duration, 2.0)), abs=0.002
    )
    with zipfile.ZipFile(io.BytesIO(b"".join(tables_zip_stream(study=study)))) as zipped:
        assert {"exposures.csv", "attention.csv"} <= set(zipped.namelist())
        assert zipped.read("attention.csv").decode().count("\n") == 3


def test_the_archive_round_trip_keeps_them(seen_study, alice, tmp_path):
    study, _, ranks = seen_study
    first = study_archive(study=study)
    path = tmp_path / "study.json"
    path.write_text(json.dumps(first))
    copy = study_archive_import(path=path, owner=alice, name="Copy")
    second = study_archive(study=copy)
    first["study"].pop("slug"), second["study"].pop("slug")
    first["study"].pop("name"), second["study"].pop("name")
    assert without_ids(second) == without_ids(first)
    assert ResultExposure.objects.filter(last_visible_ms=1000).count() == 2  # rank 1's, in both studies
    for model, count in ((ResultExposure, len(ranks)), (PageExposure, 1), (AttentionSpan, 2)):
        assert model.objects.count() == 2 * count, model


@pytest.mark.parametrize(
    ("where", "value", "says"),
    [
        (
            "exposure",
            {"first_visible_ms": 0, "visible_ms": -1, "max_permille": 5, "hover_ms": 0, "hovers": 0},
            "visible_ms",
        ),
        (
            "exposure",
            {"first_visible_ms": 0, "visible_ms": 1, "max_permille": 1001, "hover_ms": 0, "hovers": 0},
            "max_permille",
        ),
        ("span", ["away", 0, 10], "attention_spans[0]"),
        ("formulation", -5, "formulation_ms"),
        ("span", ["blur", 0, "ten"], "attention_spans[0]"),
    ],
)
def test_a_bad_figure_is_refused_where_it_is_and_imports_nothing(
    seen_study, alice, tmp_path, where, value, says
):
    study, _, _ = seen_study
    archive = study_archive(study=study)
    session = next(
        a["session"]
        for a in archive["participants"][0]["assignments"]
        if a["session"] and a["session"]["queries"]
    )
    if where == "exposure":
        session["queries"][0]["shown_results"][0]["exposure"] = value
    elif where == "formulation":
        session["queries"][0]["formulation_ms"] = value
    else:
        session["attention_spans"] = [value]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(archive))
    studies = Study.objects.count()
    with pytest.raises(ImportFailure) as refused:
        study_archive_import(path=path, owner=alice, name="Copy")
    assert says in str(refused.value)
    assert Study.objects.count() == studies and ResultExposure.objects.count() == len(
        session["queries"][0]["shown_results"]
    )
