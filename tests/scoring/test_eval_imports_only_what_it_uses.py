"""`python -m scoring eval` imports only what eval uses: no scipy (the agreement sub-command's statistics
cost 1.5 s of start-up), no pandas (pyarrow's to_numpy pulls it: 0.19 s of a 0.75 s eval of a 2,000-topic
run), and each other sub-command's module only when that sub-command runs."""

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
      "scoring.lib.session_cli", "scoring.lib.reliability", "scoring.lib.statistics", "pandas", "django"))
      or m in ("pandas", "django")))
"""


def loaded(*argv: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CHECK, *argv], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return eval(done.stdout.strip().splitlines()[-1])


def test_eval_help_imports_no_scipy_and_no_other_sub_command():
    assert loaded("eval", "--help") == []


def test_python_m_scoring_eval_help_imports_no_scipy_pandas_or_django():
    """The whole `python -m scoring` entry point, as a user starts it (scoring/__main__.py included)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "scoring", "eval", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "scoring.lib.cli" in imported  # the report is really of this command
    assert not {m.split(".")[0] for m in imported} & {"scipy", "pandas", "django"}


def test_eval_of_files_read_by_arrow_imports_no_pandas(tmp_path):
    pytest.importorskip("pyarrow")
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"{t} 0 D{t}-{d} {d % 3}\n" for t in range(50) for d in range(20)))
    lines = (f"{t} Q0 D{t}-{d} {d + 1} {100 - d / 10:.2f} r\n" for t in range(100) for d in range(600))
    run.write_text("".join(lines))
    assert run.stat().st_size > 1 << 20  # past split.py's _ARROW_MIN_BYTES: the arrow reader's path
    assert loaded("eval", str(qrels), str(run)) == []


def test_the_top_level_help_imports_no_sub_command_module():
    assert loaded("--help") == []


def test_agreement_still_loads_its_own_modules():
    modules = loaded("agreement", "--help")
    assert "scoring.lib.agreement_cli" in modules and "scipy" in modules


@pytest.mark.parametrize("name", sorted(cli.SUBCOMMANDS))
def test_the_placeholder_help_lines_are_the_commands_own(name):
    full = {a.dest: a.help for a in cli.build_parser(name)._subparsers._group_actions[0]._choices_actions}
    assert full[name] == cli.SUBCOMMANDS[name][2]
