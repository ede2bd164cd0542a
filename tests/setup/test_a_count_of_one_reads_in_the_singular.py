"""Counts read "1 item", never "1 items": templates use Django's `pluralize`, Python's messages
`sessionlab.plurals.counted`; a scan of the templates finds no count printed before a bare plural noun."""

import re
from pathlib import Path

import pytest

from sessionlab.plurals import counted, plural_of
from studies.design.orders import design_summary

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
NOUNS = (
    "participants documents judgments topics items results events queries replications sessions "
    "scenarios codes rows"
).split()
BARE = re.compile(r"\{\{[^}]*\}\} (" + "|".join(NOUNS) + r")\b")


@pytest.mark.parametrize(
    ("count", "noun", "text"),
    [(1, "item", "1 item"), (0, "item", "0 items"), (2, "query", "2 queries"), (1, "study", "1 study")],
)
def test_counted_says_one_in_the_singular(count, noun, text):
    assert counted(count, noun) == text


def test_plurals_of_regular_nouns():
    assert [plural_of(n) for n in ("day", "box", "tie", "study")] == ["days", "boxes", "ties", "studies"]


def test_no_template_prints_a_count_before_a_bare_plural():
    found = [
        f"{path.relative_to(TEMPLATES)}: {match.group(0)}"
        for path in TEMPLATES.rglob("*.html")
        for line in path.read_text().splitlines()
        if "== 1 %}" not in line  # the singular is written out beside it
        for match in BARE.finditer(line)
    ]
    assert found == []


def test_a_design_of_one_scenario_and_one_system_reads_in_the_singular(designed_study):
    systems = list(designed_study.systems.order_by("id"))[:1]
    scenarios = list(designed_study.scenarios.order_by("id"))[:1]
    text = design_summary(study=designed_study, scenarios=scenarios, systems=systems)
    assert "works the 1 scenario," in text and "1 scenarios" not in text
