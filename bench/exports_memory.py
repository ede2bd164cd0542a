"""Peak memory of building each export of a study, whole in memory versus streamed (docs/performance-load.md,
"Exports").

    DEBUG=1 INDEX_ROOT=/tmp/exb-indexes .venv/bin/python bench/exports_memory.py build --participants 400 \
        --db /tmp/exports-bench.sqlite3
    DEBUG=1 .venv/bin/python bench/exports_memory.py measure --db /tmp/exports-bench.sqlite3

`build` makes the demo study (studies/demo.py, the generated collection) with N simulated participants, each
working four scenarios, in a SQLite file (2,000 took 399 s on the shared 2-core machine on 2026-11-29; 400
took 355 s the day before, under more load). `measure` builds each export in its own subprocess and prints the
peak of Python allocations (tracemalloc) and the process's max RSS, whole (the bytes joined in memory, as a
HttpResponse holds them) and streamed (the chunks consumed one by one, as StreamingHttpResponse sends them),
and a sha256 of each export's content (of each member for a zip) so two trees' outputs can be compared. On a
tree without the streaming functions only the whole figures print.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
EXPORTS = ("tables", "runs", "archive", "session_track")


def _django(db: str) -> None:
    os.environ["SQLITE_PATH"] = db
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sessionlab.settings")
    import django

    django.setup()


def build(participants: int, db: str) -> None:
    from django.core.management import call_command

    from studies.demo import GENERATED, demo_study_load

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    demo_study_load(participants=participants, data_dir=GENERATED)
    print(f"built {participants} participants in {time.perf_counter() - started:.0f} s into {db}")


def _fixed_clock() -> None:
    """The archive's exported_at, the same in every run, so hashes compare."""
    import datetime as dt

    from django.utils import timezone

    timezone.now = lambda: dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _whole(name: str, study) -> bytes:
    from studies.interchange.archive import study_archive_json
    from studies.interchange.downloads import study_csv_zip, study_runs_zip
    from studies.interchange.session_track import session_track_export

    if name == "tables":
        return study_csv_zip(study=study)
    if name == "runs":
        return study_runs_zip(study=study, unit="query")
    if name == "archive":
        return study_archive_json(study=study).encode("utf-8")
    return session_track_export(study=study)


def _streamed(name: str, study):
    from studies.interchange import downloads

    if name == "tables":
        return downloads.tables_zip_stream(study=study)
    if name == "runs":
        return downloads.runs_zip_stream(study=study, unit="query")
    if name == "archive":
        from studies.interchange.archive import study_archive_stream

        return study_archive_stream(study=study)
    from studies.interchange.session_track import session_track_stream

    return session_track_stream(study=study)


def _digest(body: bytes) -> str:
    if body[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(body)) as zipped:
            members = "".join(f"{n}:{hashlib.sha256(zipped.read(n)).hexdigest()}" for n in zipped.namelist())
        return "zip " + hashlib.sha256(members.encode()).hexdigest()[:16]
    return hashlib.sha256(body).hexdigest()[:16]


def one(name: str, mode: str, db: str) -> None:
    """In a subprocess: build one export, print a JSON line of its figures."""
    _fixed_clock()
    from studies.models import Study

    study = Study.objects.get(slug="demo-ecir-2008")
    tracemalloc.start()
    started = time.perf_counter()
    digest = None
    if mode == "whole":
        body = _whole(name, study)
        size = len(body)
        peak = tracemalloc.get_traced_memory()[1]
        digest = _digest(body)
    else:
        size = sum(len(chunk) for chunk in _streamed(name, study))
        peak = tracemalloc.get_traced_memory()[1]
    seconds = time.perf_counter() - started
    maxrss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "export": name,
                "mode": mode,
                "bytes": size,
                "peak": peak,
                "maxrss_kb": maxrss_kb,
                "seconds": round(seconds, 1),
                "digest": digest,
            }
        )
    )


def measure(db: str, modes: list[str]) -> None:
    try:
        from studies.interchange.downloads import tables_zip_stream  # noqa: F401
    except ImportError:
        modes = [mode for mode in modes if mode == "whole"]
    print(f"{'export':14} {'mode':9} {'size MB':>8} {'peak MB':>8} {'maxrss MB':>9} {'s':>6}  content")
    for name in EXPORTS:
        for mode in modes:
            out = subprocess.run(
                [sys.executable, __file__, "one", "--db", db, "--export", name, "--mode", mode],
                check=True,
                capture_output=True,
                text=True,
                cwd=ROOT,
            ).stdout
            row = json.loads(out.strip().splitlines()[-1])
            print(
                f"{name:14} {mode:9} {row['bytes'] / 1e6:8.1f} {row['peak'] / 1e6:8.1f} "
                f"{row['maxrss_kb'] / 1e3:9.0f} {row['seconds']:6.1f}  {row['digest'] or ''}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("build", "measure", "one"))
    parser.add_argument("--db", default="/tmp/exports-bench.sqlite3")
    parser.add_argument("--participants", type=int, default=2000)
    parser.add_argument("--export", choices=EXPORTS)
    parser.add_argument("--mode", choices=("whole", "streamed"))
    parser.add_argument("--modes", default="whole,streamed", help="measure: the modes, comma-separated")
    args = parser.parse_args()
    _django(str(Path(args.db).resolve()))
    if args.action == "build":
        build(args.participants, args.db)
    elif args.action == "measure":
        measure(args.db, args.modes.split(","))
    else:
        one(args.export, args.mode, args.db)


if __name__ == "__main__":
    main()
