"""A within-subject study's statistics card leads with the paired test of participant means and says why
(issue 42: the card showed an unpaired test and a one-way ANOVA only, p = 0.30-0.33 against the mixed
model's 0.003); a between-subjects study's card does not show it."""

import csv
import io

import numpy as np
import pytest
from django.core.cache import cache
from django.urls import reverse
from scipy import stats

from scoring.dashboards.charts.statistics import PAIRED_CI_ROW, PAIRED_T_ROW, PAIRED_WILCOXON_ROW
from scoring.lib.statistics import PAIRED_WHY
from studies.models import Study

from .conftest import library_scores

pytestmark = pytest.mark.django_db


def _chart(client, run, fmt, **query):
    url = reverse(f"scoring:chart_{fmt}", args=[run.study.slug, run.pk, "statistics"])
    response = client.get(url, {"summary": "final", **query})
    assert response.status_code == 200, response.content[:500]
    if fmt == "csv":
        return list(csv.reader(io.StringIO(response.content.decode())))
    return response.json()


def _participant_means(built):
    sessions, _, expected = library_scores(built)
    systems = np.array([s["system"] for s in sessions])
    participants = np.array([s["participant"] for s in sessions])
    codes = sorted(set(participants))
    a, b = (
        np.array([expected.final[(systems == s) & (participants == c)].mean() for c in codes])
        for s in ("A", "B")
    )
    return a, b


@pytest.mark.parametrize("unit", ["session", "scenario", "participant"])
def test_the_paired_test_of_participant_means_comes_first_and_equals_scipy(client, scored, unit):
    built, run = scored
    client.force_login(built.study.owner)
    header, *rows = _chart(client, run, "csv", unit=unit)
    at = {name: header.index(name) for name in ("test", "systems", "statistic", "df", "p_value", "n")}
    t_row, w_row, ci_row = rows[:3]
    assert [r[at["test"]] for r in rows[:3]] == [PAIRED_T_ROW, PAIRED_WILCOXON_ROW, PAIRED_CI_ROW]
    assert all(r[at["systems"]] == "A vs B" and r[at["n"]] == "8" for r in rows[:3])
    a, b = _participant_means(built)
    t = stats.ttest_rel(b, a)
    assert float(t_row[at["statistic"]]) == pytest.approx(t.statistic)
    assert float(t_row[at["p_value"]]) == pytest.approx(t.pvalue) and t_row[at["df"]] == "7"
    assert float(t_row[header.index("effect")]) == pytest.approx(t.statistic / np.sqrt(8))
    # Eight untied non-zero differences: the exact signed-rank distribution, and the row says so.
    w = stats.wilcoxon(b, a, method="exact")
    assert w_row[at["df"]] == "exact"
    assert float(w_row[at["statistic"]]) == pytest.approx(w.statistic)
    assert float(w_row[at["p_value"]]) == pytest.approx(w.pvalue)
    low, high = t.confidence_interval(0.95)
    assert float(ci_row[at["statistic"]]) == pytest.approx((b - a).mean())
    bounds = [float(x) for x in ci_row[at["df"]].strip("[]").split(",")]
    assert bounds == [pytest.approx(low), pytest.approx(high)]

    payload = _chart(client, run, "json", unit=unit)
    own_notes = payload["notes"][payload["population"]["notes"] :]
    assert own_notes[0] == PAIRED_WHY and "A vs B" not in own_notes[0]
    assert own_notes[1].startswith("Paired by participant (8 participants with sessions on both)")
    table = next(t for t in payload["figure"]["data"] if t["type"] == "table")
    assert table["cells"]["values"][0][:3] == [PAIRED_T_ROW, PAIRED_WILCOXON_ROW, PAIRED_CI_ROW]


def test_a_between_subjects_study_shows_no_paired_test(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    Study.objects.filter(pk=built.study.pk).update(design="between")
    cache.clear()
    run.refresh_from_db()
    header, *rows = _chart(client, run, "csv")
    tests = [r[header.index("test")] for r in rows]
    assert PAIRED_T_ROW not in tests and tests[0] == "one-way ANOVA (sessions)"
    assert PAIRED_WHY not in _chart(client, run, "json")["notes"]


def test_one_system_kept_by_the_filter_gives_no_paired_block(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    header, *rows = _chart(client, run, "csv", system="A")
    assert PAIRED_T_ROW not in [r[header.index("test")] for r in rows]
    notes = _chart(client, run, "json", system="A")["notes"]
    assert PAIRED_WHY not in notes and any("nothing to compare" in n for n in notes)
