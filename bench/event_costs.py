"""What each kind of event costs the web tier, in one run (the cost target, docs/performance-load.md: an
exposure or attention report at most a quarter of the per-event cost of today's mix).

    .venv/bin/python bench/event_costs.py [--rounds 300] [--database sessionlab_event_costs]

On a PostgreSQL database of its own ($LOAD_PG_URL's server, as bench/load.py), it builds the load benchmark's
study (bench/load_study.py: 2,000 generated documents, both indexes) with one participant per round in their
first search, then, in this process, sends each participant's events through the events endpoint's own
function (`studies.participation.way.steps.events_ingest`, the batch the page's POST runs; no HTTP, so the
figure is the event's own work): today's mix, in the proportions the load benchmark sends them (a query, a
second page now and then, opens and closes, judgments, a scan mark), and the exposure and attention reports
(an exposure report of a page's ranks, a stretch away). Each kind is timed in batches of its own, alternating
kinds round by round; it prints the CPU time (this process: the web tier's share) and the wall time per event
for each kind, today's mix weighted as the load sends it, and the ratio of each report to it.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))

from load_study import VOCABULARY, database_drop, database_recreate, study_build  # noqa: E402

# Today's events as the load benchmark sends them, per query cycle (bench/load_participant.py): one query,
# 0.3 second pages, two opens and two closes, 1.4 judgments, 0.5 scan marks.
MIX = {
    "query": 1.0,
    "results_page": 0.3,
    "document_open": 2.0,
    "document_close": 2.0,
    "judgment": 1.4,
    "scan_mark": 0.5,
}


def arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="participants, one round of every kind each")
    parser.add_argument("--database", default="sessionlab_event_costs")
    parser.add_argument("--keep", action="store_true")
    return parser.parse_args(argv)


def timed(ingest, participant, events) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    acks = ingest(participant=participant, events=events)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    bad = [a for a in acks if not a.get("ok")]
    if bad:
        raise SystemExit(f"an event was not stored: {bad[0]}")
    return cpu, wall


def round_of(participant, session_id: int, rng: random.Random, ingest) -> dict[str, tuple[float, float, int]]:
    """One participant's round: each kind sent as a batch of its own; (cpu, wall, events) per kind."""

    def event(kind, **data):
        return {"id": uuid.uuid4().hex, "type": kind, "session": session_id, "data": data}

    out = {}
    query = event("query", text=" ".join(rng.sample(VOCABULARY, 2)))
    cpu, wall = timed(ingest, participant, [query])
    out["query"] = (cpu, wall, 1)
    ack = ingest(participant=participant, events=[query])[0]  # the re-send answers the stored results
    results = ack["results"]
    out["results_page"] = (
        *timed(ingest, participant, [event("results_page", query_event=query["id"], page=2)]),
        1,
    )
    docs = [r["doc"] for r in results[:2]]
    opens = [event("document_open", doc=d, query=1, rank=i + 1) for i, d in enumerate(docs)]
    out["document_open"] = (*timed(ingest, participant, opens), len(opens))
    closes = [event("document_close", doc=d, query=1, rank=i + 1, dwell_ms=5000) for i, d in enumerate(docs)]
    out["document_close"] = (*timed(ingest, participant, closes), len(closes))
    judgments = [event("judgment", doc=d, grade=rng.choice((0, 1, 2, 3))) for d in docs]
    out["judgment"] = (*timed(ingest, participant, judgments), len(judgments))
    out["scan_mark"] = (*timed(ingest, participant, [event("scan_mark", query=1, rank=3)]), 1)
    items = [[r["rank"], 300 * i, rng.randint(400, 3000), 1000, 0, 0] for i, r in enumerate(results[:6])]
    exposure = event("exposure", query=1, page=1, items=items, scroll_permille=600)
    attention = event("attention", spans=[["blur", 1000, 4000], ["idle", 9000, 31000]])
    out["exposure alone"] = (*timed(ingest, participant, [exposure]), 1)
    out["attention alone"] = (*timed(ingest, participant, [attention]), 1)
    # As the page sends them: with the events that need no answer, in one batch. What they add to it is
    # their cost (the batch's lock, reads and transaction are paid by the others anyway): a batch of a
    # judgment with the two reports against one of a judgment alone, in random order.
    grades = [event("judgment", doc=d, grade=rng.choice((0, 1, 2, 3))) for d in docs]
    riders = [
        event("exposure", query=1, page=1, items=items, scroll_permille=700),
        event("attention", spans=[["hidden", 50_000, 2000]]),
    ]
    batches = [("with", grades[:1] + riders), ("without", grades[1:])]
    rng.shuffle(batches)
    spent = {name: timed(ingest, participant, events) for name, events in batches}
    out["reports in a batch"] = (
        spent["with"][0] - spent["without"][0],
        spent["with"][1] - spent["without"][1],
        len(riders),
    )
    return out


def main(argv=None) -> int:
    args = arguments(argv)
    server = os.environ.get("LOAD_PG_URL", "postgres://postgres@127.0.0.1:5432").rstrip("/")
    if urlsplit(server).hostname not in ("127.0.0.1", "localhost"):
        raise SystemExit("LOAD_PG_URL must point at 127.0.0.1")
    url = database_recreate(server, args.database)
    os.environ.update(
        {
            "DATABASE_URL": url,
            "DJANGO_SETTINGS_MODULE": "sessionlab.settings",
            "DEBUG": "1",
            "LOG_LEVEL": "WARNING",
            "INDEX_ROOT": str(Path(os.environ.get("TMPDIR", "/tmp")) / f"{args.database}-indexes"),
        }
    )
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        os.environ.pop(name, None)
    import django

    django.setup()
    from studies.models import Participant
    from studies.participation.way.steps import events_ingest

    players = study_build(args.rounds, 2000)
    rng = random.Random(28)
    per_kind: dict[str, list[tuple[float, float, int]]] = {}
    for player in players:
        participant = Participant.objects.select_related("study").get(pk=player["pk"])
        for kind, figures in round_of(participant, player["session"], rng, events_ingest).items():
            per_kind.setdefault(kind, []).append(figures)
    print(f"{args.rounds} rounds on PostgreSQL, in-process (no HTTP); CPU of this process per event")
    print(f"{'kind':16} {'events':>7} {'CPU ms/event':>13} {'median':>8} {'wall ms/event':>14}")
    cost = {}
    for kind, rows in per_kind.items():
        events = sum(n for _, _, n in rows)
        cpu = sum(c for c, _, _ in rows) / events * 1000
        wall = sum(w for _, w, _ in rows) / events * 1000
        median = statistics.median(c / n for c, _, n in rows) * 1000
        cost[kind] = cpu
        print(f"{kind:16} {events:7d} {cpu:13.3f} {median:8.3f} {wall:14.3f}")
    today = sum(cost[k] * w for k, w in MIX.items()) / sum(MIX.values())
    print(f"today's mix, weighted as the load benchmark sends it: {today:.3f} ms of CPU per event")
    for kind in ("exposure alone", "attention alone", "reports in a batch"):
        ratio = cost[kind] / today
        print(f"{kind}: {cost[kind]:.3f} ms = {ratio:.2f} of today's per-event cost (target <= 0.25)")
    from django.db import connection

    connection.close()
    if not args.keep:
        database_drop(server, args.database)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
