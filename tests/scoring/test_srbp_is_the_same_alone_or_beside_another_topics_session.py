"""sRBP's largest grade comes from the scale (the caller's grade_max, or the command's whole qrels file),
never from the topics scored together: a session's sRBP is the same alone or beside another topic's session
(0.24 alone, 0.16 beside another topic's session)."""

import json

import pytest

from scoring.lib.session import encode_sessions
from scoring.lib.session_measures import MeasureParams, score_measures

from .test_session_cli import EXAMPLE, SHORT, run

# Topic U's judgments go to grade 1 only, topic T's to 3: a batch maximum would differ with the company.
QRELS = {"T": {"d1": 3, "d2": 2}, "U": {"e1": 1}}
ALONE = ("U", [["e1", "x"]])
BESIDE = ("T", [["d1", "d2"]])


def srbp(sessions, params):
    batch = encode_sessions([t for t, _ in sessions], [lists for _, lists in sessions], QRELS, depth=2)
    return [float(v) for v in score_measures(batch, ["srbp"], params)["srbp"]]


def test_a_sessions_srbp_does_not_change_beside_another_topics_session():
    params = MeasureParams(k=2, grade_max=3)
    alone = srbp([ALONE], params)[0]
    together = srbp([ALONE, BESIDE], params)[0]
    assert alone == together
    # (1 - p) x 1/3 for a grade 1 at rank 1 on a 0..3 scale, p = 0.8.
    assert alone == pytest.approx(0.2 * 1 / 3, rel=1e-12)


def test_without_the_scales_top_grade_srbp_is_refused_rather_than_guessed_from_the_batch():
    with pytest.raises(ValueError, match="srbp needs grade_max, the top grade of the relevance scale"):
        srbp([ALONE], MeasureParams(k=2))


def test_the_command_takes_the_largest_grade_of_the_whole_qrels_file(capsys, tmp_path):
    def value(sessions, *options):
        code, out, err = run(capsys, tmp_path, sessions, "--top", "5", "--measure", "srbp", *options)
        assert code == 0, err
        return {json.loads(line)["id"]: json.loads(line)["measures"]["srbp"] for line in out.splitlines()}

    alone = value([SHORT])[2]
    assert alone == value([EXAMPLE, SHORT])[2]
    # U's only document is a 1; the qrels file's largest grade is T's 3, so 1/3 of RBP's first-rank weight.
    assert alone == pytest.approx(0.2 * 1 / 3, abs=1e-7)
    assert value([SHORT], "--grade-max", "1")[2] == pytest.approx(0.2, abs=1e-7)
