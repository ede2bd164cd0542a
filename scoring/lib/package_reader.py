"""`read_package(path)`: a study package (docs/package.md) or a study's JSON archive as pandas DataFrames, one
per table. Pure: pandas and the standard library, no Django; usable in a notebook on a downloaded file.

    >>> from scoring.lib.package_reader import read_package
    >>> tables = read_package("alices-study-package.zip")
    >>> tables["scores"].groupby("system")["normalized_final"].mean()
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pandas as pd

from scoring.lib import package_layout as layout
from scoring.lib.errors import InputError

# The design columns first on every session-level row (the tidy CSV's DESIGN).
DESIGN = list(layout.DESIGN)
# What the JSON archive holds of each table (the package's, and the tidy CSV's, column names): the columns
# derived from other tables (counts, effort flags, active time) are the package's and the tidy CSV's only.
ARCHIVE_COLUMNS = {
    "sessions": [*DESIGN, "started_at", "ended_at", "end_reason"],
    "queries": [
        *DESIGN,
        "query",
        "text",
        "issued_at",
        "scan_mark_rank",
        "system_message",
        "first_key_ms",
        "formulation_ms",
    ],
    "shown_results": [*DESIGN, "query", "rank", "page", "doc", "shown_at"],
    "judgments": [*DESIGN, "doc", "grade", "first_grade", "changes", "created_at", "updated_at"],
    "exposures": [
        *DESIGN,
        "query",
        "page",
        "rank",
        "doc",
        "first_visible_ms",
        "last_visible_ms",
        "visible_ms",
        "max_visible_permille",
        "hover_ms",
        "hovers",
        "read_permille",
        "page_scroll_permille",
    ],
    "attention": [*DESIGN, "kind", "start_ms", "duration_ms"],
    "events": list(layout.EVENT_COLUMNS),
    "qrels": list(layout.QRELS_COLUMNS),
}
# ShownResult.exposure's figures in the archive, by the exposures table's column names.
EXPOSURE_FIGURES = {
    "first_visible_ms": "first_visible_ms",
    "last_visible_ms": "last_visible_ms",
    "visible_ms": "visible_ms",
    "max_visible_permille": "max_permille",
    "hover_ms": "hover_ms",
    "hovers": "hovers",
    "read_permille": "read_permille",
}


# Read as text whatever they look like: codes, ids and names ("007" stays "007", formulation "2008" a name).
TEXT_COLUMNS = ("study", "participant", "scenario", "topic", "system", "doc", "formulation")


class PackageReadError(InputError):
    """A file that is neither a package (zip or folder) nor a JSON archive, or lacks a table."""


def _frame(text: str) -> pd.DataFrame:
    # Cells stay as written where text (codes, ids: "007" stays "007"); numbers are read as numbers.
    return pd.read_csv(
        io.StringIO(text),
        dtype={name: str for name in TEXT_COLUMNS},
    )


def _package_frames(files: dict[str, str]) -> dict[str, pd.DataFrame]:
    frames = {}
    for name, text in files.items():
        table = layout.table_of_file(name)
        if table is not None and name.startswith(layout.DATA_DIR + "/"):
            frames[table] = _frame(text)
    return frames


def _zip_texts(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as zipped:
        return {
            name: zipped.read(name).decode("utf-8")
            for name in zipped.namelist()
            if name.startswith(layout.DATA_DIR + "/") and name.endswith(".csv")
        }


def _json_cell(value) -> str:
    if value is None or value == {} or value == []:
        return ""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _session_rows(rows: dict[str, list[list]], key: list, session: dict) -> None:
    """A session's rows of each session-level table, after its design columns `key`."""
    rows["sessions"].append(key + [session["started_at"], session["ended_at"], session["end_reason"]])
    for query in session["queries"]:
        position = query["position"]
        rows["queries"].append(
            key
            + [position, query["text"], query["issued_at"], query["scan_mark_rank"], query["system_message"]]
            + [query["first_key_ms"], query["formulation_ms"]]
        )
        scrolls = {p["page"]: p["scroll_permille"] for p in query["page_exposures"]}
        for shown in query["shown_results"]:
            rows["shown_results"].append(
                key + [position, shown["rank"], shown["page"], shown["doc"], shown["shown_at"]]
            )
            exposure = shown["exposure"]
            if exposure is not None:
                rows["exposures"].append(
                    key
                    + [position, shown["page"], shown["rank"], shown["doc"]]
                    + [exposure.get(figure) for figure in EXPOSURE_FIGURES.values()]
                    + [scrolls.get(shown["page"])]
                )
    for judgment in sorted(session["judgments"], key=lambda j: j["created_at"]):
        history = judgment["history"]
        first = history[0]["grade"] if history else judgment["grade"]
        rows["judgments"].append(
            key
            + [judgment["doc"], judgment["grade"], first, max(len(history) - 1, 0)]
            + [judgment["created_at"], judgment["updated_at"]]
        )
    for kind, start_ms, duration_ms in session["attention_spans"]:
        rows["attention"].append(key + [kind, start_ms, duration_ms])


def _archive_frames(archive: dict) -> dict[str, pd.DataFrame]:
    slug = archive["study"]["slug"]
    scenarios = {s["code"]: s for s in archive["scenarios"]}
    rows: dict[str, list[list]] = {name: [] for name in ARCHIVE_COLUMNS}
    for participant in archive["participants"]:
        code = participant["code"]
        for assignment in participant["assignments"]:
            if assignment["session"] is None:
                continue
            scenario = scenarios[assignment["scenario"]]
            key = [slug, code, assignment["position"], scenario["code"], scenario["topic_id"]]
            key += [assignment["system"], int(assignment["retake_of"] is not None)]
            key += [int(bool(scenario["practice"]))]
            _session_rows(rows, key, assignment["session"])
        for event in participant["events"]:
            rows["events"].append(
                [slug, code, event["session"], event["sequence"], event["type"], event["client_event_id"]]
                + [event["client_time"], event["server_time"], event["origin"], _json_cell(event["payload"])]
            )
    for version in archive["reference_versions"]:
        head = [slug, version["number"], version["note"], version["created_at"], version["created_by"]]
        head += [_json_cell(version["provenance"])]
        for judgment in version["judgments"]:
            rows["qrels"].append(
                head
                + [judgment["topic_id"], judgment["doc"], judgment["grade"], judgment["source"]]
                + [judgment["judged_by"]]
            )
    # Through CSV, so an archive's frames take the same dtypes as a package's (missing values empty).
    frames = {}
    for name, columns in ARCHIVE_COLUMNS.items():
        buffer = io.StringIO()
        pd.DataFrame(rows[name], columns=columns).to_csv(buffer, index=False)
        frames[name] = _frame(buffer.getvalue())
    return frames


def read_package(path: str | Path) -> dict[str, pd.DataFrame]:
    """{table: DataFrame} of the package at `path` (a zip from export_package, or its unzipped folder):
    participants, sessions, queries, shown_results, judgments, exposures, attention, events, qrels,
    scoring_runs and scores, their columns as in the codebook (codebook.csv). Or of a JSON archive (a
    `.json` file from export_study): the tables it holds (ARCHIVE_COLUMNS: every table but participants,
    scoring_runs and scores, and only the columns stored in it, not those derived). Codes and document ids
    are read as text, times as ISO 8601 text, empty cells as missing values. PackageReadError (an
    InputError naming the file) when the file is none of these."""
    path = Path(path)
    try:
        if path.is_dir():
            frames = _package_frames(
                {
                    str(file.relative_to(path)): file.read_text(encoding="utf-8")
                    for file in (path / layout.DATA_DIR).glob("*.csv")
                }
            )
        elif zipfile.is_zipfile(path):
            frames = _package_frames(_zip_texts(path))
        else:
            with open(path, encoding="utf-8") as handle:
                archive = json.load(handle)
            if not isinstance(archive, dict) or "participants" not in archive or "study" not in archive:
                raise PackageReadError(str(path), None, "not a SessionLab package or JSON archive")
            return _archive_frames(archive)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        if isinstance(error, PackageReadError):
            raise
        raise PackageReadError(str(path), None, f"cannot be read as a package or archive ({error})") from None
    if not frames:
        raise PackageReadError(str(path), None, "holds no data/ table")
    return frames
