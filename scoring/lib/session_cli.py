"""`python -m scoring session`: score session logs (JSONL) against TREC qrels with session DCG.

scoring/cli.py registers it with `add_session_subcommand(subparsers)`. Output: one JSON line per session.
Bad input prints "file:line: reason" on stderr and exits 2 with nothing on stdout: every input is read and
checked before the first line is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import numpy as np

try:
    import orjson
except ImportError:  # the output is the same, written by the standard library alone
    orjson = None  # type: ignore[assignment]  # the module or None: checked before each use

from .errors import InputError
from .session import (
    DUPLICATES,
    FORMULATIONS,
    SCANS,
    SHORT_LISTS,
    SessionParams,
    encode_sessions,
    score_sessions,
)
from .session_io import SessionRecord, gc_paused, read_sessions
from .session_measures import MEASURES, TIME_MEASURES, MeasureParams, TrailQuery, score_measures
from .trec_io import Qrels, read_qrels

EXIT_BAD_INPUT = 2


def add_session_subcommand(subparsers) -> argparse.ArgumentParser:
    defaults = SessionParams()
    parser = subparsers.add_parser(
        "session",
        help="score multi-query sessions with session DCG (sDCG, ECIR 2008)",
        description="Score each session of a JSONL log against TREC qrels; one JSON line per session. "
        "See docs/scoring-sessions.md.",
    )
    parser.add_argument("--qrels", required=True, help="TREC qrels: topic iteration docid grade")
    parser.add_argument("--sessions", required=True, help="sessions, one JSON object a line")
    parser.add_argument("--b", type=float, default=defaults.b, help="rank log base (default %(default)s)")
    parser.add_argument(
        "--bq", type=float, default=defaults.bq, help="query log base, 1 < bq < 1000 (default %(default)s)"
    )
    parser.add_argument(
        "--top", type=int, default=defaults.top, help="scanning length X per query (default %(default)s)"
    )
    parser.add_argument(
        "--weights",
        default=",".join(f"{w:g}" for w in defaults.weights),
        help="gain of grades 0, 1, ... (default %(default)s; ignored by kanoulas2011)",
    )
    parser.add_argument("--duplicates", choices=DUPLICATES, default=defaults.duplicates)
    parser.add_argument("--short-lists", choices=SHORT_LISTS, default=defaults.short_lists)
    parser.add_argument("--formulation", choices=FORMULATIONS, default=defaults.formulation)
    parser.add_argument(
        "--pad-to", type=int, default=None, help="hold curves to N queries (default: longest session)"
    )
    parser.add_argument("--scan", choices=SCANS, default=defaults.scan)
    _add_measure_arguments(parser)
    parser.set_defaults(func=run_session)
    return parser


def _add_measure_arguments(parser: argparse.ArgumentParser) -> None:
    """The other session measures (scoring/lib/session_measures.py); they use --top as k and --b, --bq."""
    m = MeasureParams()
    group = parser.add_argument_group("other session measures (docs/scoring-sessions.md)")
    group.add_argument(
        "--measure",
        action="append",
        choices=MEASURES,
        default=[],
        metavar="NAME",
        help='add a measure to each line\'s "measures" (repeatable): ' + ", ".join(MEASURES),
    )
    group.add_argument(
        "--p-reformulate", type=float, default=m.p_reformulate, help="esNDCG (default %(default)s)"
    )
    group.add_argument("--p-down", type=float, default=m.p_down, help="esNDCG (default %(default)s)")
    group.add_argument(
        "--mc-paths", type=int, default=m.mc_paths, help="esndcg_mc paths (default %(default)s)"
    )
    group.add_argument("--seed", type=int, default=m.seed, help="esndcg_mc random seed (default %(default)s)")
    group.add_argument(
        "--srbp-p", type=float, default=m.srbp_p, help="sRBP persistence (default %(default)s)"
    )
    group.add_argument("--srbp-b", type=float, default=m.srbp_b, help="sRBP balance (default %(default)s)")
    group.add_argument(
        "--grade-max",
        type=int,
        default=None,
        help="sRBP: the top grade of the scale (default: the largest grade in the whole qrels file)",
    )
    group.add_argument(
        "--half-life", type=float, default=m.half_life, help="TBG, seconds (default %(default)s)"
    )
    group.add_argument(
        "--u-patience", type=float, default=m.u_patience, help="U-measure's L, seconds (default %(default)s)"
    )
    group.add_argument(
        "--document-words",
        type=int,
        default=m.document_words,
        help="TBG/U: words of a document whose dwell is unknown (default %(default)s)",
    )


def _with_grade_max(measure_params: MeasureParams, qrels) -> MeasureParams:
    """sRBP's top grade when --grade-max is not given: the largest grade of the whole qrels file (at least
    1), never of the scenarios this sessions file happens to hold, so a session's sRBP does not depend on
    which other sessions are scored with it."""
    if measure_params.grade_max is not None:
        return measure_params
    top = max((grade for judged in qrels.values() for grade in judged.values()), default=1)
    return dataclasses.replace(measure_params, grade_max=max(int(top), 1))


def _measure_params(args: argparse.Namespace) -> MeasureParams:
    return MeasureParams(
        k=args.top,
        b=args.b,
        bq=args.bq,
        p_reformulate=args.p_reformulate,
        p_down=args.p_down,
        mc_paths=args.mc_paths,
        seed=args.seed,
        srbp_p=args.srbp_p,
        srbp_b=args.srbp_b,
        grade_max=args.grade_max,
        half_life=args.half_life,
        u_patience=args.u_patience,
        document_words=args.document_words,
    )


def run_session(args: argparse.Namespace) -> int:
    measures = tuple(dict.fromkeys(getattr(args, "measure", None) or ()))
    try:
        params = _params(args)
        measure_params = _measure_params(args) if measures else None
    except ValueError as exc:
        print(f"session: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        lines, warnings = score_session_file(args.qrels, args.sessions, params, measures, measure_params)
    except InputError as exc:
        print(exc, file=sys.stderr)
        return EXIT_BAD_INPUT
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


def score_session_file(
    qrels_path: str,
    sessions_path: str,
    params: SessionParams,
    measures: tuple[str, ...] = (),
    measure_params: MeasureParams | None = None,
) -> tuple[list[str], list[str]]:
    """Read, check and score both files; return the output JSON lines and the warnings. Each selected measure
    is added to a line's "measures" object; with none, the lines are as they always were."""
    with gc_paused():  # millions of lists and records, none in a cycle (session_io.gc_paused)
        return _score_session_file(qrels_path, sessions_path, params, measures, measure_params)


def _score_session_file(qrels_path, sessions_path, params, measures, measure_params):
    qrels = read_qrels(qrels_path)
    records = read_sessions(sessions_path)
    if not records:
        return [], []
    _check(records, qrels, params, qrels_path, sessions_path)
    topics = [record.scenario for record in records]
    results = [[query.results for query in record.queries] for record in records]
    scanned = [[query.scanned_to for query in record.queries] for record in records]
    depth = params.top if params.scan == "fixed" else max(max(max(per) for per in scanned), 1)
    trails = None
    if any(name in TIME_MEASURES for name in measures):
        trails = read_trails(sessions_path, records)
        # The time measures follow each list down to its examined depth, which may pass the top X.
        deepest = [q.depth or 0 for trail in trails for q in trail] + [
            r for t in trails for q in t for r in q.opened or ()
        ]
        depth = max(depth, *deepest)
    batch = encode_sessions(topics, results, qrels, depth=depth, scanned_to=scanned)
    scores = score_sessions(batch, params)
    if "srbp" in measures:
        measure_params = _with_grade_max(measure_params or MeasureParams(k=params.top), qrels)
    extra = score_measures(batch, measures, measure_params, trails=trails) if measures else {}

    empty = sorted({topics[s] for s in np.flatnonzero(scores.ideal_final == 0)})
    warnings = [
        f"scenario {topic!r} has no relevant document in {qrels_path}: its normalized values are 0"
        for topic in empty
    ]
    per_query = float_runs(scores.per_query, scores.query_counts)
    curve, ideal, normalized = (
        float_rows(matrix) for matrix in (scores.curve, scores.ideal, scores.normalized)
    )
    lines = []
    for s, record in enumerate(records):
        # json.dumps of the whole line, written in pieces: the arrays (nearly all of the line) by float_rows.
        head = json.dumps(
            {
                "id": record.id,
                "system": record.system,
                "scenario": record.scenario,
                "participant": record.participant,
            }
        )
        tail = json.dumps(
            {
                "final": float(scores.final[s]),
                "normalized_final": float(scores.normalized_final[s]),
                "last_query": float(scores.last_query[s]),
                "best_query": float(scores.best_query[s]),
                "average": float(scores.average[s]),
                **(
                    {"measures": {name: float(values[s]) for name, values in extra.items()}}
                    if measures
                    else {}
                ),
            }
        )
        lines.append(
            f'{head[:-1]}, "curve": {curve[s]}, "ideal": {ideal[s]}, "normalized": {normalized[s]}, '
            f'"per_query": {per_query[s]}, {tail[1:]}'
        )
    return lines, warnings


# orjson writes a float with the same shortest round-trip digits as Python's repr, which json.dumps uses, and
# in the same notation from 1e-4 up (checked on 7 million values across 1e-4..1e17, tests/scoring/
# test_session_output_fast.py); below 1e-4 it writes 0.00001 where repr writes 1e-05, and NaN as null. A row
# holding such a value is written by json.dumps, so every line is the bytes json.dumps writes.
_REPR_FROM = 1e-4


def _orjson_safe(values: np.ndarray) -> np.ndarray:
    """True where orjson writes the value as json.dumps does."""
    return np.isfinite(values) & ((np.abs(values) >= _REPR_FROM) | (values == 0))


def float_rows(matrix: np.ndarray) -> list[str]:
    """Each row of a 2-D float array as `json.dumps(row.tolist())` writes it (the same bytes), several times
    faster with orjson: the whole matrix in one call, split into rows, with json.dumps's ", " separator."""
    if orjson is None or matrix.size == 0:
        return [json.dumps(row) for row in matrix.tolist()]
    matrix = np.ascontiguousarray(matrix, dtype=np.float64)
    text = orjson.dumps(matrix, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    rows = [f"[{row}]" for row in text[2:-2].replace(",", ", ").split("], [")]
    for s in np.flatnonzero(~_orjson_safe(matrix).all(axis=1)):
        rows[s] = json.dumps(matrix[s].tolist())
    return rows


def float_runs(values: np.ndarray, counts: np.ndarray) -> list[str]:
    """Consecutive runs of a 1-D float array, counts[i] values each, each as `json.dumps(run.tolist())`
    writes it."""
    ends = np.cumsum(counts).tolist()
    if orjson is None or values.size == 0:
        return [json.dumps(run.tolist()) for run in np.split(values, ends[:-1])]
    values = np.ascontiguousarray(values, dtype=np.float64)
    texts = orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY).decode()[1:-1].split(",")
    for i in np.flatnonzero(~_orjson_safe(values)).tolist():
        texts[i] = json.dumps(float(values[i]))
    return [f"[{', '.join(texts[start:end])}]" for start, end in zip([0, *ends[:-1]], ends, strict=True)]


def read_trails(path: str, records: list[SessionRecord]) -> list[list[TrailQuery]]:
    """Each session's trail for the time measures, from the optional query keys "start" (seconds from the
    session's start), "opened" ([{"rank": r, "dwell": seconds or null}, ...]: the documents opened from the
    list; without it, clicks were not recorded) and "scanned_to" (the examined depth). The file was read and
    checked by read_sessions already; this reads those keys again, naming file:line on a bad value."""
    with open(path, encoding="utf-8") as handle:
        raw_lines = handle.read().split("\n")  # the lines read_sessions numbered
    trails = []
    for record in records:
        data = json.loads(raw_lines[record.line - 1])
        trail = []
        for number, (query, raw) in enumerate(zip(record.queries, data["queries"], strict=True), start=1):

            def bad(reason, number=number, line=record.line):
                return InputError(path, line, f"query {number}: {reason}")

            start = raw.get("start")
            if start is not None and (not _is_number(start) or start < 0):
                raise bad(f'"start" must be a number of seconds >= 0, found {start!r}')
            opened = raw.get("opened")
            if opened is not None:
                if not isinstance(opened, list):
                    raise bad('"opened" must be a list of {"rank": ..., "dwell": ...} objects')
                dwell_of: dict[int, float | None] = {}
                for item in opened:
                    rank = item.get("rank") if isinstance(item, dict) else None
                    if (
                        not isinstance(rank, int)
                        or isinstance(rank, bool)
                        or not 1 <= rank <= len(query.results)
                    ):
                        raise bad(
                            f'"opened": rank must be a whole number from 1 to {len(query.results)} '
                            f"(the list's length), found {rank!r}"
                        )
                    dwell = item.get("dwell")
                    if dwell is not None and (not _is_number(dwell) or dwell < 0):
                        raise bad(
                            f'"opened": dwell must be a number of seconds >= 0 or null, found {dwell!r}'
                        )
                    # A document opened twice from one list: its dwells add up.
                    if dwell is None:
                        dwell_of.setdefault(rank, None)
                    else:
                        dwell_of[rank] = (dwell_of.get(rank) or 0.0) + float(dwell)
                opened = dwell_of
            trail.append(
                TrailQuery(
                    start=None if start is None else float(start), depth=query.scanned_to, opened=opened
                )
            )
        trails.append(trail)
    return trails


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _params(args: argparse.Namespace) -> SessionParams:
    try:
        weights = tuple(float(w) for w in args.weights.split(","))
    except ValueError:
        raise ValueError(f"--weights must be numbers separated by commas, got {args.weights!r}") from None
    return SessionParams(
        weights=weights,
        b=args.b,
        bq=args.bq,
        top=args.top,
        formulation=args.formulation,
        duplicates=args.duplicates,
        short_lists=args.short_lists,
        scan=args.scan,
        pad_to=args.pad_to,
    )


def _check(
    records: list[SessionRecord], qrels: Qrels, params: SessionParams, qrels_path: str, sessions_path: str
):
    """The input problems the scorer would otherwise meet halfway, reported at their file and line."""
    if params.pad_to is not None:
        longest = max(records, key=lambda record: len(record.queries))
        if len(longest.queries) > params.pad_to:
            raise InputError(
                sessions_path,
                longest.line,
                f"the session has {len(longest.queries)} queries, more than --pad-to {params.pad_to}",
            )
    if params.scan == "observed":
        for record in records:
            for number, query in enumerate(record.queries, start=1):
                if query.scanned_to is None:
                    raise InputError(
                        sessions_path,
                        record.line,
                        f'query {number} has no "scanned_to"; --scan observed needs it for every query',
                    )
    if params.formulation == "kanoulas2011":
        return  # its gain 2^g - 1 is defined for every integer grade
    n_weights = len(params.weights)  # a negative grade is unjudged (gain 0), as in `eval`
    for topic in dict.fromkeys(record.scenario for record in records):
        for doc, grade in qrels.get(topic, {}).items():
            if grade >= n_weights:
                raise InputError(
                    qrels_path,
                    _qrels_line(qrels_path, topic, doc),
                    f"grade {grade} of document {doc!r} (topic {topic!r}) has no weight: "
                    f"--weights gives grades 0..{n_weights - 1}",
                )


def _qrels_line(path: str, topic: str, doc: str) -> int | None:
    """The line judging doc for topic; read again only on this error path."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if len(fields) == 4 and fields[0] == topic and fields[2] == doc:
                return number
    return None
