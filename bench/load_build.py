"""Build the load benchmark's study with the code of another checkout (bench/load_paired.py's baseline): run
with that checkout as the working directory and its server's environment (DATABASE_URL, INDEX_ROOT, ...);
migrates with that checkout's migrations, builds the study with bench/load_study.py (this folder's) through
that checkout's services, and writes the participants as JSON.

    python bench/load_build.py --root /path/to/checkout --participants 200 --out players.json
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="the checkout whose code builds the study")
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    root = str(Path(args.root).resolve())
    sys.path.insert(0, root)
    sys.path.append(str(HERE))  # after the checkout: bench/scoring.py would shadow the scoring package
    os.chdir(root)
    import django

    django.setup()
    from studies.design import services

    create = services.study_create
    if "status" not in inspect.signature(create).parameters:  # before studies had a life cycle
        services.study_create = lambda status=None, **kwargs: create(**kwargs)  # type: ignore[assignment]
    from load_study import study_build

    players = study_build(args.participants, args.documents)
    Path(args.out).write_text(json.dumps(players))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
