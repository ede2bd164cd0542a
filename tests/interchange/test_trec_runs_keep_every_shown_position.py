"""A TREC run keeps every position that was shown: a document shown again in the same list is written
`<docid>#<k>`, and the qrels of `export_qrels --repeats` give it its document's grade, so trec_eval
(pytrec_eval, its C code) scores the list the participant saw. Before, the repeat was dropped and the
documents after it moved up: 2012 session 90, query 2 scored 0.4938 in trec_eval against the app's 0.4912."""

import numpy as np
import pytest
import pytrec_eval
from django.core.management import call_command

from scoring.lib import metrics
from scoring.lib.trec_io import read_qrels
from studies.assessment.references import reference_version_import_qrels
from studies.interchange.session_track import read_log_file, session_track_import
from studies.interchange.trec import study_qrels, study_runs

pytestmark = pytest.mark.django_db


def ndcg_10(qrels_path, run_path) -> float:
    with open(qrels_path) as q, open(run_path) as r:
        qrels, run = pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    (score,) = scores.values()
    return score["ndcg_cut_10"]


def app_ndcg_10(judged: dict[str, int], shown: list[str]) -> float:
    """The app's nDCG@10 of a list as shown (scoring.lib): every showing gains its grade, the ideal is the
    topic's judged documents, trec_eval's gains and log2 discount."""
    gains = np.array([[max(judged.get(doc, 0), 0) for doc in shown]], dtype=float)
    ideal = metrics.ideal_gains(np.array([list(judged.values())], dtype=float))
    return float(
        metrics.normalized(metrics.dcg_at(gains, [10], "log2"), metrics.dcg_at(ideal, [10], "log2"))[0, 0]
    )


@pytest.fixture
def exported_2012(alice, session_track_2012, tmp_path):
    summary = session_track_import(
        path=session_track_2012 / "sessiontrack2012.xml",
        qrels_path=session_track_2012 / "qrels2012.txt",
        owner=alice,
        name="TREC 2012",
    )
    call_command("export_run", summary.study.slug, "-o", str(tmp_path / "runs"))
    call_command("export_run", summary.study.slug, "-o", str(tmp_path / "first"), "--repeats", "first")
    call_command(
        "export_qrels", summary.study.slug, "--repeats", "query", "-o", str(tmp_path / "repeats.qrels")
    )
    return summary.study, tmp_path


@pytest.mark.needs_data
def test_session_90_scores_in_trec_eval_as_the_app_says(exported_2012):
    _study, out = exported_2012
    run = out / "runs" / "ST090_1_T46_ST_q2.run"
    lines = [line.split() for line in run.read_text().splitlines()]
    assert len(lines) == 10  # every position shown, ranks 7 and 8 the same document
    assert lines[6][2] + "#2" == lines[7][2] == "clueweb09-en0102-31-11182#2"
    assert round(ndcg_10(out / "repeats.qrels", run), 4) == 0.4912
    assert round(ndcg_10(out / "repeats.qrels", out / "first" / run.name), 4) == 0.4938  # the list nobody saw
    assert round(ndcg_10(out / "repeats.qrels", out / "runs" / "ST091_1_T46_ST_q4.run"), 4) == 0.4972


@pytest.mark.needs_data
def test_every_query_of_the_2012_log_scores_in_trec_eval_as_in_the_app(exported_2012, session_track_2012):
    _study, out = exported_2012
    judged = read_qrels(session_track_2012 / "qrels2012.txt")
    compared, empty = 0, 0
    for session in read_log_file(session_track_2012 / "sessiontrack2012.xml").sessions:
        for position, interaction in enumerate(session.interactions, start=1):
            run = out / "runs" / f"ST{session.num:03d}_1_T{session.topic.num}_ST_q{position}.run"
            if not interaction.results:
                assert not run.exists()
                empty += 1
                continue
            shown = [result.docid for result in interaction.results]
            ours = app_ndcg_10(judged[session.topic.num], shown)
            assert ndcg_10(out / "repeats.qrels", run) == pytest.approx(ours, abs=1e-6), run.name
            compared += 1
    assert (compared, empty) == (191, 8)  # 199 interactions, 8 of which showed nothing


def test_a_session_run_writes_each_showing_and_the_qrels_map_it_back(worked_study, alice):
    lines = [f"{topic} 0 d{n} {(n + int(topic)) % 4}" for topic in "1234" for n in range(1, 9)]
    reference_version_import_qrels(study=worked_study, lines=lines, path="team.qrels", created_by=alice)
    session = worked_study.participants.get(code="P001").assignments.get(position=1).session
    shown = [
        doc
        for query in session.queries.order_by("position")
        for doc in query.shown_results.order_by("rank").values_list("document__external_id", flat=True)
    ]
    run = study_runs(study=worked_study, unit="session")[0]
    written = [line.split()[2] for line in run.text.splitlines()]
    assert len(written) == len(shown) == 8
    assert [doc.split("#")[0] for doc in written] == shown
    assert sum("#2" in doc for doc in written) == 3
    _version, qrels = study_qrels(study=worked_study, repeats="session")
    grades = {(t, d): int(g) for t, _z, d, g in (line.split() for line in qrels.splitlines())}
    topic = session.assignment.scenario.topic_id
    for doc in written:
        assert grades[(topic, doc)] == grades[(topic, doc.split("#")[0])]
    _version, plain = study_qrels(study=worked_study)
    assert "#" not in plain and len(plain.splitlines()) == 32
    assert len(qrels.splitlines()) == 32 + len(
        {
            (r.topic, d)
            for r in study_runs(study=worked_study, unit="session")
            for d in (line.split()[2] for line in r.text.splitlines())
            if "#" in d
        }
    )
