"""Both installs show progress: `make demo`'s (the app) and `make test`'s or `make check`'s (the test
toolchain) each say first what they install, and pip prints a line per package (no --quiet), so a newcomer
never waits minutes on a silent terminal. Read from the Makefile with `make -n -B`: nothing is installed."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def recipe(target: str) -> list[str]:
    made = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line.strip() for line in made.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("target", [".venv/.installed-app", ".venv/.installed"])
def test_an_install_says_what_it_installs_and_pip_prints_its_packages(target):
    lines = recipe(target)
    installs = [n for n, line in enumerate(lines) if "pip install" in line]
    assert installs, lines
    assert any(line.startswith("echo ") for line in lines[: installs[0]]), lines  # said before pip starts
    for n in installs:
        words = lines[n].split()
        assert "--quiet" not in words and "-q" not in words, lines[n]
        assert "--progress-bar" in words, lines[n]  # one line per package, not a bar redrawn in a log
