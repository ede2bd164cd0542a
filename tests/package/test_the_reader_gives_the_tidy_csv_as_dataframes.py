"""read_package: a package (zip or folder) read as DataFrames equal to the tidy CSV export of the same study
read by pandas (the panel id columns aside); a JSON archive's frames equal the tidy CSV on the columns it
holds; the scores equal the database's; a file of neither kind refused by name."""

import zipfile

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from scoring.lib import package_layout as layout
from scoring.lib.package_reader import ARCHIVE_COLUMNS, TEXT_COLUMNS, PackageReadError, read_package
from scoring.models import SessionScore
from studies.interchange.archive import study_archive_json
from studies.interchange.tidy_csv import write_study_csv

pytestmark = pytest.mark.django_db

TEXT = {name: str for name in TEXT_COLUMNS}


@pytest.fixture
def tidy(scored_study, tmp_path):
    write_study_csv(study=scored_study, directory=tmp_path / "tidy", raw=True)
    frames = {}
    for name in layout.TIDY_TABLES:
        frame = pd.read_csv(tmp_path / "tidy" / f"{name}.csv", dtype=TEXT)
        frames[name] = frame.drop(columns=[c for c in layout.PANEL_ID_COLUMNS if c in frame.columns])
    return frames


def test_a_package_s_frames_are_the_tidy_csv(package, tidy):
    tables = read_package(package)
    assert sorted(tables) == sorted(layout.TABLES)
    for name in layout.TIDY_TABLES:
        assert_frame_equal(tables[name], tidy[name], check_dtype=True, obj=name)
    assert len(tables["shown_results"]) == 16 and len(tables["sessions"]) == 2


def test_an_unzipped_package_reads_the_same(package, tmp_path):
    with zipfile.ZipFile(package) as zipped:
        zipped.extractall(tmp_path / "folder")
    folder, whole = read_package(tmp_path / "folder"), read_package(package)
    assert sorted(folder) == sorted(whole)
    for name in whole:
        assert_frame_equal(folder[name], whole[name], obj=name)


def test_the_scores_read_are_the_database_s(package, scored_study):
    scores = read_package(package)["scores"]
    stored = sorted(
        (s.participant.code, s.session.assignment.position, s.final, s.normalized_final)
        for s in SessionScore.objects.filter(run__study=scored_study).select_related(
            "participant", "session__assignment"
        )
    )
    read = sorted(
        zip(
            scores["participant"],
            scores["position"],
            scores["final"],
            scores["normalized_final"],
            strict=True,
        )
    )
    assert read == stored and len(read) == 4


def test_a_json_archive_s_frames_are_the_tidy_csv_on_its_columns(scored_study, tidy, tmp_path, package):
    path = tmp_path / "study.json"
    path.write_text(study_archive_json(study=scored_study), encoding="utf-8")
    tables = read_package(path)
    packaged = read_package(package)
    for name, columns in ARCHIVE_COLUMNS.items():
        expected = tidy[name][columns] if name in tidy else packaged[name]
        assert_frame_equal(tables[name], expected, obj=name)


def test_a_file_of_neither_kind_is_refused_by_name(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(PackageReadError, match="notes.json: not a SessionLab package"):
        read_package(path)
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w"):
        pass
    with pytest.raises(PackageReadError, match="holds no data/ table"):
        read_package(empty)
