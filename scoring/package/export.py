"""`study_package_zip`: the package's members written from the study (scoring/lib/package_layout.py names
them). The tidy tables are the tidy CSV's own rows (studies/interchange/tidy_csv.py), raw (no spreadsheet
quote: a package is for analysis), without the panel ids; the event log and the qrels come from the JSON
archive, which the package holds whole; the scores are every finished run's, their floats written in full
(repr), so a re-score can be compared to the last bit."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable
from datetime import UTC, datetime

from scoring.lib import package_layout as layout
from scoring.models import ScoringRun, SessionScore
from studies.interchange.archive import study_archive_json
from studies.interchange.tidy_csv import table_csv, table_rows
from studies.models import Study

RUN_COLUMNS = [
    "study",
    "run",
    "label",
    "is_default",
    "status",
    "weights",
    "b",
    "bq",
    "top",
    "formulation",
    "gain",
    "duplicates",
    "short_lists",
    "scan",
    "scan_min_visible_ms",
    "judgments",
    "reference_version",
    "measures",
    "measure_params",
]
SCORE_COLUMNS = [
    "study",
    "run",
    "participant",
    "position",
    "scenario",
    "system",
    "reference_version",
    "end_reason",
    "n_queries",
    "length",
    "final",
    "ideal_final",
    "normalized_final",
    "last_query",
    "best_query",
    "average",
    "unjudged",
    "measures",
]


def _json(value) -> str:
    if value is None or value == {} or value == []:
        return ""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _cell(value):
    return "" if value is None else value


def _without_panel_ids(rows: list[list]) -> list[list]:
    keep = [i for i, column in enumerate(rows[0]) if column not in layout.PANEL_ID_COLUMNS]
    return [[row[i] for i in keep] for row in rows]


def _event_rows(slug: str, archive: dict) -> list[list]:
    rows: list[list] = [list(layout.EVENT_COLUMNS)]
    for participant in archive["participants"]:
        for event in participant["events"]:
            rows.append(
                [
                    slug,
                    participant["code"],
                    _cell(event["session"]),
                    _cell(event["sequence"]),
                    event["type"],
                    event["client_event_id"],
                    _cell(event["client_time"]),
                    _cell(event["server_time"]),
                    event["origin"],
                    _json(event["payload"]),
                ]
            )
    return rows


def _qrels_rows(slug: str, archive: dict) -> list[list]:
    rows: list[list] = [list(layout.QRELS_COLUMNS)]
    for version in archive["reference_versions"]:
        head = [
            slug,
            version["number"],
            version["note"],
            _cell(version["created_at"]),
            _cell(version["created_by"]),
            _json(version["provenance"]),
        ]
        for judgment in version["judgments"]:
            rows.append(
                head
                + [
                    judgment["topic_id"],
                    judgment["doc"],
                    judgment["grade"],
                    judgment["source"],
                    _cell(judgment["judged_by"]),
                ]
            )
    return rows


def package_runs(study: Study) -> list[ScoringRun]:
    """The study's finished runs in order of creation: the package's run numbers are their 1-based places."""
    return list(
        ScoringRun.objects.filter(study=study, status=ScoringRun.Status.DONE)
        .select_related("reference_version")
        .order_by("created_at", "pk")
    )


def _run_rows(slug: str, runs: list[ScoringRun]) -> list[list]:
    rows: list[list] = [RUN_COLUMNS]
    for number, run in enumerate(runs, 1):
        rows.append(
            [
                slug,
                number,
                run.label,
                int(run.is_default),
                run.status,
                json.dumps(run.weights),
                repr(run.b),
                repr(run.bq),
                run.top,
                run.formulation,
                run.gain,
                run.duplicates,
                run.short_lists,
                run.scan,
                run.scan_min_visible_ms,
                run.judgments,
                run.reference_version.number if run.reference_version is not None else "",
                json.dumps(list(run.measures or [])),
                _json(run.measure_params),
            ]
        )
    return rows


def _score_rows(slug: str, runs: list[ScoringRun]) -> list[list]:
    rows: list[list] = [SCORE_COLUMNS]
    numbers = {run.pk: number for number, run in enumerate(runs, 1)}
    scores = (
        SessionScore.objects.filter(run__in=runs)
        .select_related("participant", "scenario", "system", "session__assignment", "reference_version")
        .order_by(
            "run__created_at", "run_id", "participant__enrolment_index", "session__assignment__position"
        )
    )
    for score in scores:
        rows.append(
            [
                slug,
                numbers[score.run_id],
                score.participant.code,
                score.session.assignment.position,
                score.scenario.code,
                score.system.code,
                score.reference_version.number if score.reference_version is not None else "",
                score.end_reason,
                score.n_queries,
                score.length,
                *(repr(float(getattr(score, name))) for name in SCORE_COLUMNS[10:16]),
                int(score.unjudged),
                _json({k: float(v) for k, v in (score.measures or {}).items()}),
            ]
        )
    return rows


def package_tables(study: Study, archive: dict) -> dict[str, list[list]]:
    """{table: rows, header first} of every table of layout.TABLES."""
    slug = study.slug
    tables = {
        name: _without_panel_ids(list(table_rows(study=study, name=name, panel_ids=False)))
        for name in layout.TIDY_TABLES
    }
    runs = package_runs(study)
    tables["events"] = _event_rows(slug, archive)
    tables["qrels"] = _qrels_rows(slug, archive)
    tables["scoring_runs"] = _run_rows(slug, runs)
    tables["scores"] = _score_rows(slug, runs)
    return tables


def _description(study: Study, tables: dict[str, list[list]]) -> dict:
    variables = []
    seen: set[str] = set()
    for table, rows in tables.items():
        for column in rows[0]:
            if column in seen:
                continue
            seen.add(column)
            variables.append(
                {
                    "@type": "PropertyValue",
                    "name": column,
                    "description": layout.column_description(table, column),
                }
            )
    return {
        "@context": layout.PSYCH_DS_CONTEXT,
        "@type": "Dataset",
        "name": study.name,
        "description": (
            f"SessionLab study {study.slug!r}: an interactive search study's design, sessions, queries, "
            "shown results, judgments, exposures, attention spans, event log, reference judgments (qrels) "
            "with their provenance, scoring runs with their exact parameters and their session scores. "
            "sessionlab-archive.json is the whole study, importable into SessionLab (manage.py "
            "import_package), which re-scores it."
        ),
        "schemaVersion": "Psych-DS 0.1.0",
        "variableMeasured": variables,
    }


def _codebook(tables: dict[str, list[list]]) -> list[list]:
    rows: list[list] = [["table", "column", "description"]]
    for table, table_rows_ in tables.items():
        rows.extend([table, column, layout.column_description(table, column)] for column in table_rows_[0])
    return rows


def _crate(study: Study, members: dict[str, bytes], now: datetime) -> dict:
    formats = {".csv": "text/csv", ".json": "application/json"}
    files = []
    for name, content in members.items():
        about = {
            layout.DESCRIPTION: "Psych-DS dataset description with the codebook (variableMeasured).",
            layout.CODEBOOK: "The codebook: every column of every data file, described.",
            layout.ARCHIVE: "The whole study as SessionLab's JSON archive (docs/file-formats.md).",
        }.get(name)
        table = layout.table_of_file(name)
        files.append(
            {
                "@id": name,
                "@type": "File",
                "name": name.rsplit("/", 1)[-1],
                "description": about or f"The {table} table (one row per observation; codebook.csv).",
                "encodingFormat": formats["." + name.rsplit(".", 1)[-1]],
                "contentSize": str(len(content)),
            }
        )
    return {
        "@context": layout.CRATE_CONTEXT,
        "@graph": [
            {
                "@id": layout.CRATE,
                "@type": "CreativeWork",
                "conformsTo": {"@id": layout.CRATE_SPEC},
                "about": {"@id": "./"},
            },
            {
                "@id": "./",
                "@type": "Dataset",
                "name": study.name,
                "description": f"SessionLab study package of {study.slug!r} (docs/package.md).",
                "datePublished": now.isoformat(),
                "hasPart": [{"@id": name} for name in members],
            },
            *files,
        ],
    }


def study_package_members(*, study: Study, now: datetime | None = None) -> dict[str, bytes]:
    """{member name: content} of the study's package, in the zip's order (never a panel id)."""
    now = now or datetime.now(UTC)
    archive_text = study_archive_json(study=study, panel_ids=False)
    archive = json.loads(archive_text)
    tables = package_tables(study, archive)
    members: dict[str, bytes] = {
        layout.DESCRIPTION: json.dumps(_description(study, tables), indent=2, ensure_ascii=False).encode(),
        layout.CODEBOOK: table_csv(_codebook(tables), raw=True).encode(),
    }
    for name, rows in tables.items():
        members[layout.data_file_name(study.slug, name)] = table_csv(rows, raw=True).encode()
    members[layout.ARCHIVE] = archive_text.encode()
    crate = _crate(study, members, now)
    return {**members, layout.CRATE: json.dumps(crate, indent=2, ensure_ascii=False).encode()}


def zipped(members: Iterable[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members:
            archive.writestr(
                zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), content, zipfile.ZIP_DEFLATED
            )
    return buffer.getvalue()


def study_package_zip(*, study: Study) -> bytes:
    """The study's package as one zip (whole in memory: it holds the JSON archive)."""
    return zipped(study_package_members(study=study).items())
