"""All scoring benchmarks: single-query eval (bench/scoring_eval.py), then sessions
(bench/scoring_sessions.py).

    .venv/bin/python bench/scoring.py [--topics N ...]   (arguments go to the eval benchmark)

Prints figures, asserts nothing. The eval benchmark runs as a child process, so that the gigabytes of
dicts it builds do not inflate the sessions benchmark's process-wide peak memory; the sessions benchmark is
loaded by path and skipped, with a message, when its file is missing.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load(name: str):
    path = HERE / f"{name}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    print("#### single-query eval: bench/scoring_eval.py")
    sys.stdout.flush()
    subprocess.run([sys.executable, str(HERE / "scoring_eval.py"), *argv], check=False)
    print("\n#### sessions: bench/scoring_sessions.py")
    sessions = load("scoring_sessions")
    if sessions is None:
        print("bench/scoring_sessions.py is missing: skipped")
        return
    sessions.main([])


if __name__ == "__main__":
    main()
