"""`python -m scoring agreement`: agreement between assessors given as one TREC qrels file each, with every
coefficient's standard error, interval, p-value and method (scoring/lib/reliability; docs/assessing.md).

    python -m scoring agreement ann.qrels ben.qrels cat.qrels [--grades 0,1,2,3] [--per-topic]
    python -m scoring agreement --assessor-column all.qrels [...]

With --assessor-column, one qrels file holds every assessor's grades: its second column (the "iteration",
which trec_eval ignores) names the assessor, as files of several assessors' judgments do.

A document is a (topic, docid); an assessor grades it when their file has that line (negative grades, which
trec_eval reads as unjudged, count as not graded). Output: tab-separated, a header, then for "all" topics (and
each topic with --per-topic) a row per coefficient over all assessors (first and second empty) and for each
pair of assessors on the documents both graded. Over all assessors a document graded by one assessor alone is
left out (reliability.graded_twice_or_more, as on the agreement page): stderr says how many per block.
Assessors are named by their file's name without its suffix. Bad input: "file:line: reason" on stderr, exit
status 2, nothing on stdout.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

from . import agreement, reliability
from .errors import InputError
from .trec_io import read_qrels

EXIT_BAD_INPUT = 2
HEADER = ["topic", "first", "second", *reliability.ESTIMATE_COLUMNS]


def add_agreement_subcommand(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "agreement",
        help="agreement between assessors' qrels, every coefficient with its interval",
        description="Agreement between two or more assessors, one TREC qrels file each (or one file "
        "with --assessor-column): Cohen's kappa, Gwet's AC1/AC2, Scott's pi, Brennan-Prediger, Fleiss' "
        "kappa, Krippendorff's alpha and percent agreement with standard errors, intervals, p-values and "
        "the method. See docs/assessing.md.",
    )
    parser.add_argument(
        "qrels",
        nargs="+",
        help="one TREC qrels file per assessor (at least two), or one file with --assessor-column",
    )
    parser.add_argument(
        "--assessor-column",
        action="store_true",
        help="one qrels file whose second column (the iteration) names the assessor of each line",
    )
    parser.add_argument(
        "--grades",
        default=None,
        help="the grade scale as a comma list (default: every grade the files use, from 0)",
    )
    parser.add_argument("--per-topic", action="store_true", help="also a block of rows per topic")
    parser.add_argument(
        "--replicates",
        type=int,
        default=reliability.DEFAULT_REPLICATES,
        help="bootstrap resamples for the ordinal alpha (default %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=reliability.DEFAULT_SEED, help="bootstrap seed")
    parser.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    parser.set_defaults(func=run_agreement)
    return parser


def run_agreement(args: argparse.Namespace) -> int:
    notes: list[str] = []
    try:
        output = agreement_table(args, notes)
    except InputError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as exc:
        print(f"python -m scoring agreement: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    sys.stdout.write(output)
    for note in notes:
        print(note, file=sys.stderr)
    return 0


def _scale(text: str | None, judged: list[dict[str, dict[str, int]]], paths: list[str]) -> list[int]:
    """The grade scale: --grades (every file's grades must be in it), else 0 up to the highest grade used."""
    if text is None:
        used = {g for qrels in judged for docs in qrels.values() for g in docs.values() if g >= 0}
        return list(range(max(used) + 1)) if used else [0, 1]
    try:
        scale = sorted({int(item) for item in text.split(",")})
    except ValueError:
        raise ValueError(f"--grades {text!r} is not a comma list of whole numbers") from None
    for path, qrels in zip(paths, judged, strict=True):
        for topic, docs in qrels.items():
            for doc, grade in docs.items():
                if grade >= 0 and grade not in scale:
                    raise InputError(
                        path, None, f"topic {topic} document {doc}: grade {grade} not in {scale}"
                    )
    return scale


def read_assessor_qrels(path: str) -> tuple[list[str], list[dict[str, dict[str, int]]]]:
    """(assessor names in order of first appearance, each one's {topic: {docid: grade}}) from one qrels file
    whose second column names the assessor. An assessor grading a document twice with two grades is refused
    with the line, as read_qrels refuses it."""
    by_assessor: dict[str, dict[str, dict[str, int]]] = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read it: {exc}") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(
                path, number, f"expected 4 fields (topic assessor docid grade), found {len(fields)}"
            )
        topic, assessor, doc, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(path, number, f"grade {grade_text!r} is not an integer") from None
        judged = by_assessor.setdefault(assessor, {}).setdefault(topic, {})
        if doc in judged and judged[doc] != grade:
            raise InputError(
                path,
                number,
                f"assessor {assessor!r} grades document {doc!r} of topic {topic!r} twice "
                f"({judged[doc]} and {grade})",
            )
        judged[doc] = grade
    return list(by_assessor), list(by_assessor.values())


def _assessors_read(args: argparse.Namespace) -> tuple[list[str], list, list]:
    """(assessor names, their qrels, the file each came from): one file with an assessor column, or one file
    per assessor named by its stem."""
    if getattr(args, "assessor_column", False):
        if len(args.qrels) != 1:
            raise ValueError("--assessor-column reads one qrels file, whose second column names the assessor")
        names, judged = read_assessor_qrels(args.qrels[0])
        if len(names) < 2:
            raise ValueError(f"{args.qrels[0]} names {len(names)} assessor(s); agreement needs two or more")
        return names, judged, [args.qrels[0]] * len(names)
    if len(args.qrels) < 2:
        raise ValueError("agreement needs the qrels of at least two assessors")
    names = [Path(path).stem for path in args.qrels]
    if len(set(names)) < len(names):
        raise ValueError(
            f"two files have the same name ({', '.join(names)}); name each assessor's file apart"
        )
    return names, [read_qrels(path) for path in args.qrels], list(args.qrels)


def agreement_table(args: argparse.Namespace, notes: list[str] | None = None) -> str:
    """Everything `agreement` prints, as one string; raises InputError or ValueError on bad input. Adds to
    `notes` a line per block with documents graded by one assessor alone (left out over all assessors)."""
    names, judged, paths = _assessors_read(args)
    scale = _scale(args.grades, judged, paths)
    units = sorted({(topic, doc) for qrels in judged for topic, docs in qrels.items() for doc in docs})
    data = np.full((len(judged), len(units)), np.nan)
    for row, qrels in enumerate(judged):
        for column, (topic, doc) in enumerate(units):
            grade = qrels.get(topic, {}).get(doc)
            if grade is not None and grade >= 0:
                data[row, column] = grade
    topics = sorted({topic for topic, _doc in units})
    blocks = [("all", np.ones(len(units), dtype=bool))]
    if args.per_topic:
        blocks += [(topic, np.array([t == topic for t, _d in units], dtype=bool)) for topic in topics]
    lines = ["\t".join(HEADER)]
    for label, mask in blocks:
        part = data[:, mask]
        _twice, graded_once = reliability.graded_twice_or_more(part)
        if graded_once and notes is not None:
            notes.append(
                f"{label}: {graded_once} document{'s' if graded_once != 1 else ''} graded by one assessor "
                "only left out of the coefficients over all assessors"
            )
        estimates = reliability.all_estimates(
            part, scale, replicates=args.replicates, seed=args.seed, level=args.level
        )
        rows = [[label, "", "", *reliability.estimate_cells(e)] for e in estimates]
        for (i, first), (j, second) in itertools.combinations(enumerate(names), 2):
            both = ~np.isnan(part[i]) & ~np.isnan(part[j])
            matrix = agreement.confusion_matrix(part[i, both].astype(int), part[j, both].astype(int), scale)
            rows += [
                [label, first, second, *reliability.estimate_cells(e)]
                for e in reliability.pair_estimates(matrix, level=args.level)
            ]
        lines += ["\t".join(str(cell) for cell in row) for row in rows]
    return "\n".join(lines) + "\n"
