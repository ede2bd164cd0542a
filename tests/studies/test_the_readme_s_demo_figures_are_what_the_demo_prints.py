"""The README's figures of the demo are what a fresh demo prints: the summary line as the README shows it
(30 simulated participants, 120 sessions, the 2 more enrolled for the reader whose private links close the
output, the plan's power at 30 and its 80% count), the 32 participants the study page lists, and the planning
table's power and intervals at every count. The demo is seeded, so the figures are the same on every load."""

import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command

from scoring.models import PowerPlan
from scoring.planning.selectors import plan_curve
from studies.models import Study

pytestmark = pytest.mark.django_db(transaction=True)  # on-commit queueing, as in the command
README = (Path(django_settings.BASE_DIR) / "README.md").read_text(encoding="utf-8")


def one_line(text: str) -> str:
    return re.sub(r"(run|plan) \d+", r"\1 N", " ".join(text.split()))


def readme_demo_output() -> str:
    section = README.split("## The demo: where to click\n", 1)[1]
    return section.split("```\n", 2)[1]


@pytest.fixture
def fresh_demo(settings, tmp_path, capsys):
    settings.INDEX_ROOT = tmp_path / "indexes"
    settings.DEMO_DATA = ""  # the shipped Cranfield, as `make demo-data` on a fresh clone
    call_command("load_demo", "--port", "8000")
    return capsys.readouterr().out


def test_the_readme_shows_the_demo_s_output_as_it_is_printed(fresh_demo):
    shown = readme_demo_output()
    printed_summary = next(line for line in fresh_demo.splitlines() if line.startswith("Demo study"))
    readme_summary = shown.split("\n\n", 1)[0]
    assert one_line(readme_summary) == one_line(printed_summary)
    printed_links = re.findall(r"^\s+http://127\.0\.0\.1:8000/p/[^/]+/$", fresh_demo, re.M)
    assert len(printed_links) == 2
    assert len(re.findall(r"^\s+http://127\.0\.0\.1:8000/p/<token>/$", shown, re.M)) == len(printed_links)
    study = Study.objects.get(slug="demo-ecir-2008")
    enrolled = study.participants.count()
    assert f"the {enrolled} participants (the 30 simulated and your {len(printed_links)})" in " ".join(
        README.split()
    )
    assert "30 simulated participants worked 120 sessions" in printed_summary


def test_the_readme_s_planning_table_is_the_demo_s_own_plan(fresh_demo):
    curve = plan_curve(PowerPlan.objects.get(label="the demo's own plan"))
    table = README.split("| participants |", 1)[1]
    counts, _rule, power, interval = (row.strip().strip("|").split("|") for row in table.splitlines()[:4])
    counts = [int(c.strip(" *")) for c in counts]
    at = {point.n: point for point in curve.points}
    assert counts == sorted(at)
    assert [p.strip(" *") for p in power[1:]] == [f"{at[n].power:.2f}" for n in counts]
    assert [i.strip() for i in interval[1:]] == [
        f"{at[n].low:.2f}-{at[n].high:.2f}".replace("0.", ".") for n in counts
    ]
    assert f"{curve.smallest} participants reach\n80% on this curve" in README
