"""`python -m scoring agreement`: one qrels file per assessor in, every coefficient with its interval out
(tab-separated, the library's figures), per topic on request; bad input refused with the file, exit 2 and
nothing on stdout."""

import csv
import io

import numpy as np
import pytest

from scoring.lib import agreement, reliability
from scoring.lib.agreement_cli import HEADER
from scoring.lib.cli import main

FILES = {
    "ann": "1 0 d1 0\n1 0 d2 1\n1 0 d3 3\n2 0 d1 0\n2 0 d5 2\n2 0 d6 0\n",
    "ben": "1 0 d1 0\n1 0 d2 2\n1 0 d3 3\n2 0 d1 0\n2 0 d5 2\n2 0 d9 -1\n",
    "cat": "1 0 d1 1\n1 0 d2 1\n2 0 d5 3\n2 0 d6 0\n",
}
# Documents (topic, doc), sorted: (1,d1) (1,d2) (1,d3) (2,d1) (2,d5) (2,d6) (2,d9); ben's -1 is unjudged.
nan = np.nan
DATA = np.array(
    [
        [0, 1, 3, 0, 2, 0, nan],
        [0, 2, 3, 0, 2, nan, nan],
        [1, 1, nan, nan, 3, 0, nan],
    ]
)


@pytest.fixture
def paths(tmp_path):
    out = []
    for name, text in FILES.items():
        path = tmp_path / f"{name}.qrels"
        path.write_text(text)
        out.append(str(path))
    return out


def table(capsys, argv):
    assert main(argv) == 0
    return list(csv.reader(io.StringIO(capsys.readouterr().out), delimiter="\t"))


def test_the_rows_are_the_librarys_estimates(paths, capsys):
    rows = table(capsys, ["agreement", *paths, "--replicates", "300", "--seed", "5"])
    assert rows[0] == HEADER
    expected = reliability.all_estimates(DATA, [0, 1, 2, 3], replicates=300, seed=5)
    assert rows[1 : 1 + len(expected)] == [
        ["all", "", "", *map(str, reliability.estimate_cells(e))] for e in expected
    ]
    ann_cat = [row for row in rows if row[1:3] == ["ann", "cat"]]
    both = ~np.isnan(DATA[0]) & ~np.isnan(DATA[2])
    matrix = agreement.confusion_matrix(DATA[0, both].astype(int), DATA[2, both].astype(int), range(4))
    assert ann_cat == [
        ["all", "ann", "cat", *map(str, reliability.estimate_cells(e))]
        for e in reliability.pair_estimates(matrix)
    ]
    assert len(rows) == 1 + len(expected) + 3 * len(reliability.PAIR_COEFFICIENTS)


def test_per_topic_adds_a_block_for_each_topic(paths, capsys):
    rows = table(capsys, ["agreement", *paths, "--per-topic", "--replicates", "100"])
    assert [row[0] for row in rows[1:]].count("1") == [row[0] for row in rows[1:]].count("all")
    topic_two = next(row for row in rows if row[0] == "2" and row[3] == "Fleiss' kappa")
    assert topic_two[9] == "3"  # d1, d5, d6: ben's -1 for d9 is unjudged, and nobody else graded it
    expected = reliability.fleiss_kappa_estimate(DATA[:, 3:], [0, 1, 2, 3])
    assert float(topic_two[4]) == pytest.approx(expected.estimate)


def test_bad_input_names_the_file_and_prints_nothing(paths, tmp_path, capsys):
    broken = tmp_path / "dan.qrels"
    broken.write_text("1 0 d1 2\n1 0 d2 high\n")
    assert main(["agreement", paths[0], str(broken)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"{broken}:2: ")
    assert main(["agreement", *paths, "--grades", "0,1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "grade 3 not in [0, 1]" in captured.err
    assert main(["agreement", paths[0]]) == 2
    assert "at least two assessors" in capsys.readouterr().err


def test_documents_graded_once_are_left_out_over_all_assessors_and_counted(paths, tmp_path, capsys):
    dan = tmp_path / "dan.qrels"
    dan.write_text("1 0 d1 0\n2 0 d7 3\n3 0 d4 1\n")  # (2,d7) and (3,d4): dan's alone
    rows = table(capsys, ["agreement", *paths, str(dan), "--per-topic", "--replicates", "100"])
    fleiss = {row[0]: row for row in rows if row[1:4] == ["", "", "Fleiss' kappa"]}
    assert (fleiss["all"][9], fleiss["2"][9], fleiss["3"][9]) == ("6", "3", "0")
    with_dan = np.vstack([DATA, [0, nan, nan, nan, nan, nan, nan]])
    assert float(fleiss["all"][4]) == pytest.approx(
        reliability.fleiss_kappa_estimate(with_dan, range(4)).estimate
    )
    assert main(["agreement", *paths, str(dan), "--per-topic", "--replicates", "100"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "all: 2 documents graded by one assessor only left out of the coefficients over all assessors",
        "2: 1 document graded by one assessor only left out of the coefficients over all assessors",
        "3: 1 document graded by one assessor only left out of the coefficients over all assessors",
    ]
