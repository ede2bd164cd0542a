"""The real TREC 2012 Session Track log, imported with its qrels and scored through the app (the paper's
setting: formulation 2008, b = 2, bq = 4, the top 10 of every query, padded, duplicates counted every time),
gives every session the numbers `python -m scoring session` gives on the same qrels file and the same ranked
lists, read from the log itself rather than from the database: so the import, the reference version (its -2
grades kept as judged), the scoring service and the library are checked end to end, to 1e-9.

With `scan` "observed" (the paper's ideal, which its log could not record), each query is cut at the deepest
rank of a document the participant clicked in it (the rank it was first shown at), or at 10 without a click,
as the app reads the imported click events.

The track's engine showed a document twice in one list in one query of each of 12 sessions (e.g. session 29,
query 3, ranks 6 and 7). The command's reader refuses such a list, so those 12 sessions are compared with the
functions the command calls (read_qrels, encode_sessions, score_sessions), on the list as shown.
"""

import json
import subprocess
import sys

import numpy as np
import pytest

from scoring import services
from scoring.lib.session import SessionParams, encode_sessions, score_sessions
from scoring.lib.trec_io import read_qrels
from scoring.models import ScoringRun, SessionScore
from studies.interchange.session_track import read_log_file, session_track_import

pytestmark = [pytest.mark.django_db, pytest.mark.needs_data]

# The paper's sharp weighting (0, 1, 10, 100) carried on to the track's grade 4.
WEIGHTS = (0.0, 1.0, 10.0, 100.0, 1000.0)
TOP = 10
# The paper's setting, given alike to the app's run, the command line and its functions.
PAPER = {"b": 2.0, "bq": 4.0, "top": TOP, "formulation": "2008", "short_lists": "pad", "duplicates": "every"}
SUMMARIES = ["final", "normalized_final", "last_query", "best_query", "average"]


def sessions_of(log) -> list[tuple[str, str, list[list[str]], list[list[int]]]]:
    """(participant code, topic, each query's list in rank order, each query's observed scan depth). A rank
    the log skips becomes a document no qrels judge (the app scores a gap as an unjudged cell)."""
    sessions = []
    for session in log.sessions:
        lists, depths = [], []
        for interaction in session.interactions:
            by_rank = {result.rank: result.docid for result in interaction.results}
            ranked = [
                by_rank.get(rank, f"gap-{session.num}-{interaction.num}-{rank}")
                for rank in range(1, max(by_rank, default=0) + 1)
            ]
            clicked = [ranked.index(ranked[click.rank - 1]) + 1 for click in interaction.clicks]
            lists.append(ranked)
            depths.append(max(clicked, default=TOP))
        sessions.append((f"ST{session.num:03d}", session.topic.num, lists, depths))
    return sessions


def shows_a_document_twice(lists) -> bool:
    return any(len(set(ranked)) < len(ranked) for ranked in lists)


def command_line(qrels_path, sessions, scan, tmp_path) -> dict[str, dict]:
    """`python -m scoring session` on the sessions, one JSON object per session."""
    path = tmp_path / "sessions.jsonl"
    records = [
        {
            "id": code,
            "scenario": topic,
            "queries": [
                {"results": ranked, "scanned_to": depth} for ranked, depth in zip(lists, depths, strict=True)
            ],
        }
        for code, topic, lists, depths in sessions
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    options = {**PAPER, "scan": scan, "weights": ",".join(f"{w:g}" for w in WEIGHTS)}
    arguments = [f"--{name.replace('_', '-')}={value}" for name, value in options.items()]
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoring",
            "session",
            "--qrels",
            str(qrels_path),
            "--sessions",
            str(path),
            *arguments,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    return {row["id"]: row for row in map(json.loads, cli.stdout.splitlines())}


def command_line_functions(qrels_path, sessions, scan) -> dict[str, dict]:
    """What score_session_file computes, without its reader's check that a list names a document once."""
    params = SessionParams(weights=WEIGHTS, scan=scan, **PAPER)
    depths = [depths for *_rest, depths in sessions]
    depth = TOP if scan == "fixed" else max(max(per) for per in depths)
    batch = encode_sessions(
        [topic for _code, topic, _lists, _depths in sessions],
        [lists for _code, _topic, lists, _depths in sessions],
        read_qrels(str(qrels_path)),
        depth=depth,
        scanned_to=depths,
    )
    scores = score_sessions(batch, params)
    return {
        code: {
            **{name: float(getattr(scores, name)[s]) for name in SUMMARIES},
            "curve": scores.curve[s].tolist(),
            "ideal": scores.ideal[s].tolist(),
        }
        for s, (code, *_rest) in enumerate(sessions)
    }


@pytest.mark.parametrize("scan", ["fixed", "observed"])
def test_every_session_of_the_2012_log_scores_as_the_command_line_does(
    scan, alice, session_track_2012, tmp_path, django_capture_on_commit_callbacks
):
    log_path, qrels_path = session_track_2012 / "sessiontrack2012.xml", session_track_2012 / "qrels2012.txt"
    imported = session_track_import(path=log_path, qrels_path=qrels_path, owner=alice, name="TREC 2012")
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=imported.study, weights=WEIGHTS, scan=scan, **PAPER)
    run.refresh_from_db()
    assert run.status == ScoringRun.Status.DONE, run.error

    sessions = sessions_of(read_log_file(log_path))
    twice = [session for session in sessions if shows_a_document_twice(session[2])]
    assert len(twice) == 12
    expected = command_line(
        qrels_path, [session for session in sessions if session not in twice], scan, tmp_path
    )
    expected.update(command_line_functions(qrels_path, twice, scan))
    lengths = {
        code: sum(depths) if scan == "observed" else TOP * len(lists) for code, _t, lists, depths in sessions
    }

    app = {
        score.participant.code: score
        for score in SessionScore.objects.filter(run=run).select_related("participant")
    }
    assert len(app) == len(expected) == imported.sessions == 98
    assert app.keys() == expected.keys()
    for code, score in app.items():
        row = expected[code]
        for name in SUMMARIES:
            assert getattr(score, name) == pytest.approx(row[name], rel=1e-9, abs=1e-9), (code, name)
        curve = score.curve_array()
        assert score.length == len(curve) == lengths[code]
        np.testing.assert_allclose(curve, row["curve"][: score.length], rtol=1e-9, atol=1e-9, err_msg=code)
        ideal = np.frombuffer(bytes(score.ideal), dtype=np.float64)
        np.testing.assert_allclose(ideal, row["ideal"][: score.length], rtol=1e-9, atol=1e-9, err_msg=code)
    # Not a comparison of zeros: most sessions found something.
    assert sum(score.final > 0 for score in app.values()) > 60
    if scan == "observed":  # and the clicks did cut lists: not the fixed scores again
        cut = sum(score.length < TOP * score.n_queries for score in app.values())
        assert cut > 50, cut
