"""`study_package_import`: a package's JSON archive imported as a new study (the archive's importer), then
each of its scoring runs created again with the exact parameters the package states (scoring_runs table:
weights, b, bq, top, formulation, gain, duplicates, short lists, scan, the reference version by number, the
measures and their stored parameters) and queued; `package_scores_compared` then checks the new scores
against the package's, to the last bit."""

from __future__ import annotations

import csv
import io
import json
import math
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction

from scoring.lib import package_layout as layout
from scoring.lib.errors import InputError
from scoring.models import ScoringRun, SessionScore
from scoring.services import scoring_run_create
from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import
from studies.models import ReferenceVersion, Study

# The score columns compared (package_scores_compared): every figure a score row holds.
FIGURES = ("final", "ideal_final", "normalized_final", "last_query", "best_query", "average")


@dataclass
class PackageImport:
    study: Study
    runs: dict[int, ScoringRun] = field(default_factory=dict)  # the package's run number -> the new run


def _members(path: str) -> dict[str, zipfile.ZipInfo]:
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        raise ImportFailure(path, None, None, f"not a zip file ({error})") from None
    with archive:
        return {info.filename: info for info in archive.infolist()}


def _read(path: str, name: str, limit: int) -> bytes:
    with zipfile.ZipFile(path) as archive:
        try:
            info = archive.getinfo(name)
        except KeyError:
            raise ImportFailure(path, None, name, "missing from the package") from None
        if info.file_size > limit:
            raise ImportFailure(path, None, name, f"over {limit} bytes")
        with archive.open(info) as handle:
            data = handle.read(limit + 1)  # a member's stated size is the zip's claim
        if len(data) > limit:
            raise ImportFailure(path, None, name, f"over {limit} bytes")
        return data


def package_table(path: str | Path, table: str) -> list[dict[str, str]]:
    """One data table of the package at `path` as rows of {column: text}; ImportFailure when it is missing
    or unreadable."""
    path = str(path)
    names = [name for name in _members(path) if layout.table_of_file(name) == table]
    if len(names) != 1:
        raise ImportFailure(path, None, f"{layout.DATA_DIR}/..._data-{table}_data.csv", "missing or repeated")
    try:
        text = _read(path, names[0], settings.ARCHIVE_MAX_BYTES).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ImportFailure(path, None, names[0], f"not UTF-8 ({error})") from None
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _float(path: str, line: int, name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ImportFailure(path, line, name, f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise ImportFailure(path, line, name, f"not a finite number: {text!r}")
    return value


def _int(path: str, line: int, name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ImportFailure(path, line, name, f"not a whole number: {text!r}") from None


def _json(path: str, line: int, name: str, text: str, default):
    if text == "":
        return default
    try:
        return json.loads(text)
    except ValueError:
        raise ImportFailure(path, line, name, f"not JSON: {text[:80]!r}") from None


def _run_again(path: str, line: int, row: dict[str, str], study: Study, owner) -> ScoringRun:
    """The package's run (one row of scoring_runs) created on the imported study, its reference version the
    one of the same number, its measures' parameters the stored ones."""
    where = "scoring_runs"  # the table; the option is named by the refusal
    try:
        run = scoring_run_create(
            study=study,
            created_by=owner,
            label=row["label"],
            weights=_json(path, line, "weights", row["weights"], None),
            b=_float(path, line, "b", row["b"]),
            bq=_float(path, line, "bq", row["bq"]),
            top=_int(path, line, "top", row["top"]),
            formulation=row["formulation"],
            gain=row["gain"],
            duplicates=row["duplicates"],
            short_lists=row["short_lists"],
            scan=row["scan"],
            scan_min_visible_ms=_int(path, line, "scan_min_visible_ms", row["scan_min_visible_ms"]),
            judgments=row["judgments"],
            measures=_json(path, line, "measures", row["measures"], []),
            make_default=row["is_default"] == "1",
        )
    except (KeyError, ValueError) as error:  # ScoringError is a ValueError: the run's options refused
        raise ImportFailure(path, line, where, str(error)) from None
    updates = {"measure_params": _json(path, line, "measure_params", row["measure_params"], {})}
    if row["reference_version"]:
        number = _int(path, line, "reference_version", row["reference_version"])
        version = ReferenceVersion.objects.filter(study=study, number=number).first()
        if version is None:
            raise ImportFailure(
                path, line, "reference_version", f"no reference version {number} in the archive"
            )
        updates["reference_version"] = version
    ScoringRun.objects.filter(pk=run.pk).update(**updates)  # before its pass runs, on commit
    return run


def study_package_import(*, path: str | Path, owner, name: str | None = None) -> PackageImport:
    """Import the package at `path` as a new study owned by `owner` and score it again with each of the
    package's runs (queued on commit; eager Celery scores them at once). All or nothing: an ImportFailure
    (an InputError) names the member, line and field."""
    path = str(path)
    names = _members(path)
    for required in (layout.ARCHIVE, layout.DESCRIPTION, layout.CRATE):
        if required not in names:
            raise ImportFailure(path, None, required, "missing from the package")
    runs_rows = package_table(path, "scoring_runs")
    with tempfile.NamedTemporaryFile(suffix=".json") as spooled:
        spooled.write(_read(path, layout.ARCHIVE, settings.ARCHIVE_MAX_BYTES))
        spooled.flush()
        with transaction.atomic():
            study = study_archive_import(path=spooled.name, owner=owner, name=name)
            done = PackageImport(study=study)
            for line, row in enumerate(runs_rows, 2):
                try:
                    done.runs[_int(path, line, "run", row["run"])] = _run_again(path, line, row, study, owner)
                except KeyError as error:
                    raise ImportFailure(path, line, str(error), "column missing") from None
    for run in done.runs.values():
        run.refresh_from_db()
    return done


def package_scores_compared(*, path: str | Path, imported: PackageImport) -> list[str]:
    """Every difference between the package's scores and the imported study's new ones (empty: identical to
    the last bit), a line each: a session scored on one side only, or a figure that differs."""
    path = str(path)
    expected: dict[tuple, dict[str, str]] = {}
    for row in package_table(path, "scores"):
        expected[(int(row["run"]), row["participant"], int(row["position"]))] = row
    found: dict[tuple, SessionScore] = {}
    numbers = {run.pk: number for number, run in imported.runs.items()}
    for score in SessionScore.objects.filter(run__in=list(imported.runs.values())).select_related(
        "participant", "session__assignment"
    ):
        found[(numbers[score.run_id], score.participant.code, score.session.assignment.position)] = score
    differences = []
    for key in sorted(set(expected) | set(found)):
        run, participant, position = key
        where = f"run {run}, {participant} task {position}"
        if key not in found or key not in expected:
            differences.append(f"{where}: scored {'in the package' if key in expected else 'here'} only")
            continue
        row, score = expected[key], found[key]
        for figure in FIGURES:
            if float(row[figure]) != float(getattr(score, figure)):
                differences.append(
                    f"{where}: {figure} {row[figure]} in the package, {getattr(score, figure)!r} here"
                )
        measures = {k: float(v) for k, v in (score.measures or {}).items()}
        if _json(path, 0, "measures", row["measures"], {}) != measures:
            differences.append(f"{where}: measures differ")
    return differences


__all__ = ["InputError", "PackageImport", "package_scores_compared", "package_table", "study_package_import"]
