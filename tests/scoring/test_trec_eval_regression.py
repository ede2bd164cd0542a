"""Our eval reproduces trec_eval's own regression outputs and ir_measures' nDCG test, line for line.

Every `ndcg`, `ndcg_<gains>` and `ndcg_cut_*` line of the trec_eval files is checked (`ndcg_rel`, another
measure, is not ours). trec_eval prints 4 decimals, so we compare the printed text.
"""

import re

import pytest

from scoring.lib import metrics
from scoring.lib.cli import main
from scoring.lib.trec_io import read_qrels, read_run

NDCG_LINE = re.compile(r"^(ndcg(?:_cut_\d+|_[0-9=.,]+)?)\s+(\S+)\s+(\S+)$")

CASES = {
    # expected file: (qrels, run, extra eval arguments, -m arguments)
    "out.test.aq": ("qrels.test", "results.test", [], ["ndcg", "ndcg_cut"]),
    "out.test.aql": ("qrels.rel_level", "results.test", [], ["ndcg", "ndcg_cut"]),
    "out.test.aqc": ("qrels.test", "results.trunc", ["-c"], ["ndcg", "ndcg_cut"]),
    "out.test.meas_params": ("qrels.test", "results.test", [], ["ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4"]),
}


def expected_lines(path):
    lines = []
    for raw in path.read_text().splitlines():
        match = NDCG_LINE.match(raw.strip())
        if match:
            lines.append(match.groups())
    return lines


def eval_lines(capsys, argv):
    assert main(argv) == 0
    return [tuple(line.split()) for line in capsys.readouterr().out.splitlines()]


@pytest.mark.needs_data
@pytest.mark.parametrize("expected_name", sorted(CASES))
def test_it_prints_every_ndcg_line_trec_eval_prints(shared_data, capsys, expected_name):
    folder = shared_data / "peer-data" / "trec_eval-test"
    qrels, run, extra, measures = CASES[expected_name]
    expected = expected_lines(folder / expected_name)
    assert len(expected) >= 12
    argv = ["eval", str(folder / qrels), str(folder / run), *extra]
    for measure in measures:
        argv += ["-m", measure]
    got = eval_lines(capsys, argv)
    # trec_eval prints all measures of one topic together, then 'all': the same order as ours.
    assert sorted(got) == sorted(expected)
    assert [line[1] for line in got] == [line[1] for line in expected]


@pytest.mark.needs_data
def test_it_reproduces_ir_measures_ndcg_test(shared_data):
    folder = shared_data / "peer-data" / "ir_measures-test_nDCG"
    ranked = metrics.rank_run(read_qrels(folder / "qrels"), read_run(folder / "run"))
    plain = metrics.ndcg_scores(ranked, [None, 3])
    custom = metrics.ndcg_scores(ranked, [None], gain_map={0: 1, 1: 4})
    # expected.tsv holds the test's 5-digit figures, cut rather than rounded (0.7601875 is written 0.76018).
    rows = [line.split("\t") for line in (folder / "expected.tsv").read_text().splitlines()]
    assert rows[0] == ["qid", "nDCG", "nDCG@3", "nDCG(gains={0:1,1:4})"]
    assert ranked.topics == [row[0] for row in rows[1:]]
    for i, row in enumerate(rows[1:]):
        assert plain[i, 0] == pytest.approx(float(row[1]), abs=1e-5)
        assert plain[i, 1] == pytest.approx(float(row[2]), abs=1e-5)
        assert custom[i, 0] == pytest.approx(float(row[3]), abs=1e-5)


@pytest.mark.needs_data
def test_it_ignores_the_rank_column_and_breaks_ties_by_docid_descending(shared_data):
    folder = shared_data / "peer-data" / "ir_measures-test_nDCG"
    ranked = metrics.rank_run(read_qrels(folder / "qrels"), read_run(folder / "run"))
    # Topic 0 scores D0 .8, D2 .7, D3 .4, D1 .3, D4 .1 whatever the rank column says.
    assert ranked.grades[0, :5].tolist() == [1, 0, 2, -1, 0]
