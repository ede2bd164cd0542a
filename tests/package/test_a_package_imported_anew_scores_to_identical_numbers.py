"""A study package exported, imported into a fresh study and scored again with the package's own runs:
every session score identical to the package's (and to the original study's), each run on its own
reference version and parameters."""

import pytest
from django.core.management import call_command

from scoring.models import ScoringRun, SessionScore
from scoring.package.importer import package_scores_compared, package_table, study_package_import
from studies.models import Study

pytestmark = pytest.mark.django_db(transaction=False)


def scores_of(study):
    return sorted(
        (
            run.label,
            score.participant.code,
            score.session.assignment.position,
            score.final,
            score.ideal_final,
            score.normalized_final,
            score.last_query,
            score.best_query,
            score.average,
            tuple(sorted(score.measures.items())),
        )
        for run in ScoringRun.objects.filter(study=study)
        for score in SessionScore.objects.filter(run=run).select_related("participant", "session__assignment")
    )


def test_the_imported_study_scores_to_the_same_numbers(
    scored_study, package, alice, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        done = study_package_import(path=package, owner=alice, name="Copy")
    copy = done.study
    assert copy.pk != scored_study.pk
    for run in done.runs.values():
        run.refresh_from_db()
    assert sorted(done.runs) == [1, 2] and all(run.status == "done" for run in done.runs.values())
    assert [done.runs[n].reference_version.number for n in (1, 2)] == [2, 1]
    assert (done.runs[2].b, done.runs[2].bq, done.runs[2].top, done.runs[2].scan) == (3.0, 6.0, 5, "observed")
    assert done.runs[1].is_default and not done.runs[2].is_default
    original = scores_of(scored_study)
    assert len(original) == 4 and any(row[3] > 0 for row in original)  # 2 sessions x 2 runs, not all zero
    assert scores_of(copy) == original
    assert package_scores_compared(path=package, imported=done) == []


def test_a_changed_score_in_the_package_is_a_difference(
    package, alice, django_capture_on_commit_callbacks, tmp_path
):
    import zipfile

    altered = tmp_path / "altered.zip"
    with zipfile.ZipFile(package) as source, zipfile.ZipFile(altered, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if "_data-scores_" in info.filename:
                lines = data.decode().splitlines(keepends=True)
                cells = lines[1].split(",")
                cells[10] = repr(float(cells[10]) + 1e-12)  # final, one part in a trillion off
                lines[1] = ",".join(cells)
                data = "".join(lines).encode()
            target.writestr(info, data)
    with django_capture_on_commit_callbacks(execute=True):
        done = study_package_import(path=altered, owner=alice)
    differences = package_scores_compared(path=altered, imported=done)
    assert len(differences) == 1 and "final" in differences[0]


@pytest.mark.django_db(transaction=True)  # the command's runs are queued on its own commit
def test_the_commands_round_trip_and_say_so(
    scored_study, alice, tmp_path, capsys, django_capture_on_commit_callbacks
):
    path = tmp_path / "p.zip"
    call_command("export_package", scored_study.slug, "-o", str(path))
    assert [row["label"] for row in package_table(path, "scoring_runs")] == ["the paper's", "steeper"]
    call_command("import_package", str(path), "--owner", "alice", "--name", "Again")
    out = capsys.readouterr().out
    assert "2 scoring runs" in out and "the scores are identical to the package's" in out
    assert Study.objects.filter(name="Again").exists()
