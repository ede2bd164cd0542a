"""TREC qrels: `topic iteration docid grade` per line. Grades are integers and may be negative (trec_eval
treats those as unjudged); a document judged twice for a topic with two grades is an error, twice with the
same grade is kept once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..metrics import id_hashes
from .fields import group_by_topic, maybe_duplicates, parse_numbers, texts
from .split import read_bytes, split_columns

Qrels = dict[str, dict[str, int]]

QRELS_FIELDS = "topic iteration docid grade"


def parse_qrels_lines(lines, path: str = "<qrels>") -> Qrels:
    """`topic iteration docid grade` per line (whitespace separated). Grades may be negative (trec_eval
    treats them as unjudged). A document judged twice for a topic is an error: which grade wins is not ours
    to guess."""
    qrels: Qrels = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 4:
            raise InputError(path, number, f"expected 4 fields ({QRELS_FIELDS}), found {len(fields)}")
        topic, _iteration, doc, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(path, number, f"grade {grade_text!r} is not an integer") from None
        judged = qrels.setdefault(topic, {})
        if doc in judged and judged[doc] != grade:
            raise InputError(
                path,
                number,
                f"document {doc!r} of topic {topic!r} is judged twice ({judged[doc]} and {grade})",
            )
        judged[doc] = grade
    return qrels


@dataclass
class QrelsColumns:
    """Qrels grouped by topic: topics[i] owns docs[bounds[i]:bounds[i+1]] (numpy 'S', UTF-8 bytes), the
    same slice of grades (int64) and of lines (1-based line numbers). A document judged twice with the same
    grade appears once."""

    topics: list[str]
    bounds: np.ndarray
    docs: np.ndarray
    grades: np.ndarray
    lines: np.ndarray
    hashes: np.ndarray | None = None  # metrics.id_hashes(docs), kept for the join


def read_qrels_columns(path: str | Path) -> QrelsColumns:
    """Read a TREC qrels file as columns; raises InputError naming file and line."""
    name = str(path)
    columns = split_columns(read_bytes(path), name, 4, (0, 2, 3), QRELS_FIELDS)
    grades = parse_numbers(columns.fields[3], columns.lines, name, np.int64, "grade", "an integer")
    topics, bounds, lines, docs, grades = group_by_topic(
        columns.fields[0], columns.lines, name, columns.fields[2], grades
    )
    hashes = id_hashes(docs)
    if not maybe_duplicates(hashes, bounds):
        return QrelsColumns(topics, bounds, docs, grades, lines, hashes)
    # Some document may be judged twice: same grade, keep one; different grades, refuse.
    pieces = []
    for i, topic in enumerate(topics):
        start, stop = int(bounds[i]), int(bounds[i + 1])
        order = np.argsort(docs[start:stop], kind="stable") + start
        ordered = docs[order]
        same = np.flatnonzero(ordered[1:] == ordered[:-1])
        if same.size:
            for k in same.tolist():
                first, again = order[k], order[k + 1]
                if grades[first] != grades[again]:
                    doc = docs[again].decode("utf-8", "replace")
                    raise InputError(
                        name,
                        int(lines[again]),
                        f"document {doc!r} of topic {topic!r} is judged twice "
                        f"({grades[first]} and {grades[again]})",
                    )
            order = np.delete(order, same + 1)
        pieces.append(order)
    if pieces:
        permutation = np.concatenate(pieces)
        sizes = np.array([p.size for p in pieces], dtype=np.int64)
        bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        docs, grades, lines = docs[permutation], grades[permutation], lines[permutation]
    return QrelsColumns(topics, bounds, docs, grades, lines, id_hashes(docs))


def read_qrels(path: str | Path) -> Qrels:
    """Read a TREC qrels file into {topic: {docid: grade}}; raises InputError naming file and line."""
    name = str(path)
    columns = read_qrels_columns(path)
    qrels: Qrels = {}
    for i, topic in enumerate(columns.topics):
        start, stop = int(columns.bounds[i]), int(columns.bounds[i + 1])
        docs = texts(columns.docs[start:stop], columns.lines[start:stop], name, "docid")
        qrels[topic] = dict(zip(docs, columns.grades[start:stop].tolist(), strict=True))
    return qrels
