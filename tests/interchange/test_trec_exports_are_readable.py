"""Qrels and runs written by SessionLab are read by our own reader, by `python -m scoring eval` and by
trec_eval's C code (pytrec_eval)."""

import subprocess
import sys

import pytest
import pytrec_eval
from django.core.management import call_command

from scoring.lib.trec_io import read_qrels, read_run
from studies.assessment.references import reference_version_import_qrels
from studies.interchange.trec import study_runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged_study(worked_study, alice):
    lines = [f"{topic} 0 d{n} {(n + int(topic)) % 4}" for topic in "1234" for n in range(1, 9)]
    reference_version_import_qrels(study=worked_study, lines=lines, path="team.qrels", created_by=alice)
    return worked_study


def test_qrels_export_is_read_back_exactly(judged_study, tmp_path):
    path = tmp_path / "study.qrels"
    call_command("export_qrels", judged_study.slug, "-o", str(path))
    qrels = read_qrels(path)
    assert sorted(qrels) == ["1", "2", "3", "4"]
    assert qrels["2"]["d3"] == (3 + 2) % 4
    with open(path) as handle:
        assert pytrec_eval.parse_qrel(handle)["1"]["d1"] == 2


def test_one_run_per_query_topic_is_the_scenario_tag_the_system(judged_study, tmp_path):
    call_command("export_run", judged_study.slug, "-o", str(tmp_path / "runs"))
    files = sorted((tmp_path / "runs").iterdir())
    assert len(files) == 4  # P001 worked two sessions of two queries
    runs = study_runs(study=judged_study)
    first = runs[0]
    session = judged_study.participants.get(code="P001").assignments.get(position=1)
    assert first.name == f"P001_1_{session.scenario.code}_{session.system.code}_q1.run"
    lines = [line.split() for line in first.text.splitlines()]
    assert {line[0] for line in lines} == {session.scenario.topic_id}
    assert {line[5] for line in lines} == {session.system.code}
    shown = list(
        session.session.queries.get(position=1)
        .shown_results.order_by("rank")
        .values_list("document__external_id", flat=True)
    )
    run = read_run(tmp_path / "runs" / first.name)[session.scenario.topic_id]
    assert sorted(run, key=run.get, reverse=True) == shown  # score order is the order shown
    with open(tmp_path / "runs" / first.name) as handle:
        assert set(pytrec_eval.parse_run(handle)[session.scenario.topic_id]) == set(shown)


def test_scoring_eval_reads_the_exported_files(judged_study, tmp_path):
    call_command("export_qrels", judged_study.slug, "-o", str(tmp_path / "q"))
    call_command("export_run", judged_study.slug, "-o", str(tmp_path / "runs"), "--unit", "session")
    runs = sorted((tmp_path / "runs").iterdir())
    assert len(runs) == 2
    for run in runs:
        result = subprocess.run(
            [sys.executable, "-m", "scoring", "eval", str(tmp_path / "q"), str(run), "-m", "ndcg_cut_10"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert result.stdout.splitlines()[-1].split()[:2] == ["ndcg_cut_10", "all"]
        evaluator = pytrec_eval.RelevanceEvaluator(
            pytrec_eval.parse_qrel(open(tmp_path / "q")), {"ndcg_cut_10"}
        )
        ours = float(result.stdout.splitlines()[-1].split()[2])
        theirs = list(evaluator.evaluate(pytrec_eval.parse_run(open(run))).values())[0]["ndcg_cut_10"]
        assert ours == pytest.approx(theirs, abs=1e-4)


def test_a_session_run_with_repeats_first_lists_each_document_once_in_the_order_met(judged_study):
    runs = study_runs(study=judged_study, unit="session", repeats="first")
    session = judged_study.participants.get(code="P001").assignments.get(position=1).session
    met = []
    for query in session.queries.order_by("position"):
        for doc in query.shown_results.order_by("rank").values_list("document__external_id", flat=True):
            if doc not in met:
                met.append(doc)
    assert [line.split()[2] for line in runs[0].text.splitlines()] == met
