"""TREC runs: `topic Q0 docid rank score tag` per line (text after the tag is part of it, as in trec_eval).
Scores are numbers (NaN refused); the rank column is ignored, as in trec_eval; a document listed twice for a
topic is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..metrics import id_hashes
from .fields import blocked_id_hashes, group_by_topic, maybe_duplicates, parse_numbers, texts
from .split import (
    arrow_bytes,
    arrow_float64,
    arrow_table,
    binary,
    float64,
    read_bytes,
    split_columns,
)
from .stream import stream_run_columns

Run = dict[str, dict[str, float]]

RUN_FIELDS = "topic Q0 docid rank score tag"


@dataclass
class RunColumns:
    """A run grouped by topic: topics[i] owns docs[bounds[i]:bounds[i+1]] (numpy 'S', UTF-8 bytes), the
    same slice of scores (float64) and of lines (1-based line numbers). Topics are in order of first
    appearance; within a topic, lines keep the file's order (the rank column is ignored, as in trec_eval)."""

    topics: list[str]
    bounds: np.ndarray
    docs: np.ndarray
    scores: np.ndarray
    lines: np.ndarray
    hashes: np.ndarray | None = None  # metrics.id_hashes(docs), kept for the join


def read_run_columns(path: str | Path) -> RunColumns:
    """Read a TREC run (`topic Q0 docid rank score tag`) as columns; raises InputError naming file and line
    for a line without 6 fields, a score that is not a number, or a document listed twice for a topic."""
    name = str(path)
    run = file_run_columns(path)
    check_listed_once(run, name)
    return run


def file_run_columns(path: str | Path) -> RunColumns:
    """`run_columns` of a file: streamed in one pass when it is plain (stream.py), else read whole."""
    name = str(path)
    streamed = stream_run_columns(path, name)
    return RunColumns(*streamed) if streamed is not None else run_columns(read_bytes(path), name)


def run_columns(data: bytes, name: str) -> RunColumns:
    """The run's columns, every check made but that no document is listed twice for a topic."""
    table = arrow_table(data, 6, {0: binary, 2: binary, 4: float64})
    if table is not None:
        scores = arrow_float64(table.column("f4"))
        if scores is not None and not np.isnan(scores).any():  # a NaN is refused below, with its line
            lines = np.arange(1, table.num_rows + 1, dtype=np.int64)  # a plain file has no blank line
            docs = arrow_bytes(table.column("f2"))
            topics, bounds, lines, docs, scores = group_by_topic(
                arrow_bytes(table.column("f0")), lines, name, docs, scores
            )
            return RunColumns(topics, bounds, docs, scores, lines, blocked_id_hashes(docs))
    columns = split_columns(data, name, 6, (0, 2, 4), RUN_FIELDS, extra_ok=True)
    lines = columns.lines
    scores = parse_numbers(columns.fields[4], lines, name, np.float64, "score", "a number")
    topics, bounds, lines, docs, scores = group_by_topic(
        columns.fields[0], lines, name, columns.fields[2], scores
    )
    return RunColumns(topics, bounds, docs, scores, lines, id_hashes(docs))


def check_listed_once(run: RunColumns, name: str) -> None:
    hashes = run.hashes if run.hashes is not None else id_hashes(run.docs)
    if not maybe_duplicates(hashes, run.bounds):
        return
    for i, topic in enumerate(run.topics):
        segment = run.docs[run.bounds[i] : run.bounds[i + 1]].tolist()
        seen: set[bytes] = set()
        for offset, doc in enumerate(segment):
            if doc in seen:
                line = int(run.lines[run.bounds[i] + offset])
                shown = doc.decode("utf-8", "replace")
                raise InputError(name, line, f"document {shown!r} is listed twice for topic {topic!r}")
            seen.add(doc)


def read_run(path: str | Path) -> Run:
    """Read a TREC run file into {topic: {docid: score}}; raises InputError naming file and line."""
    name = str(path)
    columns = read_run_columns(path)
    run: Run = {}
    for i, topic in enumerate(columns.topics):
        start, stop = int(columns.bounds[i]), int(columns.bounds[i + 1])
        docs = texts(columns.docs[start:stop], columns.lines[start:stop], name, "docid")
        run[topic] = dict(zip(docs, columns.scores[start:stop].tolist(), strict=True))
    return run
