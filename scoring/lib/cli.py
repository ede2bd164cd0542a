"""`python -m scoring`: trec_eval-style evaluation of runs on plain files (no Django needed).

    python -m scoring eval QRELS RUN -m ndcg -m ndcg_cut.10,20 -m dcg_cut_10 [--formulation 2008 --b 4]
    python -m scoring session ...        (scoring/session_cli.py)
    python -m scoring agreement A.qrels B.qrels ...   (scoring/lib/agreement_cli.py)

Output is built completely before anything is printed, so a bad input gives a message "file:line: reason"
on stderr, exit status 2 and nothing on stdout.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import metrics
from .errors import InputError
from .trec_io import read_qrels_columns, read_ranked, start_reading_run

# trec_eval's default cutoffs for the *_cut measures.
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
CUT_FAMILIES = ("cg_cut", "dcg_cut", "ncg_cut", "ndcg_cut", "avg_pos")
EXIT_BAD_INPUT = 2

# The other sub-commands: (module, function adding its parser, one-line help for `python -m scoring -h`).
# Only the command being run has its module imported: `agreement` pulls scipy.stats (1.5 s of start-up) and
# `session` its own readers; eval uses neither (tests/scoring/test_eval_imports_only_what_it_uses.py).
SUBCOMMANDS = {
    "session": (
        "scoring.lib.session_cli",
        "add_session_subcommand",
        "score multi-query sessions with session DCG (sDCG, ECIR 2008)",
    ),
    "agreement": (
        "scoring.lib.agreement_cli",
        "add_agreement_subcommand",
        "agreement between assessors' qrels, every coefficient with its interval",
    ),
}


@dataclass(frozen=True)
class Measure:
    """One output column: `family` is ndcg or one of CUT_FAMILIES, `cutoff` None for the whole list."""

    name: str
    family: str
    cutoff: int | None = None
    gain_map: tuple[tuple[int, float], ...] | None = None


def parse_measure(text: str) -> list[Measure]:
    """Parse one -m value, in our names (ndcg_cut_10, avg_pos_5) or trec_eval's parameter syntax
    (ndcg_cut.10,20,23.4: cutoffs truncated to integers as trec_eval does; ndcg.1=3,2=9: gain per grade;
    a bare ndcg_cut: trec_eval's default cutoffs)."""
    base, _, params = text.partition(".")
    if base == "ndcg":
        if not params:
            return [Measure("ndcg", "ndcg")]
        pairs = []
        for item in params.split(","):
            grade, equals, value = item.partition("=")
            try:
                pairs.append((int(grade), float(value)))
            except ValueError:
                raise ValueError(f"measure {text!r}: gain {item!r} is not grade=gain") from None
            if not equals:
                raise ValueError(f"measure {text!r}: gain {item!r} is not grade=gain")
        return [Measure(f"ndcg_{params}", "ndcg", None, tuple(pairs))]
    if base in CUT_FAMILIES:
        cutoffs = [_cutoff(text, item) for item in params.split(",")] if params else list(DEFAULT_CUTOFFS)
        return [Measure(f"{base}_{k}", base, k) for k in cutoffs]
    for family in CUT_FAMILIES:
        if base.startswith(family + "_") and not params:
            k = _cutoff(text, base[len(family) + 1 :])
            return [Measure(f"{family}_{k}", family, k)]
    known = "ndcg, ndcg.G=gain,..., " + ", ".join(f"{f}_K, {f}.K1,K2" for f in CUT_FAMILIES)
    raise ValueError(f"unknown measure {text!r}; known: {known}")


def _cutoff(measure: str, text: str) -> int:
    try:
        k = int(float(text))
    except ValueError:
        raise ValueError(f"measure {measure!r}: cutoff {text!r} is not a number") from None
    if k < 1:
        raise ValueError(f"measure {measure!r}: cutoff {text!r} must be at least 1")
    return k


def _weights(text: str) -> tuple[float, ...]:
    try:
        weights = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None
    return weights


def _measure_arg(text: str) -> list[Measure]:
    try:
        return parse_measure(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line. `command` (the sub-command about to run) is the only one of SUBCOMMANDS whose
    module is imported to add its options; the others get a placeholder with their help line, which is all
    `python -m scoring -h` shows of them. None: every sub-command in full."""
    parser = argparse.ArgumentParser(
        prog="python -m scoring", description="SessionLab scoring on plain files."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    evaluate = commands.add_parser(
        "eval",
        help="per-topic (n)CG/(n)DCG of a run, trec_eval style",
        description="Per-topic measures of a TREC run against TREC qrels, printed as trec_eval does "
        "(measure, topic, value; then 'all', the mean). Defaults reproduce trec_eval's ndcg exactly.",
    )
    evaluate.add_argument("qrels", help="TREC qrels: topic iteration docid grade")
    evaluate.add_argument("run", help="TREC run: topic Q0 docid rank score tag (rank ignored)")
    evaluate.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        type=_measure_arg,
        default=[],
        help="ndcg, ndcg_cut_K, dcg_cut_K, cg_cut_K, ncg_cut_K, avg_pos_K (mean of the nDCG vector over "
        "ranks 1..K); trec_eval's ndcg_cut.5,10 and ndcg.1=3,2=9 work too. Repeatable; default ndcg.",
    )
    evaluate.add_argument(
        "--formulation",
        choices=metrics.FORMULATIONS,
        default="log2",
        help=(
            "log2: 1/log2(i+1), exactly trec_eval (default); 2008: 1/(1+log_b i); 2002: 1/log_b i from i >= b"
        ),
    )
    evaluate.add_argument("--b", type=float, default=2.0, help="rank log base of 2008 and 2002 (default 2)")
    evaluate.add_argument(
        "--weights",
        type=_weights,
        default=None,
        help="gain of grades 0,1,2,... as a comma list; default: the grade itself under log2 (trec_eval), "
        "0,1,10,100 under 2008 and 2002 (the papers)",
    )
    evaluate.add_argument(
        "--gain", choices=metrics.GAIN_KINDS, default="linear", help="exponential: 2^g - 1 (default linear)"
    )
    evaluate.add_argument(
        "-c",
        dest="all_topics",
        action="store_true",
        help="as trec_eval -c: every qrels topic counts, a topic missing from the run scoring 0",
    )
    evaluate.add_argument(
        "--vectors",
        action="store_true",
        help=(
            "print JSON lines {measure, topic, vector} with the whole vectors instead (topic 'all': avg-vect)"
        ),
    )
    evaluate.set_defaults(func=run_eval)
    for name, (module, function, help_line) in SUBCOMMANDS.items():
        if command is None or command == name:
            getattr(importlib.import_module(module), function)(commands)
        else:
            commands.add_parser(name, help=help_line, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # The first word that is not an option names the sub-command (the top level has no option but -h).
    command = next((word for word in argv if not word.startswith("-")), None)
    args = build_parser(command or "").parse_args(argv)
    return args.func(args)


def run_eval(args: argparse.Namespace) -> int:
    try:
        output = evaluate_files(args)
    except InputError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as exc:
        print(f"python -m scoring eval: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    sys.stdout.write(output)
    return 0


def evaluate_files(args: argparse.Namespace) -> str:
    """Everything `eval` prints, as one string; raises InputError or ValueError on bad input."""
    measures = [m for group in args.measures for m in group] or [Measure("ndcg", "ndcg")]
    measures = list(dict.fromkeys(measures))
    if not args.b > 1:  # refused under every formulation, before any file is read
        raise ValueError(f"the rank log base --b must be greater than 1, got {args.b:g}")
    weights = args.weights if args.weights is not None else metrics.default_weights(args.formulation)
    if weights is not None and any(m.gain_map for m in measures):
        raise ValueError("a measure with its own gains (ndcg.G=gain,...) cannot be combined with weights")
    pending = start_reading_run(args.run)  # on a second core while the qrels are read
    try:
        qrels = read_qrels_columns(args.qrels)
        if weights is not None:
            _check_grades(qrels, weights, args.qrels)
    except InputError:
        _finished(pending)  # no thread is left reading the run once eval has answered
        raise
    ranked = read_ranked(qrels, args.run, args.all_topics, pending)
    if args.vectors:
        return _vector_lines(ranked, measures, args, weights)
    return _value_lines(ranked, measures, args, weights)


def _finished(pending) -> None:
    try:
        pending.result()
    except (InputError, OSError, ValueError):
        pass  # the qrels' error is the one reported


def _check_grades(qrels, weights, path: str) -> None:
    if not qrels.grades.size:
        return
    worst = int(np.argmax(qrels.grades))
    try:
        metrics.grade_gains(qrels.grades[worst : worst + 1], weights)
    except metrics.GradeError as exc:
        # The first line in the file with that grade, as a reader looking for it would find it.
        line = int(qrels.lines[qrels.grades == exc.grade].min())
        raise InputError(path, line, exc.reason) from None


def _gains(ranked: metrics.RankedGrades, measure: Measure, args, weights, cache: dict):
    """(gains, ideal) matrices for a measure's gain mapping, computed once per mapping."""
    key = measure.gain_map
    if key not in cache:
        gain_map = dict(key) if key else None
        cache[key] = (
            metrics.grade_gains(ranked.grades, weights, args.gain, gain_map),
            metrics.ideal_gains(metrics.grade_gains(ranked.judged, weights, args.gain, gain_map)),
        )
    return cache[key]


def _values(ranked, measure: Measure, args, weights, cache) -> np.ndarray:
    gains, ideal = _gains(ranked, measure, args, weights, cache)
    k, family = measure.cutoff, measure.family
    if family == "cg_cut":
        return metrics.cg_at(gains, [k])[:, 0]
    if family == "dcg_cut":
        return metrics.dcg_at(gains, [k], args.formulation, args.b)[:, 0]
    if family == "ncg_cut":
        return metrics.normalized(metrics.cg_at(gains, [k]), metrics.cg_at(ideal, [k]))[:, 0]
    if family in ("ndcg_cut", "ndcg"):
        run_dcg = metrics.dcg_at(gains, [k], args.formulation, args.b)
        return metrics.normalized(run_dcg, metrics.dcg_at(ideal, [k], args.formulation, args.b))[:, 0]
    if family == "avg_pos":
        assert k is not None  # parse_measure gives every cut family a cutoff
        return metrics.avg_pos(_vectors(ranked, Measure("", "ndcg_cut", k), args, weights, cache), k)
    raise ValueError(f"unknown measure family {family!r}")


def _vectors(ranked, measure: Measure, args, weights, cache) -> np.ndarray:
    gains, ideal = _gains(ranked, measure, args, weights, cache)
    family = measure.family
    depth = measure.cutoff or max(gains.shape[1], ideal.shape[1])
    gains, ideal = metrics._fit(gains, depth), metrics._fit(ideal, depth)
    if family == "cg_cut":
        return metrics.cumulative_gain(gains)
    if family == "ncg_cut":
        return metrics.normalized(metrics.cumulative_gain(gains), metrics.cumulative_gain(ideal))
    run_dcg = metrics.discounted_cumulative_gain(gains, args.formulation, args.b)
    if family == "dcg_cut":
        return run_dcg
    ideal_dcg = metrics.discounted_cumulative_gain(ideal, args.formulation, args.b)
    return metrics.normalized(run_dcg, ideal_dcg)


def _empty_recall_note(ranked, measures) -> None:
    if not any(m.family in ("ndcg", "ndcg_cut", "ncg_cut", "avg_pos") for m in measures):
        return
    empty = [t for t, row in zip(ranked.topics, ranked.judged, strict=True) if not (row > 0).any()]
    if empty:
        shown = ", ".join(empty[:10]) + (", ..." if len(empty) > 10 else "")
        print(
            f"note: {len(empty)} topic(s) without a relevant document (empty recall base), normalized "
            f"measures are 0 there: {shown}",
            file=sys.stderr,
        )


def _value_lines(ranked, measures: list[Measure], args, weights) -> str:
    cache: dict = {}
    table = (
        np.column_stack([_values(ranked, m, args, weights, cache) for m in measures])
        if ranked.topics
        else None
    )
    lines = []
    if table is not None:  # None: no topic, so no per-topic line
        for row, topic in enumerate(ranked.topics):
            for column, measure in enumerate(measures):
                lines.append(f"{measure.name:<22}\t{topic}\t{table[row, column]:.4f}\n")
    means = table.mean(axis=0) if table is not None else np.zeros(len(measures))
    for column, measure in enumerate(measures):
        lines.append(f"{measure.name:<22}\tall\t{means[column]:.4f}\n")
    _empty_recall_note(ranked, measures)
    return "".join(lines)


def _vector_lines(ranked, measures: list[Measure], args, weights) -> str:
    cache: dict = {}
    lines = []
    for measure in measures:
        vectors = _vectors(ranked, measure, args, weights, cache)
        for topic, vector in zip(ranked.topics, vectors, strict=True):
            lines.append(
                json.dumps({"measure": measure.name, "topic": topic, "vector": vector.tolist()}) + "\n"
            )
        mean = metrics.avg_vect(vectors) if ranked.topics else np.zeros(vectors.shape[1])
        lines.append(json.dumps({"measure": measure.name, "topic": "all", "vector": mean.tolist()}) + "\n")
    _empty_recall_note(ranked, measures)
    return "".join(lines)
