"""export_csv writes text cells a spreadsheet would run as a formula (=, +, -, @, tab, CR at the start) with a
leading ' by default; numbers, negative ones included, stay numbers; --raw writes every cell as it is."""

import csv

import pytest
from django.core.management import call_command

from sessionlab.spreadsheet import safe_cell
from studies.models import Query

pytestmark = pytest.mark.django_db

FORMULAS = [
    '=HYPERLINK("http://evil.example","x")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1",
    "\r=1",
]


def _queries(path):
    with open(path / "queries.csv", newline="", encoding="utf-8") as handle:
        return [row["text"] for row in csv.DictReader(handle)]


@pytest.fixture
def hostile_queries(worked_study):
    texts = [*FORMULAS, "-0.5", "ordinary query"]
    queries = list(Query.objects.filter(session__assignment__participant__study=worked_study).order_by("pk"))
    extra = texts[len(queries) :]
    for query, text in zip(queries, texts, strict=False):
        Query.objects.filter(pk=query.pk).update(text=text)
    session = queries[-1].session
    for position, text in enumerate(extra, start=queries[-1].position + 1):
        Query.objects.create(session=session, position=position, text=text, issued_at=queries[-1].issued_at)
    return worked_study, texts


def test_the_export_escapes_formulas_by_default(hostile_queries, tmp_path):
    study, texts = hostile_queries
    call_command("export_csv", study.slug, "-o", str(tmp_path))
    written = _queries(tmp_path)
    assert sorted(written) == sorted(["'" + t for t in FORMULAS] + ["-0.5", "ordinary query"])


def test_raw_writes_the_cells_as_they_are(hostile_queries, tmp_path):
    study, texts = hostile_queries
    call_command("export_csv", study.slug, "-o", str(tmp_path), "--raw")
    assert sorted(_queries(tmp_path)) == sorted(texts)


@pytest.mark.parametrize("value", [-0.5, 3, -1e-3, "-0.5", "+3", "-1.5e-3", "12", ".5", "", "query", "'=x"])
def test_numbers_and_plain_text_are_left_alone(value):
    assert safe_cell(value) == value


@pytest.mark.parametrize("value", [*FORMULAS, "-", "+", "-inf", "-1-", "=", "@", "-0x10"])
def test_formula_starts_get_a_quote(value):
    assert safe_cell(value) == "'" + value
