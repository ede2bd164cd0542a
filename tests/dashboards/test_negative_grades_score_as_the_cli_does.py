"""Negative reference grades are kept as judged, and each formulation applies its own rule when scoring, so a
run of the app and `python -m scoring session` agree on the same raw qrels (kanoulas2011: 2^g - 1, so -2 costs
0.75; the weighted forms: gain 0)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.models import SessionScore
from scoring.services import scoring_run_create
from studies.assessment import references
from studies.models import ReferenceJudgment

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def _raw_qrels(built):
    """The constructed grades, and -2 (spam) or -1 for a third of the documents they left unjudged."""
    grades = {topic: dict(judged) for topic, judged in built.grades.items()}
    for judged in grades.values():
        for i in range(30):
            if f"d{i}" not in judged and i % 3 == 0:
                judged[f"d{i}"] = -2 if i % 2 else -1
    return grades


def _score_in_app(study, formulation, capture):
    with capture(execute=True):
        run = scoring_run_create(study=study, formulation=formulation, make_default=False)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return {row.session_id: row for row in SessionScore.objects.filter(run=run)}


def _score_with_cli(tmp_path, qrels_path, built, formulation):
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text(
        "".join(
            json.dumps(
                {
                    "id": s["id"],
                    "system": s["system"],
                    "scenario": s["topic"],
                    "participant": s["participant"],
                    "queries": [{"results": ranked} for ranked in s["lists"]],
                }
            )
            + "\n"
            for s in built.sessions
        )
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoring",
            "session",
            "--qrels",
            str(qrels_path),
            "--sessions",
            str(sessions),
            "--formulation",
            formulation,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return {line["id"]: line for line in map(json.loads, done.stdout.splitlines())}


@pytest.mark.parametrize("formulation", ["kanoulas2011", "2008"])
def test_a_run_on_raw_qrels_with_negative_grades_equals_the_cli(
    constructed, tmp_path, formulation, django_capture_on_commit_callbacks
):
    grades = _raw_qrels(constructed)
    lines = [
        f"{topic} 0 {doc} {grade}\n" for topic, judged in grades.items() for doc, grade in judged.items()
    ]
    qrels_path = tmp_path / "raw.qrels"
    qrels_path.write_text("".join(lines))
    version = references.reference_version_import_qrels(
        study=constructed.study, lines=lines, path=str(qrels_path), created_by=None
    )
    kept = ReferenceJudgment.objects.filter(version=version, grade__lt=0)
    assert kept.filter(grade=-2).exists() and kept.filter(grade=-1).exists()  # kept as judged, not clipped

    app = _score_in_app(constructed.study, formulation, django_capture_on_commit_callbacks)
    cli = _score_with_cli(tmp_path, qrels_path, constructed, formulation)
    assert set(app) == set(cli) and len(app) == 32
    for session_id, row in app.items():
        for summary in ("final", "normalized_final", "last_query", "best_query", "average"):
            assert getattr(row, summary) == pytest.approx(cli[session_id][summary], abs=1e-9), (
                session_id,
                summary,
            )
        assert row.ideal_final == pytest.approx(cli[session_id]["ideal"][row.length - 1], abs=1e-9)

    if formulation == "kanoulas2011":
        # Clipping -2 and -1 to 0 is not neutral under 2^g - 1: some session's score changes.
        clipped = tmp_path / "clipped.qrels"
        clipped.write_text(
            "".join(f"{t} 0 {d} {max(g, 0)}\n" for t, judged in grades.items() for d, g in judged.items())
        )
        other = _score_with_cli(tmp_path, clipped, constructed, formulation)
        assert any(abs(other[s]["final"] - row.final) > 1e-6 for s, row in app.items())
