"""The scores read from a package equal `python -m scoring session` run on the package's own files: its
shown results as the command's sessions, its qrels (the run's reference version) as its qrels, the run's
parameters as its options."""

import json
import subprocess
import sys

import pytest

from scoring.lib.package_reader import read_package

pytestmark = pytest.mark.django_db


def test_the_default_run_s_scores_are_what_the_command_line_computes(package, tmp_path):
    tables = read_package(package)
    run = tables["scoring_runs"].query("is_default == 1").iloc[0]
    assert run["scan"] == "fixed" and run["formulation"] == "2008"
    qrels = tables["qrels"].query("version == @run.reference_version")
    qrels_path = tmp_path / "run.qrels"
    qrels_path.write_text("".join(f"{r.topic} 0 {r.doc} {r.grade}\n" for r in qrels.itertuples()))
    shown = tables["shown_results"].sort_values(["participant", "position", "query", "rank"])
    sessions_path = tmp_path / "sessions.jsonl"
    with open(sessions_path, "w") as handle:
        for (participant, position), rows in shown.groupby(["participant", "position"], sort=True):
            first = rows.iloc[0]
            queries = [{"results": list(q["doc"])} for _, q in rows.groupby("query", sort=True)]
            record = {
                "id": f"{participant}/{position}",
                "participant": participant,
                "system": first["system"],
                "scenario": first["topic"],
                "queries": queries,
            }
            handle.write(json.dumps(record) + "\n")
    weights = ",".join(f"{w:g}" for w in json.loads(run["weights"]))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoring",
            "session",
            "--qrels",
            str(qrels_path),
            "--sessions",
            str(sessions_path),
            "--b",
            str(run["b"]),
            "--bq",
            str(run["bq"]),
            "--top",
            str(run["top"]),
            "--weights",
            weights,
            "--duplicates",
            run["duplicates"],
            "--short-lists",
            run["short_lists"],
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    computed = {}
    for line in out.splitlines():
        row = json.loads(line)
        computed[row["id"]] = row
    scores = tables["scores"].query("run == @run.run")
    assert len(scores) == 2 and len(computed) == 2
    for score in scores.itertuples():
        row = computed[f"{score.participant}/{score.position}"]
        assert (row["final"], row["normalized_final"]) == (score.final, score.normalized_final)
