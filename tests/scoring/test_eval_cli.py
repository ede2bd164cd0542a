"""`python -m scoring eval`: trec_eval-style output, and
bad input refused with file:line, exit 2, no stdout."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.lib.cli import main

ROOT = Path(__file__).resolve().parents[2]

QRELS = """\
1 0 d1 3
1 0 d2 2
1 0 d3 0
1 0 d4 1
2 0 d1 1
3 0 d9 2
"""
RUN = """\
1 Q0 d3 1 9.0 tag
1 Q0 d1 2 8.0 tag
1 Q0 d5 3 8.0 tag
1 Q0 d2 4 7.5 tag
2 Q0 d7 1 3.0 tag
2 Q0 d1 2 2.0 tag
"""


@pytest.fixture
def files(tmp_path):
    def write(qrels=QRELS, run=RUN):
        (tmp_path / "qrels").write_text(qrels)
        (tmp_path / "run").write_text(run)
        return str(tmp_path / "qrels"), str(tmp_path / "run")

    return write


def run_main(capsys, argv):
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse refusing an option
        status = exc.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_it_prints_measure_topic_value_per_topic_then_the_mean(files, capsys):
    qrels, run = files()
    status, out, err = run_main(capsys, ["eval", qrels, run, "-m", "ndcg", "-m", "dcg_cut_2"])
    assert status == 0
    rows = [line.split("\t") for line in out.splitlines()]
    assert [(r[0].strip(), r[1]) for r in rows] == [
        ("ndcg", "1"),
        ("dcg_cut_2", "1"),
        ("ndcg", "2"),
        ("dcg_cut_2", "2"),
        ("ndcg", "all"),
        ("dcg_cut_2", "all"),
    ]
    assert all(len(r[2].split(".")[1]) == 4 for r in rows)
    # Topic 1: d3 (0), then d5 and d1 tied at 8.0 with d5 first (ids descending), then d2 (2).
    assert rows[1][2] == "0.0000"
    assert rows[3][2] == f"{1 / 1.584962500721156:.4f}"  # topic 2: d1 (grade 1) at rank 2


def test_the_mean_is_over_evaluated_topics_and_with_c_over_all_qrels_topics(files, capsys):
    qrels, run = files()
    _, plain, _ = run_main(capsys, ["eval", qrels, run, "-m", "ndcg_cut_10"])
    status, complete, _ = run_main(capsys, ["eval", qrels, run, "-m", "ndcg_cut_10", "-c"])
    assert status == 0
    assert [line.split("\t")[1] for line in plain.splitlines()] == ["1", "2", "all"]
    assert [line.split("\t")[1] for line in complete.splitlines()] == ["1", "2", "3", "all"]
    values = {line.split("\t")[1]: float(line.split("\t")[2]) for line in complete.splitlines()}
    assert values["3"] == 0.0
    assert values["all"] == pytest.approx((values["1"] + values["2"]) / 3, abs=1e-4)


def test_the_default_measure_is_ndcg(files, capsys):
    qrels, run = files()
    _, out, _ = run_main(capsys, ["eval", qrels, run])
    assert {line.split("\t")[0].strip() for line in out.splitlines()} == {"ndcg"}


def test_the_paper_formulations_take_weights_and_a_base(files, capsys):
    qrels, run = files()
    argv = [
        "eval",
        qrels,
        run,
        "-m",
        "dcg_cut_4",
        "--formulation",
        "2008",
        "--b",
        "4",
        "--weights",
        "0,1,2,3",
    ]
    status, out, _ = run_main(capsys, argv)
    assert status == 0
    # Topic 1 ranks grades 0, unjudged, 3, 2: 3/(1 + log_4 3) + 2/(1 + log_4 4) = 1.6737 + 1 = 2.6737.
    assert out.splitlines()[0].split("\t")[2] == "2.6737"


def test_vectors_are_json_lines_with_the_mean_vector_last(files, capsys):
    qrels, run = files()
    status, out, _ = run_main(capsys, ["eval", qrels, run, "-m", "cg_cut_4", "--vectors"])
    assert status == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0] == {"measure": "cg_cut_4", "topic": "1", "vector": [0.0, 0.0, 3.0, 5.0]}
    assert records[-1]["topic"] == "all"
    assert records[-1]["vector"] == [0.0, 0.5, 2.0, 3.0]


def test_a_qrels_line_with_three_fields_is_refused_with_file_and_line(files, capsys):
    qrels, run = files(qrels=QRELS.replace("1 0 d2 2", "1 d2 2"))
    status, out, err = run_main(capsys, ["eval", qrels, run])
    assert status == 2
    assert out == ""
    assert err.startswith(f"{qrels}:2: expected 4 fields")


@pytest.mark.parametrize(
    "bad_line, reason",
    [
        ("1 Q0 d8 5 tag", "expected at least 6 fields"),
        ("1 Q0 d8 5 high tag", "score 'high' is not a number"),
        ("1 Q0 d1 5 1.0 tag", "document 'd1' is listed twice for topic '1'"),
    ],
)
def test_a_bad_run_line_is_refused_with_file_and_line(files, capsys, bad_line, reason):
    qrels, run = files(run=RUN + bad_line + "\n")
    status, out, err = run_main(capsys, ["eval", qrels, run])
    assert (status, out) == (2, "")
    assert err.startswith(f"{run}:7: {reason}")


def test_a_grade_outside_the_weights_is_refused_with_the_qrels_line(files, capsys):
    qrels, run = files(qrels=QRELS + "2 0 d4 4\n")
    status, out, err = run_main(capsys, ["eval", qrels, run, "--formulation", "2008"])
    assert (status, out) == (2, "")
    assert err.startswith(f"{qrels}:7: grade 4 is outside the weights 0,1,10,100")


@pytest.mark.parametrize(
    "options",
    [
        ["-m", "ndcg_cut_0"],
        ["-m", "precision"],
        ["--formulation", "1999"],
        ["--weights", "a,b"],
        ["--b", "1"],
    ],
)
def test_a_bad_option_exits_2_with_nothing_on_stdout(files, capsys, options):
    qrels, run = files()
    status, out, err = run_main(capsys, ["eval", qrels, run, *options])
    assert (status, out) == (2, "")
    assert err


def test_python_dash_m_scoring_runs_as_a_process(files):
    qrels, run = files()
    done = subprocess.run(
        [sys.executable, "-m", "scoring", "eval", qrels, run, "-m", "ndcg_cut_10"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("ndcg_cut_10           \tall\t")


def test_a_document_judged_twice_counts_once_or_is_refused_if_the_grades_differ(files, capsys):
    qrels, run = files(qrels=QRELS + "1 0 d1 3\n")
    status, same, _ = run_main(capsys, ["eval", qrels, run])
    _, plain, _ = run_main(capsys, ["eval", *files()])
    assert status == 0 and same == plain
    qrels, run = files(qrels=QRELS + "1 0 d1 2\n")
    status, out, err = run_main(capsys, ["eval", qrels, run])
    assert (status, out) == (2, "")
    assert err.startswith(f"{qrels}:7: document 'd1' of topic '1' is judged twice (3 and 2)")
