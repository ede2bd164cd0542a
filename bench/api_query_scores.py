"""Benchmark: reading every per-query score of a scoring run over the API, one request per session (the
scoring run's session list, then each session's queries) against the bulk endpoint
(.../scoring-runs/<run>/query-scores/: cursor pages of JSON, or one CSV file).

    .venv/bin/python bench/api_query_scores.py [--sessions 1000] [--page-size 1000] [--keep] [--reuse]

It builds bench/scoring_run.py's synthetic study (the paper's design, query counts from its Table 2) in a
fresh SQLite file (or DATABASE_URL's database), scores it in-process, then reads the scores through the WSGI
app in this process with a token (Django's test client: no network, so the figures are the server's work
plus serialization). Prints figures only; asserts only that both ways read the same rows.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import io
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _scoring_run_module():
    spec = importlib.util.spec_from_file_location("bench_scoring_run", HERE / "scoring_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Pages:
    """The API's list pages through one client, counting the requests."""

    def __init__(self, client):
        self.client, self.requests = client, 0

    def results(self, url: str):
        """Each row of each page, following `next` until it is null."""
        while url:
            page = self.client.get(url).json()
            self.requests += 1
            yield from page["results"]
            url = page["next"]


def per_session(client, base: str) -> tuple[list, int, float]:
    started, pages = time.perf_counter(), Pages(client)
    rows = [
        (session["session"], q["query"], q["sdcg"])
        for session in list(pages.results(f"{base}/sessions/?page_size=1000"))
        for q in pages.results(f"{base}/sessions/{session['session']}/queries/?page_size=1000")
    ]
    return rows, pages.requests, time.perf_counter() - started


def bulk_json(client, base: str, page_size: int) -> tuple[list, int, float]:
    started, pages = time.perf_counter(), Pages(client)
    rows = [
        (r["session"], r["query"], r["sdcg"])
        for r in pages.results(f"{base}/query-scores/?page_size={page_size}")
    ]
    return rows, pages.requests, time.perf_counter() - started


def bulk_csv(client, base: str) -> tuple[list, int, float]:
    started = time.perf_counter()
    response = client.get(f"{base}/query-scores/?format=csv")
    text = b"".join(response.streaming_content).decode()
    rows = [(int(r["session"]), int(r["query"]), float(r["sdcg"])) for r in csv.DictReader(io.StringIO(text))]
    return rows, 1, time.perf_counter() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument(
        "--page-size", type=int, default=1000, help="rows per page of the bulk JSON (max 5000)"
    )
    parser.add_argument(
        "--sqlite",
        default=str(Path(tempfile.gettempdir()) / "sessionlab-bench-api.sqlite3"),
        help="SQLite file to use (default: one in the temporary folder)",
    )
    parser.add_argument("--reuse", action="store_true", help="read the study and run already in the database")
    parser.add_argument("--keep", action="store_true", help="keep the SQLite file")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats of each way (median printed)")
    args = parser.parse_args(argv)
    scoring_run = _scoring_run_module()
    tmp = scoring_run.setup(args)

    from django.conf import settings
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from scoring.models import QueryScore, ScoringRun
    from studies.models import Study

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    study = Study.objects.filter(slug=scoring_run.STUDY_SLUG).first() if args.reuse else None
    run = ScoringRun.objects.filter(study=study, status="done").order_by("-id").first() if study else None
    if run is None:
        t0 = time.perf_counter()
        study, _ = scoring_run.build(args.sessions)
        run, elapsed = scoring_run.score(study, timeout=1800)
        print(f"built and scored the study: {time.perf_counter() - t0:.1f} s (scoring {elapsed:.1f} s)")
    n_rows = QueryScore.objects.filter(run=run).count()
    n_sessions = QueryScore.objects.filter(run=run).values("session").distinct().count()
    print(
        f"run {run.pk}: {n_sessions} sessions, {n_rows} per-query scores; "
        f"database {settings.DATABASES['default']['ENGINE']}"
    )

    token = Token.objects.get_or_create(user=study.owner)[0].key
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    base = f"/api/studies/{study.pk}/scoring-runs/{run.pk}"
    ways = {
        "one request per session": lambda: per_session(client, base),
        f"bulk JSON, cursor pages of {args.page_size}": lambda: bulk_json(client, base, args.page_size),
        "bulk CSV, one file": lambda: bulk_csv(client, base),
    }
    reference = None
    print(f"{'way':<38} {'requests':>9} {'median s':>9} {'rows/s':>9}")
    for name, way in ways.items():
        times = []
        for _ in range(max(1, args.repeats)):
            rows, requests, seconds = way()
            times.append(seconds)
        rows = sorted(rows)
        if reference is None:
            reference = rows
        elif [(s, q) for s, q, _ in rows] != [(s, q) for s, q, _ in reference]:
            raise SystemExit(f"{name}: read other rows than one request per session")
        median = sorted(times)[len(times) // 2]
        print(f"{name:<38} {requests:>9} {median:>9.3f} {len(rows) / median:>9.0f}")
    if tmp and not args.keep:
        Path(tmp).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
