"""`make lint` enforces the one direction of imports with import-linter's contracts (pyproject.toml): a wrong
import added to a copy of the tree breaks them, and the tree as it is keeps them."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _tree_copy(tmp_path: Path) -> Path:
    for package in ("studies", "scoring", "sessionlab"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _lint(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=tree, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    ("module", "line", "expected"),
    [
        (
            "studies/design/probe.py",
            "from scoring import services",
            "studies.design.probe -> scoring.services",
        ),
        ("scoring/lib/probe.py", "import django.db", "scoring.lib.probe -> django"),
        # The infrastructure reaching up into an app (the apps register their checks with it instead).
        ("sessionlab/health.py", "from studies.search import index_versions", "sessionlab.health -> studies"),
        ("sessionlab/outbound.py", "import scoring.models", "sessionlab.outbound -> scoring.models"),
        # The kernel and the rooms beside it reaching up into design or participation, which ask them.
        (
            "studies/kernel/steps.py",
            "from studies.design import lifecycle",
            "studies.kernel.steps -> studies.design.lifecycle",
        ),
        (
            "studies/accounts/access.py",
            "from studies.participation.events import rules",
            "studies.accounts.access -> studies.participation.events.rules",
        ),
        # A room reaching up a layer without a cycle: search, the ground floor, asking questionnaires.
        (
            "studies/search/systems.py",
            "from studies.questionnaires import items",
            "studies.search.systems -> studies.questionnaires.items",
        ),
        # A cycle inside a subpackage: rules importing ingest, which imports rules.
        (
            "studies/participation/events/rules.py",
            "from studies.participation.events import ingest",
            "No cycles are allowed in studies.participation.events",
        ),
        # A cycle between the participant's rooms: the event batch reaching up into the way, which uses it.
        (
            "studies/participation/events/rules.py",
            "from studies.participation.way import steps",
            "No cycles are allowed in studies.participation",
        ),
    ],
)
def test_a_wrong_import_fails_the_contracts(tmp_path, module, line, expected):
    tree = _tree_copy(tmp_path)
    target = tree / module
    target.write_text((target.read_text() if target.exists() else "") + f"\n{line}  # noqa\n")
    output = _lint(tree).stdout
    assert "0 broken" not in output, output
    assert expected in output, output


def test_the_tree_keeps_every_contract():
    result = _lint(ROOT)
    assert "0 broken" in result.stdout, result.stdout + result.stderr
