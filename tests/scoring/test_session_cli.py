"""The `session` subcommand: output shape, and exit 2 with file:line and an empty stdout on bad input."""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.lib.session_cli import add_session_subcommand

ROOT = Path(__file__).resolve().parents[2]
QRELS = "T 0 d1 3\nT 0 d2 2\nT 0 d3 1\nT 0 d4 3\nT 0 d5 0\nT 0 d6 2\nT 0 d7 1\nU 0 e1 1\n"
EXAMPLE = {
    "id": "s1",
    "system": "S1",
    "scenario": "T",
    "participant": "p01",
    "queries": [
        {"text": "first", "results": ["d9", "d5", "d3"]},
        {"text": "second", "results": ["d2", "d8", "d1", "d6", "d3"]},
        {"text": "third", "results": ["d4", "d1", "d7", "d2", "d10"]},
    ],
}
SHORT = {
    "id": 2,
    "system": "S2",
    "scenario": "U",
    "participant": "p02",
    "queries": [{"text": "only", "results": ["e1"], "scanned_to": 1}],
}


def run(capsys, tmp_path, sessions, *options, qrels=QRELS):
    (tmp_path / "qrels").write_text(qrels)
    lines = [line if isinstance(line, str) else json.dumps(line) for line in sessions]
    (tmp_path / "sessions.jsonl").write_text("\n".join(lines) + "\n")
    parser = argparse.ArgumentParser(prog="scoring")
    add_session_subcommand(parser.add_subparsers(required=True))
    args = parser.parse_args(
        [
            "session",
            "--qrels",
            str(tmp_path / "qrels"),
            "--sessions",
            str(tmp_path / "sessions.jsonl"),
            *options,
        ]
    )
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_it_prints_one_json_line_per_session_with_every_summary(capsys, tmp_path):
    code, out, err = run(capsys, tmp_path, [EXAMPLE, SHORT], "--top", "5")
    assert code == 0 and err == ""
    first, second = (json.loads(line) for line in out.splitlines())
    assert set(first) == {
        "id",
        "system",
        "scenario",
        "participant",
        "curve",
        "ideal",
        "normalized",
        "per_query",
        "final",
        "normalized_final",
        "last_query",
        "best_query",
        "average",
    }
    assert (first["id"], first["system"], first["participant"]) == ("s1", "S1", "p01")
    assert len(first["curve"]) == len(first["ideal"]) == len(first["normalized"]) == 15
    assert len(first["per_query"]) == 3
    assert round(first["final"], 4) == 121.0249 and round(first["normalized_final"], 4) == 0.3454
    # The one-query session is held constant up to the longest session's three queries.
    assert second["id"] == 2 and len(second["curve"]) == 15 and len(second["per_query"]) == 1
    assert second["curve"][4:] == [second["final"]] * 11
    assert second["normalized_final"] == 1.0


def test_the_options_reach_the_scoring(capsys, tmp_path):
    code, out, _ = run(capsys, tmp_path, [EXAMPLE], "--top", "5", "--duplicates", "first", "--pad-to", "4")
    result = json.loads(out)
    assert code == 0 and round(result["final"], 4) == 91.0703 and len(result["curve"]) == 20


def test_observed_scanning_cuts_each_list_where_the_participant_stopped(capsys, tmp_path):
    code, out, _ = run(capsys, tmp_path, [SHORT], "--scan", "observed")
    assert code == 0 and json.loads(out)["curve"] == [1.0]


def test_a_scenario_without_relevant_documents_is_reported_and_scores_zero(capsys, tmp_path):
    code, out, err = run(capsys, tmp_path, [EXAMPLE | {"scenario": "nowhere"}])
    assert code == 0 and json.loads(out)["normalized_final"] == 0.0
    assert "scenario 'nowhere' has no relevant document" in err


def bad_input_cases():
    bad_results = {"id": "x", "scenario": "T", "queries": [{"results": ["d1", 7]}]}
    return {
        "json line without queries": (
            [EXAMPLE, {"id": "x", "scenario": "T"}],
            [],
            'sessions.jsonl:2: missing "queries"',
        ),
        "invalid json": ([EXAMPLE, "{not json"], [], "sessions.jsonl:2: invalid JSON"),
        "results not strings": ([bad_results], [], 'sessions.jsonl:1: query 1: "results" must be a list'),
        "empty queries": (
            [{"id": "x", "scenario": "T", "queries": []}],
            [],
            'sessions.jsonl:1: "queries" must be',
        ),
        "repeated id": (
            [EXAMPLE, EXAMPLE],
            [],
            "sessions.jsonl:2: session id 's1' was already used on line 1",
        ),
        "observed without depth": (
            [EXAMPLE],
            ["--scan", "observed"],
            'sessions.jsonl:1: query 1 has no "scanned_to"',
        ),
        "pad-to too short": ([EXAMPLE], ["--pad-to", "2"], "sessions.jsonl:1: the session has 3 queries"),
        "grade outside the weights": (
            [EXAMPLE],
            ["--weights", "0,1,10"],
            "qrels:1: grade 3 of document 'd1'",
        ),
        "bq out of range": ([EXAMPLE], ["--bq", "1000"], "1 < bq < 1000"),
        "bq of one": ([EXAMPLE], ["--bq", "1"], "1 < bq < 1000"),
        "weights not numbers": ([EXAMPLE], ["--weights", "0,a"], "--weights must be numbers"),
    }


@pytest.mark.parametrize("case", bad_input_cases().keys())
def test_bad_input_exits_2_with_file_and_line_and_no_output(capsys, tmp_path, case):
    sessions, options, message = bad_input_cases()[case]
    code, out, err = run(capsys, tmp_path, sessions, *options)
    assert code == 2
    assert out == ""
    assert message in err


def test_a_grade_in_the_qrels_is_found_at_its_line(capsys, tmp_path):
    qrels = QRELS + "T 0 d9 7\n"
    code, out, err = run(capsys, tmp_path, [EXAMPLE], qrels=qrels)
    assert (code, out) == (2, "")
    assert "qrels:9: grade 7 of document 'd9' (topic 'T') has no weight" in err


def test_kanoulas2011_accepts_negative_grades(capsys, tmp_path):
    code, out, _ = run(
        capsys, tmp_path, [EXAMPLE], "--formulation", "kanoulas2011", qrels=QRELS + "T 0 d9 -1\n"
    )
    assert code == 0 and json.loads(out)["curve"][0] == -0.5


def test_a_negative_grade_counts_as_unjudged_as_in_eval(capsys, tmp_path):
    code, out, _ = run(capsys, tmp_path, [EXAMPLE], "--top", "5", qrels=QRELS + "T 0 d9 -2\n")
    assert code == 0 and round(json.loads(out)["final"], 4) == 121.0249


def test_python_m_scoring_session_runs_the_command(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "sessions.jsonl").write_text(
        json.dumps(EXAMPLE) + "\n" + json.dumps({"id": "x", "scenario": "T"})
    )
    command = [sys.executable, "-m", "scoring", "session", "--qrels", str(tmp_path / "qrels"), "--sessions"]
    not_json = subprocess.run(
        [*command, str(tmp_path / "qrels"), "--top", "5"], capture_output=True, text=True, cwd=ROOT
    )
    bad = subprocess.run(
        [*command, str(tmp_path / "sessions.jsonl")], capture_output=True, text=True, cwd=ROOT
    )
    assert not_json.returncode == 2 and ":1: invalid JSON" in not_json.stderr
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr.strip() == f'{tmp_path / "sessions.jsonl"}:2: missing "queries"'
    (tmp_path / "one.jsonl").write_text(json.dumps(EXAMPLE) + "\n")
    ok = subprocess.run(
        [*command, str(tmp_path / "one.jsonl"), "--top", "5"], capture_output=True, text=True, cwd=ROOT
    )
    assert ok.returncode == 0 and round(json.loads(ok.stdout)["normalized_final"], 4) == 0.3454
