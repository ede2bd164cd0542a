"""`python -m scoring session --measure NAME ...`: each selected measure in a line's "measures", the default
output unchanged, and bad trail values refused with file:line and nothing on stdout."""

import json
import subprocess
import sys

import pytest

from scoring.lib.session_measures import MEASURES

from .test_session_cli import EXAMPLE, QRELS, ROOT, SHORT, run

WORKED = "T 0 a 2\nT 0 b 1\nT 0 c 3\n"
TIMED = {
    "id": "w",
    "scenario": "T",
    "queries": [
        {"results": ["x", "a"], "start": 0, "opened": [{"rank": 2, "dwell": 30}]},
        {"results": ["c", "b"], "start": 60, "opened": []},
    ],
}


def test_without_measure_the_output_is_what_it_always_was(capsys, tmp_path):
    plain = run(capsys, tmp_path, [EXAMPLE, SHORT], "--top", "5")
    with_options = run(capsys, tmp_path, [EXAMPLE, SHORT], "--top", "5", "--srbp-p", "0.5", "--p-down", "0.2")
    assert plain == with_options and plain[0] == 0
    assert all("measures" not in json.loads(line) for line in plain[1].splitlines())


def test_each_selected_measure_is_printed_per_session_in_the_order_asked(capsys, tmp_path):
    options = [item for name in reversed(MEASURES) for item in ("--measure", name)]
    code, out, err = run(capsys, tmp_path, [EXAMPLE, SHORT], "--top", "5", *options)
    plain = run(capsys, tmp_path, [EXAMPLE, SHORT], "--top", "5")[1]
    assert code == 0 and err == ""
    for line, before in zip(out.splitlines(), plain.splitlines(), strict=True):
        result = json.loads(line)
        assert list(result["measures"]) == list(reversed(MEASURES))
        assert {k: v for k, v in result.items() if k != "measures"} == json.loads(before)
    # The one-query session with its only document relevant and at rank 1: every nDCG form is 1.
    short = json.loads(out.splitlines()[1])["measures"]
    assert short["nsdcg"] == short["ndcg_first"] == short["ndcg_last"] == short["esndcg"] == 1.0


def test_the_worked_example_with_its_trail(capsys, tmp_path):
    code, out, _ = run(
        capsys,
        tmp_path,
        [TIMED],
        "--top",
        "2",
        "--measure",
        "tbg",
        "--measure",
        "u_measure",
        "--measure",
        "nsdcg",
        "--measure",
        "srbp",
        qrels=WORKED,
    )
    values = json.loads(out)["measures"]
    assert code == 0
    assert values["nsdcg"] == pytest.approx(0.5114425, abs=1e-7)
    assert values["srbp"] == pytest.approx(0.2044444, abs=1e-7)
    assert values["tbg"] == pytest.approx(1.2991932, abs=1e-7)
    assert values["u_measure"] == pytest.approx(2 * (1 - 38.8 / 600), abs=1e-12)


def test_the_parameters_reach_the_measures(capsys, tmp_path):
    def value(*options):
        code, out, _ = run(capsys, tmp_path, [TIMED], "--top", "2", *options, qrels=WORKED)
        assert code == 0
        return json.loads(out)["measures"]

    assert value("--measure", "srbp", "--srbp-b", "1", "--srbp-p", "0.5")["srbp"] == pytest.approx(
        0.5 * 0.5 * 2 / 3
    )
    assert value("--measure", "tbg", "--half-life", "1e300")["tbg"] == pytest.approx(3 * 0.64 * 0.77)
    assert value("--measure", "u_measure", "--u-patience", "38.8")["u_measure"] == 0.0
    assert value("--measure", "esndcg", "--p-reformulate", "0", "--p-down", "1")["esndcg"] == pytest.approx(
        3 / 1.5849625007211562 / (7 + 3 / 1.5849625007211562)
    )
    assert value("--measure", "esndcg_mc", "--seed", "1") != value("--measure", "esndcg_mc", "--seed", "2")


def trail_cases():
    def with_query(**keys):
        return {**TIMED, "queries": [{**TIMED["queries"][0], **keys}, TIMED["queries"][1]]}

    return {
        "negative start": (with_query(start=-1), 'query 1: "start" must be a number of seconds >= 0'),
        "start not a number": (with_query(start="9:00"), 'query 1: "start" must be a number'),
        "opened not a list": (with_query(opened={"rank": 1}), 'query 1: "opened" must be a list'),
        "rank past the list": (
            with_query(opened=[{"rank": 3}]),
            'query 1: "opened": rank must be a whole number from 1 to 2',
        ),
        "negative dwell": (
            with_query(opened=[{"rank": 1, "dwell": -2}]),
            'query 1: "opened": dwell must be a number of seconds >= 0',
        ),
    }


@pytest.mark.parametrize("case", trail_cases().keys())
def test_a_bad_trail_exits_2_naming_the_file_line_and_query(capsys, tmp_path, case):
    session, message = trail_cases()[case]
    code, out, err = run(capsys, tmp_path, [EXAMPLE, session], "--measure", "tbg", qrels=WORKED)
    assert (code, out) == (2, "")
    assert f"sessions.jsonl:2: {message}" in err


def test_a_bad_measure_parameter_is_refused(capsys, tmp_path):
    code, out, err = run(capsys, tmp_path, [EXAMPLE], "--measure", "srbp", "--srbp-p", "1")
    assert (code, out) == (2, "") and "srbp_p (sRBP's persistence) must satisfy 0 <= p < 1" in err


def test_python_m_scoring_session_measure_runs(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "sessions.jsonl").write_text(json.dumps(EXAMPLE) + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoring",
            "session",
            "--qrels",
            str(tmp_path / "qrels"),
            "--sessions",
            str(tmp_path / "sessions.jsonl"),
            "--measure",
            "ndcg_mean",
            "--measure",
            "unknown",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 2 and "invalid choice: 'unknown'" in done.stderr and done.stdout == ""
