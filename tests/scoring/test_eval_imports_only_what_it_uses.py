"""`python -m scoring eval` imports only what eval uses: no scipy (the agreement sub-command's statistics
cost 1.5 s of start-up), and each other sub-command's module only when that sub-command runs."""

import subprocess
import sys
from pathlib import Path

import pytest

from scoring.lib import cli

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
import sys
from scoring.lib.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(m for m in sys.modules if m == "scipy" or m.startswith(("scipy.", "scoring.lib.agreement_cli",
      "scoring.lib.session_cli", "scoring.lib.reliability", "scoring.lib.statistics"))))
"""


def loaded(*argv: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CHECK, *argv], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return eval(done.stdout.strip().splitlines()[-1])


def test_eval_help_imports_no_scipy_and_no_other_sub_command():
    assert loaded("eval", "--help") == []


def test_the_top_level_help_imports_no_sub_command_module():
    assert loaded("--help") == []


def test_agreement_still_loads_its_own_modules():
    modules = loaded("agreement", "--help")
    assert "scoring.lib.agreement_cli" in modules and "scipy" in modules


@pytest.mark.parametrize("name", sorted(cli.SUBCOMMANDS))
def test_the_placeholder_help_lines_are_the_commands_own(name):
    full = {a.dest: a.help for a in cli.build_parser(name)._subparsers._group_actions[0]._choices_actions}
    assert full[name] == cli.SUBCOMMANDS[name][2]
