"""Benchmark: a scoring run of a 10,000-session study, and the dashboard JSON time per chart.

    .venv/bin/python bench/scoring_run.py [--sessions 10000] [--keep]

By default it builds a synthetic study (the paper's design: 4 scenarios, 2 systems, query counts drawn from
its Table 2, top-10 result lists, a reference version) in a fresh SQLite file, scores it in-process (Celery
eager) and times every chart endpoint cold (cache cleared) and warm. It prints figures only.

With workers: point DATABASE_URL at a database the workers share and CELERY_BROKER_URL
(+ CELERY_RESULT_BACKEND, which a chord needs) at Redis, start `celery -A sessionlab worker --concurrency 1`
(then 2) with the same environment, and run this script with that environment: the run is queued to the
workers and timed until it is done. `--keep` keeps the built study, `--reuse` scores the study already there
(build once, time twice).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STUDY_SLUG = "bench-scoring-run"
# Table 2 of the paper: sessions with exactly 1..11 queries (both systems together).
TABLE_2 = [49, 14, 19, 15, 7, 8, 3, 3, 0, 1, 1]


def setup(args) -> str | None:
    tmp = None
    if not os.environ.get("DATABASE_URL"):
        tmp = args.sqlite or str(Path(tempfile.gettempdir()) / "sessionlab-bench-scoring.sqlite3")
        if not args.reuse and Path(tmp).exists():
            Path(tmp).unlink()
        os.environ["SQLITE_PATH"] = tmp
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sessionlab.settings")
    os.environ.setdefault("DEBUG", "1")  # a development run on this machine (DEBUG is off unless set)
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return tmp


def build(n_sessions: int, seed: int = 2008):
    """The synthetic study, in one transaction: (study, number of queries). The draws come from one
    generator in a fixed order (answers, query counts, pools, shown lists, grades): a seed gives one study."""
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from studies.models import Study

    rng = np.random.default_rng(seed)
    user_model = get_user_model()
    owner, _ = user_model.objects.get_or_create(
        username="bench", defaults={"is_staff": True, "is_superuser": True}
    )
    Study.objects.filter(slug=STUDY_SLUG).delete()
    with transaction.atomic():
        study, docs = design_build(owner, n_sessions, rng)
        now = timezone.now()
        sessions, counts = sessions_build(study, rng, now)
        pools = shown_results_build(study, sessions, docs, rng, now)
        reference_build(study, pools, rng)
    return study, int(counts.sum())


def design_build(owner, n_sessions: int, rng):
    """The study over a 5,000-document collection, 4 scenarios, 2 systems, n_sessions / 4 participants with
    questionnaire answers: (study, the documents' ids)."""
    from studies.design import services as study_services
    from studies.models import Collection, Document, Study

    study = study_services.study_create(owner=owner, name="Bench scoring run", status="open")
    Study.objects.filter(pk=study.pk).update(slug=STUDY_SLUG)
    study.refresh_from_db()
    collection = Collection.objects.create(name=f"bench collection {time.time()}", owner=owner)
    study.collection = collection
    study.save(update_fields=["collection"])
    Document.objects.bulk_create(
        (Document(collection=collection, external_id=f"d{i}") for i in range(5000)), batch_size=2000
    )
    docs = list(collection.documents.order_by("pk").values_list("pk", flat=True))
    for n in range(1, 5):
        study_services.scenario_add(study=study, code=f"S{n}", title=f"S{n}", text="bench", topic_id=str(n))
    for code in "AB":
        study_services.system_add(study=study, code=code, name=f"System {code}")
    participants = study_services.participants_enrol(study=study, count=max(1, n_sessions // 4))
    answers = {"search_engine_years": 7, "domain_years": 21, "search_skill": 2}
    for p in participants:
        p.questionnaire_answers = {k: int(v + rng.integers(-2, 3)) for k, v in answers.items()}
    type(participants[0]).objects.bulk_update(participants, ["questionnaire_answers"], batch_size=2000)
    return study, docs


def sessions_build(study, rng, now):
    """A finished session per assignment and its queries, their counts drawn from Table 2:
    ([(session id, topic id)], the query count of each)."""
    import numpy as np

    from studies.models import Assignment, Query, SearchSession

    assignments = list(Assignment.objects.filter(participant__study=study).order_by("pk"))
    reasons = ["satisfied", "gave_up", "timed_out"]
    SearchSession.objects.bulk_create(
        (
            SearchSession(assignment=a, started_at=now, ended_at=now, end_reason=reasons[i % 3])
            for i, a in enumerate(assignments)
        ),
        batch_size=2000,
    )
    sessions = list(
        SearchSession.objects.filter(assignment__participant__study=study).values_list(
            "pk", "assignment__scenario__topic_id"
        )
    )
    probabilities = np.asarray(TABLE_2, dtype=float) / sum(TABLE_2)
    counts = rng.choice(np.arange(1, 12), size=len(sessions), p=probabilities)
    Query.objects.bulk_create(
        (
            Query(session_id=s, position=q, text=f"q{q}", issued_at=now)
            for (s, _), n in zip(sessions, counts, strict=True)
            for q in range(1, n + 1)
        ),
        batch_size=5000,
    )
    return sessions, counts


def shown_results_build(study, sessions, docs, rng, now) -> dict:
    """Ten results per query from its topic's pool: {topic id: the pool's documents}."""
    from studies.models import Query, ShownResult

    topic_of = dict(sessions)
    # Each topic draws from its own 400 documents, so lists hit the judged ones now and then.
    pools = {str(t): rng.choice(docs, size=400, replace=False) for t in range(1, 5)}
    queries = Query.objects.filter(session__assignment__participant__study=study).values_list(
        "pk", "session_id"
    )

    def shown():
        for query_id, session_id in queries.iterator(chunk_size=5000):
            for rank, doc in enumerate(rng.choice(pools[topic_of[session_id]], size=10, replace=False), 1):
                yield ShownResult(query_id=query_id, rank=rank, document_id=int(doc), shown_at=now)

    ShownResult.objects.bulk_create(shown(), batch_size=5000)
    return pools


def reference_build(study, pools: dict, rng) -> None:
    """Reference version 1: random grades for the first 120 documents of each topic's pool."""
    from studies.models import ReferenceJudgment, ReferenceVersion

    version = ReferenceVersion.objects.create(study=study, number=1, note="bench")
    ReferenceJudgment.objects.bulk_create(
        ReferenceJudgment(
            version=version, topic_id=topic, document_id=int(doc), grade=int(rng.integers(0, 4))
        )
        for topic, pool in pools.items()
        for doc in pool[:120]
    )


def score(study, timeout: float):
    from django.db import connection

    from scoring import services
    from scoring.models import ScoringRun

    ScoringRun.objects.filter(study=study).delete()
    started = time.perf_counter()
    run = services.scoring_run_create(study=study)  # autocommit: queued (or run eagerly) at once
    while True:
        run.refresh_from_db()
        if run.is_finished:
            break
        if time.perf_counter() - started > timeout:
            raise SystemExit(
                f"run not finished after {timeout} s: {run.status} {run.progress_done}/{run.progress_total}"
            )
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    connection.close()
    if run.status != ScoringRun.Status.DONE:
        raise SystemExit(f"run failed: {run.error}")
    return run, elapsed


def charts(study, run, warm_repeats: int):
    from django.core.cache import cache
    from django.test import Client
    from django.urls import reverse

    from scoring.dashboards.registry import CHARTS

    client = Client()
    client.force_login(study.owner)
    rows = []
    for name in CHARTS:
        url = reverse("scoring:chart_json", args=[study.slug, run.pk, name])
        cache.clear()
        t0 = time.perf_counter()
        response = client.get(url)
        cold = time.perf_counter() - t0
        assert response.status_code == 200, (name, response.status_code)
        warm = []
        for _ in range(warm_repeats):
            t0 = time.perf_counter()
            client.get(url)
            warm.append(time.perf_counter() - t0)
        rows.append((name, cold, statistics.median(warm), len(response.content)))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--sqlite", help="SQLite file to use (default: a temporary file)")
    parser.add_argument("--reuse", action="store_true", help="score the study already in the database")
    parser.add_argument("--keep", action="store_true", help="keep the SQLite file")
    parser.add_argument("--warm", type=int, default=5, help="warm requests per chart (median printed)")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args(argv)
    tmp = setup(args)

    from django.conf import settings

    from studies.models import Query, SearchSession, ShownResult, Study

    mode = (
        "eager (in-process)"
        if settings.CELERY_TASK_ALWAYS_EAGER
        else f"workers via {settings.CELERY_BROKER_URL}"
    )
    if args.reuse and Study.objects.filter(slug=STUDY_SLUG).exists():
        study = Study.objects.get(slug=STUDY_SLUG)
    else:
        t0 = time.perf_counter()
        study, _ = build(args.sessions)
        print(f"built study: {time.perf_counter() - t0:.1f} s")
    n_sessions = SearchSession.objects.filter(assignment__participant__study=study).count()
    n_queries = Query.objects.filter(session__assignment__participant__study=study).count()
    n_shown = ShownResult.objects.filter(query__session__assignment__participant__study=study).count()
    print(
        f"study: {n_sessions} sessions, {n_queries} queries, {n_shown} shown results; database "
        f"{settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}"
    )
    run, elapsed = score(study, args.timeout)
    print(f"scoring run ({mode}): {elapsed:.2f} s for {run.progress_done} sessions")
    print(f"{'chart':<14} {'cold ms':>9} {'warm ms':>9} {'JSON kB':>9}")
    for name, cold, warm, size in charts(study, run, args.warm):
        print(f"{name:<14} {cold * 1000:9.1f} {warm * 1000:9.1f} {size / 1024:9.1f}")
    if tmp and not args.keep:
        Path(tmp).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
