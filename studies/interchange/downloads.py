"""Exports as single downloads (zips built in memory): the tidy CSV tables and the runs. The study page's
downloads (studies/interchange/views.py) and the API serve the same bytes."""

from __future__ import annotations

import io
import zipfile

from studies.interchange.tidy_csv import study_tables, table_csv
from studies.interchange.trec import study_runs
from studies.models import Study


def _zip(files: dict[str, str]) -> bytes:
    """The files in one zip, byte for byte the same for the same content (no timestamps of the moment)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zipped.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()


def study_csv_zip(*, study: Study, raw: bool = False) -> bytes:
    """sessions.csv, queries.csv, shown_results.csv, judgments.csv… (tidy_csv.study_tables) in one zip."""
    return _zip({f"{name}.csv": table_csv(rows, raw=raw) for name, rows in study_tables(study=study).items()})


def study_runs_zip(*, study: Study, unit: str = "query") -> bytes:
    """One TREC run file per ranking shown (trec.study_runs), in one zip; an ExportError for a bad unit."""
    return _zip({f"{run.name}": run.text for run in study_runs(study=study, unit=unit)})
