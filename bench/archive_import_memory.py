"""Peak memory of `import_study` for an archive and one ten times larger (docs/file-formats.md, "The study
archive": the import is streamed, so memory follows the largest item, not the archive).

    .venv/bin/python bench/archive_import_memory.py [--scale 1 --factor 10] [--keep /tmp/archive-bench]

Each size runs in its own subprocess with a fresh SQLite database: it writes a synthetic archive (documents
of 5 kB each, participants with two sessions of five queries showing ten results, their judgments and
events, one reference version judging every document, an audit trail; all ten times more in the larger
one), imports it under tracemalloc and prints the archive's size, the peak of Python allocations during the
import, the process's max RSS (Django and the migrations included), the time and the rows made. The last
line is the ratio of the two peaks: about 1 when streamed (the archive parsed whole made it about 10).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
T = "2026-11-02T10:00:00+00:00"


def _participant(p: int, ids: list[str]) -> dict:
    """One participant of the bench archive: two sessions of five queries of ten results, 50 events."""
    assignments, events = [], []
    for position, scenario in ((1, "A"), (2, "B")):
        queries = [
            {
                "position": q,
                "text": f"query {p} {q}",
                "issued_at": T,
                "shown_results": [
                    {
                        "rank": rank,
                        "doc": ids[(p * 7 + q * 11 + rank) % len(ids)],
                        "title": "a title",
                        "snippet": "a snippet of the document " * 4,
                        "shown_at": T,
                    }
                    for rank in range(1, 11)
                ],
            }
            for q in range(1, 6)
        ]
        judged = sorted({ids[(p * 13 + position * 5 + k) % len(ids)] for k in range(8)})
        session = {
            "started_at": T,
            "ended_at": T,
            "end_reason": "satisfied",
            "queries": queries,
            "judgments": [
                {"doc": doc, "grade": 1, "created_at": T, "updated_at": T, "history": []} for doc in judged
            ],
        }
        assignments.append({"position": position, "scenario": scenario, "system": "S", "session": session})
        events += [
            {
                "type": "click",
                "client_event_id": f"e{position}-{k}",
                "sequence": position * 100 + k,
                "client_time": T,
                "server_time": T,
                "session": position,
                "payload": {"data": {"rank": k % 10 + 1}},
                "origin": "client",
            }
            for k in range(25)
        ]
    return {
        "code": f"P{p:05d}",
        "enrolment_index": p,
        "created_at": T,
        "assignments": assignments,
        "events": events,
    }


def archive(scale: int) -> dict:
    """A valid archive: 100 documents, 20 participants, 500 reference judgments and 100 audit rows per unit
    of `scale`."""
    documents = [
        {
            "id": n,
            "collection": "bench",
            "external_id": f"doc{n}",
            "title": f"Document {n}",
            "text": f"word{n % 97} " * 800,
            "extra": {"url": f"http://example.org/{n}"},
        }
        for n in range(100 * scale)
    ]
    ids = [d["external_id"] for d in documents]
    participants = [_participant(p, ids) for p in range(20 * scale)]
    judgments = [
        {"topic_id": str(1 + k % 2), "doc": ids[k // 2 % len(ids)], "grade": k % 3, "source": "qrels bench"}
        for k in range(min(500 * scale, 2 * len(ids)))
    ]
    return {
        "format": "sessionlab-study-archive",
        "version": 1,
        "exported_at": T,
        "study": {"name": "Bench", "slug": "bench", "collection": "bench", "created_at": T},
        "grade_levels": [{"value": v, "label": str(v)} for v in range(3)],
        "documents": documents,
        "scenarios": [
            {"code": c, "title": c, "text": "a task", "topic_id": t} for c, t in (("A", "1"), ("B", "2"))
        ],
        "systems": [{"code": "S", "name": "S", "backend": "external", "config": {}}],
        "recruitment": None,
        "participants": participants,
        "reference_versions": [{"number": 1, "created_by": "bench", "created_at": T, "judgments": judgments}],
        "assessment": {},
        "audit": [
            {"participant_code": "", "action": "bench", "detail": {"n": n}, "at": T}
            for n in range(100 * scale)
        ],
    }


def one(scale: int, folder: Path) -> None:
    """In a subprocess: a fresh database, the archive written, imported; prints a JSON line of figures."""
    os.environ["SQLITE_PATH"] = str(folder / f"bench-{scale}.sqlite3")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sessionlab.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from studies.interchange.archive import study_archive_import
    from studies.models import Event, ShownResult

    call_command("migrate", verbosity=0)
    # DEBUG (needed for the settings' defaults) would keep every query's SQL: as a server does, keep none.
    settings.DEBUG = False
    owner = get_user_model().objects.create_user("bench")
    path = folder / f"archive-{scale}.json"
    with open(path, "w", encoding="utf-8") as file:
        json.dump(archive(scale), file, indent=1)
    tracemalloc.start()
    started = time.perf_counter()
    study = study_archive_import(path=path, owner=owner)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        json.dumps(
            {
                "scale": scale,
                "bytes": path.stat().st_size,
                "peak": peak,
                "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "seconds": round(seconds, 1),
                "participants": study.participants.count(),
                "shown": ShownResult.objects.filter(
                    query__session__assignment__participant__study=study
                ).count(),
                "events": Event.objects.filter(participant__study=study).count(),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1, help="the smaller archive's size, in units")
    parser.add_argument("--factor", type=int, default=10, help="how many times larger the other is")
    parser.add_argument("--keep", help="a folder for the databases and archives (default: a temporary one)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="archive-bench-") as temporary:
        folder = Path(args.keep or temporary)
        folder.mkdir(parents=True, exist_ok=True)
        if args.one:
            one(args.one, folder)
            return
        print(f"{'scale':>6} {'archive MB':>10} {'peak MB':>8} {'maxrss MB':>9} {'s':>6}  rows")
        peaks = []
        for scale in (args.scale, args.scale * args.factor):
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(scale), "--keep", str(folder)],
                check=True,
                capture_output=True,
                text=True,
                cwd=ROOT,
            ).stdout
            row = json.loads(out.strip().splitlines()[-1])
            peaks.append(row["peak"])
            print(
                f"{scale:6} {row['bytes'] / 1e6:10.1f} {row['peak'] / 1e6:8.1f} "
                f"{row['maxrss_kb'] / 1e3:9.0f} {row['seconds']:6.1f}  {row['participants']} participants, "
                f"{row['shown']} shown results, {row['events']} events"
            )
        print(f"peak ratio (larger / smaller): {peaks[1] / peaks[0]:.2f} for archives {args.factor}x apart")


if __name__ == "__main__":
    main()
