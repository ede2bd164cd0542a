"""Readers for TREC files. Each reads the whole file before returning, so a bad line means no partial result."""

from __future__ import annotations

from pathlib import Path

from .errors import InputError

Qrels = dict[str, dict[str, int]]


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
            raise InputError(path, number, f"expected 4 fields (topic iteration docid grade), found {len(fields)}")
        topic, _iteration, doc, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(path, number, f"grade {grade_text!r} is not an integer") from None
        judged = qrels.setdefault(topic, {})
        if doc in judged and judged[doc] != grade:
            raise InputError(path, number, f"document {doc!r} of topic {topic!r} is judged twice ({judged[doc]} and {grade})")
        judged[doc] = grade
    return qrels


def read_qrels(path: str | Path) -> Qrels:
    """Read a TREC qrels file into {topic: {docid: grade}}; raises InputError naming file and line."""
    try:
        with open(path, encoding="utf-8", newline=None) as handle:
            return parse_qrels_lines(handle, str(path))
    except OSError as exc:
        raise InputError(str(path), None, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InputError(str(path), None, f"not UTF-8 text ({exc.reason})") from None
