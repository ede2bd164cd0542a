"""Benchmark of session sDCG (scoring/lib/session.py): prints figures only, asserts nothing.

- 100,000 synthetic sessions of 1-11 queries at top 10, 50 scenarios: the vectorized batch against a
  straightforward per-session Python loop (the tests' reference, tests/scoring/session_reference.py) over the
  same sessions;
- the JSONL path of `python -m scoring session` on the same sessions written to a file: reading and checking
  the log, encoding, scoring, writing the output lines, and the whole of it (`score_session_file`);
- a 10 x 10 grid of (b, bq) against one setting;
- peak memory of the vectorized scoring (tracemalloc, which numpy reports to) and of the process.

Run alone with `.venv/bin/python bench/scoring_sessions.py [--sessions N] [--loop-sessions N] [--no-jsonl]`;
bench/scoring.py calls main(). The machine's load average is printed: the figures are wall-clock times.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
POOL = 307  # documents per scenario; prime, so a stride walk gives a list without repeats


def synthetic_sessions(n_sessions: int, seed: int = 2008, n_topics: int = 50, top: int = 10):
    """Topics, result lists (strings) and qrels shaped like the ECIR 2008 study, only larger."""
    rng = np.random.default_rng(seed)
    names = [f"d{n}" for n in range(POOL)]
    qrels = {}
    for t in range(n_topics):
        judged = rng.choice(POOL, size=150, replace=False)
        grades = rng.choice(4, size=150, p=[0.6, 0.2, 0.12, 0.08])
        qrels[f"t{t}"] = {names[d]: int(g) for d, g in zip(judged, grades, strict=True)}
    counts = rng.integers(1, 12, size=n_sessions)
    n_queries = int(counts.sum())
    start = rng.integers(0, POOL, size=n_queries)[:, None]
    stride = rng.integers(1, POOL, size=n_queries)[:, None]
    docs = (start + stride * np.arange(top)[None, :]) % POOL
    rows = [[names[d] for d in row] for row in docs.tolist()]
    topics = [f"t{t}" for t in rng.integers(0, n_topics, size=n_sessions)]
    results, at = [], 0
    for count in counts.tolist():
        results.append(rows[at : at + count])
        at += count
    return topics, results, qrels


def best_of(repeats: int, work):
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    """Print the figures; argv as on the command line (bench/scoring.py passes []).

    The per-session loop runs over every session (about a minute for 100,000) unless --loop-sessions N
    times it on the first N only and scales up, which flatters it: per session it is faster on a small heap
    (the garbage collector has less to walk)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument(
        "--loop-sessions",
        type=int,
        default=0,
        help="time the per-session loop on the first N sessions only and scale (default 0: all)",
    )
    parser.add_argument(
        "--no-jsonl", action="store_true", help="skip the JSONL path of `python -m scoring session`"
    )
    options = parser.parse_args(argv)
    sessions, loop_sessions = options.sessions, options.loop_sessions or None
    # bench/ is sys.path[0] when run as a script, and bench/scoring.py would shadow the scoring package.
    sys.path.insert(0, str(ROOT))
    from scoring.lib.session import SessionParams, encode_sessions, score_sessions, session_grid
    from tests.scoring.session_reference import reference_session

    params = SessionParams()
    topics, results, qrels = synthetic_sessions(sessions, top=params.top)
    n_queries = sum(map(len, results))
    print(
        f"session sDCG benchmark: {sessions:,} sessions, {n_queries:,} queries, top {params.top} "
        f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )

    batches = []
    encode = best_of(3, lambda: batches.append(encode_sessions(topics, results, qrels, depth=params.top)))
    batch = batches[-1]
    del batches[:-1]
    print(f"  encode (strings to arrays, once per batch): {encode:.3f} s")

    vectorized = best_of(3, lambda: score_sessions(batch, params))
    summaries_only = best_of(3, lambda: score_sessions(batch, params, curves=False))
    print(f"  vectorized batch, curves and summaries:     {vectorized:.3f} s")
    print(f"  vectorized batch, summaries only:           {summaries_only:.3f} s")
    print(
        f"  ratio encode / scoring (curves and summaries): {encode / vectorized:.2f}x  "
        "(target <= 3x; all best of 3)"
    )

    if not options.no_jsonl:
        jsonl_figures(topics, results, qrels, params, vectorized)

    loop_n = min(loop_sessions or sessions, sessions)
    began = time.perf_counter()
    for s in range(loop_n):
        reference_session(qrels[topics[s]], results[s], top=params.top, width=11 * params.top)
    loop = (time.perf_counter() - began) * sessions / loop_n
    scaled = "" if loop_n == sessions else f" (timed on {loop_n:,} sessions, scaled)"
    print(f"  per-session Python loop:                    {loop:.3f} s{scaled}")
    print(f"  speed-up of the batch: {loop / vectorized:.0f}x (summaries only: {loop / summaries_only:.0f}x)")

    b_values = np.linspace(1.5, 10, 10)
    bq_values = np.linspace(1.5, 10, 10)
    grid = best_of(3, lambda: session_grid(batch, params, b_values=b_values, bq_values=bq_values))
    print(
        f"  10 x 10 (b, bq) grid, summaries:            {grid:.3f} s = "
        f"{grid / summaries_only:.1f}x one setting (summaries), {grid / vectorized:.1f}x one setting "
        "(with curves)"
    )

    tracemalloc.start()
    score_sessions(batch, params)
    _, peak_single = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    session_grid(batch, params, b_values=b_values, bq_values=bq_values)
    _, peak_grid = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
    print(
        f"  peak memory: scoring {peak_single / 2**20:.0f} MiB, grid {peak_grid / 2**20:.0f} MiB "
        f"(tracemalloc); process max RSS {max_rss:.0f} MiB"
    )


def jsonl_figures(topics, results, qrels, params, scoring: float) -> None:
    """The JSONL path of `python -m scoring session`, step by step, on the sessions written to a file."""
    from scoring.lib.session import encode_sessions, score_sessions
    from scoring.lib.session_cli import float_rows, float_runs, score_session_file
    from scoring.lib.session_io import read_sessions

    with tempfile.TemporaryDirectory() as folder:
        sessions_path, qrels_path = Path(folder) / "sessions.jsonl", Path(folder) / "qrels"
        with open(sessions_path, "w", encoding="utf-8") as handle:
            for number, (topic, lists) in enumerate(zip(topics, results, strict=True)):
                queries = [{"text": f"q{q}", "results": ranked} for q, ranked in enumerate(lists)]
                handle.write(
                    json.dumps(
                        {
                            "id": number,
                            "system": "A",
                            "scenario": topic,
                            "participant": f"p{number % 50}",
                            "queries": queries,
                        }
                    )
                    + "\n"
                )
        qrels_path.write_text(
            "".join(
                f"{topic} 0 {doc} {grade}\n"
                for topic, judged in qrels.items()
                for doc, grade in judged.items()
            )
        )
        size = sessions_path.stat().st_size / 2**20
        read = best_of(3, lambda: read_sessions(sessions_path))
        records = read_sessions(sessions_path)
        lists = [[query.results for query in record.queries] for record in records]
        scenarios = [record.scenario for record in records]
        batch = encode_sessions(scenarios, lists, qrels, depth=params.top)
        encode = best_of(3, lambda: encode_sessions(scenarios, lists, qrels, depth=params.top))
        scores = score_sessions(batch, params)
        write = best_of(
            1,
            lambda: (
                float_rows(scores.curve),
                float_rows(scores.ideal),
                float_rows(scores.normalized),
                float_runs(scores.per_query, scores.query_counts),
            ),
        )
        whole = best_of(1, lambda: score_session_file(str(qrels_path), str(sessions_path), params))
    print(f"  JSONL path of `python -m scoring session` ({size:.0f} MiB log):")
    print(f"    read and check the log:                   {read:.3f} s")
    print(
        f"    encode (parsed strings to arrays):        {encode:.3f} s = {encode / scoring:.2f}x the scoring "
        f"(target <= 3x)"
    )
    print(
        f"    read + encode:                            {read + encode:.3f} s = "
        f"{(read + encode) / scoring:.2f}x the scoring"
    )
    print(f"    the output's float arrays as JSON text:   {write:.3f} s")
    print(f"    the whole of it (score_session_file):     {whole:.3f} s (best of 1)")


if __name__ == "__main__":
    main()
