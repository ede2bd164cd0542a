"""Benchmark of single-query nDCG: scoring.lib.metrics against pytrec_eval (and ranx when installed).

Prints figures, asserts nothing. Default size: 10,000 topics x 1,000 ranked documents, 100 graded judgments
a topic (half of them retrieved), scores rounded so that some tie.

1. In memory: the same {topic: {doc: score}} / {topic: {doc: grade}} dicts; the dict -> array conversion is
   part of our timed work. Targets: >= 2x pytrec_eval's throughput.
2. From files: `python -m scoring eval` as a whole process against a process running pytrec_eval's own
   parsers (parse_qrel, parse_run) and evaluate. Target: >= 4x. Each process runs --file-repeat
   times (default 2), taking turns with pytrec_eval's, and the best wall time and the best CPU time count:
   the machine is shared.

    .venv/bin/python bench/scoring_eval.py [--topics 10000 --depth 1000 --judged 100]
                                          [--no-files | --files-only] [--file-repeat N]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring.lib import metrics  # noqa: E402

MEASURES = {"ndcg", "ndcg_cut.10"}

PYTREC_FROM_FILES = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
result = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "ndcg_cut.10"}).evaluate(run)
lines = []
for topic in sorted(result):
    for name in ("ndcg", "ndcg_cut_10"):
        lines.append(f"{name:<22}\\t{topic}\\t{result[topic][name]:.4f}\\n")
sys.stdout.write("".join(lines))
"""


def make_data(topics: int, depth: int, judged: int, seed: int):
    """Random qrels and run dicts. Doc ids are shared string objects from one collection, as a loaded
    run's would be after interning; half of each topic's judged documents are in its run."""
    rng = np.random.default_rng(seed)
    collection = max(10 * (depth + judged), 200_000)
    names = [f"DOC{i:08d}" for i in range(collection)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    retrieved = judged // 2
    for t in range(topics):
        topic = str(401 + t)
        ids = rng.choice(collection, depth + judged - retrieved, replace=False).tolist()
        scores = np.round(rng.gamma(2.0, 3.0, depth), 4).tolist()
        run[topic] = dict(zip([names[i] for i in ids[:depth]], scores, strict=True))
        grades = rng.choice(4, judged, p=[0.5, 0.25, 0.15, 0.1]).tolist()
        qrels[topic] = dict(zip([names[i] for i in ids[depth - retrieved :]], grades, strict=True))
    return qrels, run


def ours(qrels, run) -> tuple[list[str], np.ndarray]:
    ranked = metrics.rank_run(qrels, run)
    return ranked.topics, metrics.ndcg_scores(ranked, [None, 10])


def timed(function, *args, repeat: int = 1):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(*args)
        best = min(best, time.perf_counter() - start)
    return best, result


def traced_peak(function, *args) -> int:
    tracemalloc.start()
    try:
        function(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.0f} MiB"


def in_memory(qrels, run, repeat: int) -> None:
    n = len(run)
    print(f"\n== in memory: {n:,} topics, nDCG and nDCG@10 ==")
    seconds, (topics, values) = timed(ours, qrels, run, repeat=repeat)
    print(f"scoring.lib.metrics   {seconds:8.3f} s  {n / seconds:12,.0f} topics/s")
    try:
        import pytrec_eval
    except ImportError:
        print("pytrec_eval       not installed: skipped")
        return
    theirs_seconds, result = timed(
        lambda: pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run), repeat=repeat
    )
    print(f"pytrec_eval       {theirs_seconds:8.3f} s  {n / theirs_seconds:12,.0f} topics/s")
    print(f"ratio (pytrec_eval time / ours): {theirs_seconds / seconds:.2f}x  (target >= 2x)")
    reference = np.array([[result[t]["ndcg"], result[t]["ndcg_cut_10"]] for t in topics])
    print(f"largest difference from pytrec_eval: {np.abs(reference - values).max():.2e}")
    print(f"peak traced memory of ours (tracemalloc, untimed rerun): {mib(traced_peak(ours, qrels, run))}")
    with_ranx(qrels, run, seconds)


def with_ranx(qrels, run, our_seconds: float) -> None:
    try:
        import warnings

        from ranx import Qrels, Run, evaluate
    except ImportError:
        print("ranx              not installed (pip install -r requirements-bench.txt): skipped")
        return
    warnings.filterwarnings("ignore", module="ranx")
    warnings.filterwarnings("ignore", message=".*unsafe cast.*")
    small = {t: run[t] for t in list(run)[:50]}
    evaluate(Qrels({t: qrels[t] for t in small}), Run(small), ["ndcg", "ndcg@10"])  # JIT warm-up
    build_seconds, (ranx_qrels, ranx_run) = timed(lambda: (Qrels(qrels), Run(run)))
    eval_seconds, _ = timed(lambda: evaluate(ranx_qrels, ranx_run, ["ndcg", "ndcg@10"]))
    seconds = build_seconds + eval_seconds
    n = len(run)
    print(
        f"ranx (warmed up)  {seconds:8.3f} s  {n / seconds:12,.0f} topics/s  "
        f"(Qrels/Run from the dicts {build_seconds:.3f} s + evaluate {eval_seconds:.3f} s)"
    )
    print(
        f"ratio (ranx time / ours): {seconds / our_seconds:.2f}x; "
        f"ranx's evaluate alone: {eval_seconds / our_seconds:.2f}x"
    )


def write_files(qrels, run, folder: Path) -> tuple[Path, Path]:
    qrels_path, run_path = folder / "qrels", folder / "run"
    with open(qrels_path, "w") as handle:
        for topic, judged in qrels.items():
            handle.write("".join(f"{topic} 0 {doc} {grade}\n" for doc, grade in judged.items()))
    with open(run_path, "w") as handle:
        for topic, listed in run.items():
            ranked = sorted(listed.items(), key=lambda item: -item[1])
            handle.write(
                "".join(f"{topic} Q0 {doc} {r} {score} bench\n" for r, (doc, score) in enumerate(ranked, 1))
            )
    return qrels_path, run_path


# Runs a command's Python code, then reports the process's own peak RSS on stderr's last line.
PEAK_WRAPPER = """
import resource, runpy, sys
what, sys.argv = sys.argv[1], (sys.argv[2:] if sys.argv[1] == "-m" else ["<bench>", *sys.argv[2:]])
try:
    if what == "-m":
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        exec(compile(what, "<bench>", "exec"))
except SystemExit as exc:
    if exc.code:
        raise
sys.stdout.flush()
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec, so a child would report its parent's.
with open("/proc/self/status") as status:
    peak = next((int(l.split()[1]) for l in status if l.startswith("VmHWM:")), 0)
print("peak", (peak or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024, file=sys.stderr)
"""


def child(what: str, args: list[str]) -> tuple[float, float, int, str]:
    """Wall time, CPU time (user + system), peak RSS (bytes) and stdout of a Python child process running
    `what` (-m for a module). CPU time is the fairer figure on a machine shared with other work."""
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", PEAK_WRAPPER, what, *args], cwd=ROOT, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode:
        raise SystemExit(f"{what[:40]!r} {args[:3]} failed: {done.stderr[-800:]}")
    peak = int(done.stderr.strip().splitlines()[-1].split()[1])
    return seconds, cpu, peak, done.stdout


def best(runs: list) -> tuple[float, float, int, str]:
    """Of several `child` runs: the best wall time, the best CPU time, the largest peak, the output."""
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs), runs[-1][3]


def best_child(what: str, args: list[str], repeat: int) -> tuple[float, float, int, str]:
    return best([child(what, args) for _ in range(max(repeat, 1))])


def reader_name() -> str:
    try:
        import pyarrow
    except ImportError:
        return "numpy splitter (pyarrow not installed: pip install -r requirements.txt)"
    return f"pyarrow {pyarrow.__version__} CSV reader for plain files"


def from_files(qrels, run, keep: Path | None = None, repeat: int = 1) -> None:
    print(f"\n== from files: {len(run):,} topics, whole processes (best of {max(repeat, 1)}) ==")
    with tempfile.TemporaryDirectory() as folder:
        qrels_path, run_path = write_files(qrels, run, keep or Path(folder))
        size = run_path.stat().st_size
        print(f"run file {mib(size)}, {sum(len(v) for v in run.values()):,} lines; reader: {reader_name()}")
        files = [str(qrels_path), str(run_path)]
        os.sync()  # the files' writeback is not left to slow down whichever process runs first
        arguments = ["scoring", "eval", *files, "-m", "ndcg", "-m", "ndcg_cut_10"]
        try:
            import pytrec_eval  # noqa: F401
        except ImportError:
            seconds, cpu, peak, out = best_child("-m", arguments, repeat)
            print(
                f"python -m scoring eval      {seconds:8.3f} s wall  {cpu:8.3f} s CPU  peak RSS {mib(peak)}"
            )
            print("pytrec_eval not installed: skipped")
            return
        ours, theirs = [], []
        for _ in range(max(repeat, 1)):  # taking turns, so that both meet the same load
            ours.append(child("-m", arguments))
            theirs.append(child(PYTREC_FROM_FILES, files))
        seconds, cpu, peak, out = best(ours)
        print(f"python -m scoring eval      {seconds:8.3f} s wall  {cpu:8.3f} s CPU  peak RSS {mib(peak)}")
        theirs_seconds, theirs_cpu, their_peak, theirs_out = best(theirs)
        print(
            f"pytrec_eval parse+evaluate  {theirs_seconds:8.3f} s wall  {theirs_cpu:8.3f} s CPU  "
            f"peak RSS {mib(their_peak)}"
        )
        print(
            f"ratio (pytrec_eval / ours): {theirs_seconds / seconds:.2f}x wall time, "
            f"{theirs_cpu / cpu:.2f}x CPU time  (target >= 4x)"
        )
        ours_lines = [line for line in out.splitlines() if "\tall\t" not in line]
        same = sorted(ours_lines) == sorted(theirs_out.splitlines())
        print(f"per-topic output identical to pytrec_eval's (4 decimals): {same}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=1_000, help="ranked documents per topic")
    parser.add_argument("--judged", type=int, default=100, help="graded judgments per topic")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=1, help="in-memory timings: best of N")
    parser.add_argument("--no-files", action="store_true", help="skip the whole-process comparison")
    parser.add_argument("--files-only", action="store_true", help="skip the in-memory comparison")
    parser.add_argument("--keep-files", type=Path, default=None, help="write the qrels and run files here")
    parser.add_argument(
        "--file-repeat", type=int, default=2, help="whole processes: best of N turns (default 2)"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    qrels, run = make_data(args.topics, args.depth, args.judged, args.seed)
    print(
        f"data: {args.topics:,} topics x {args.depth:,} ranked docs, {args.judged} judgments a topic "
        f"(made in {time.perf_counter() - start:.1f} s)"
    )
    if not args.files_only:
        in_memory(qrels, run, args.repeat)
    if not args.no_files:
        from_files(qrels, run, args.keep_files, args.file_repeat)
    print(f"\nbenchmark process peak RSS: {mib(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)}")


if __name__ == "__main__":
    main()
