"""The meta-evaluation page and charts, and the statistics card's new rows, on a small built study: the
numbers the pages print are scipy's and statsmodels' on the
stored scores and the participants' post-task answers."""

import csv
import html
import io
import re

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats
from statsmodels.stats.multitest import multipletests

from scoring import services
from scoring.lib.meta_evaluation import meta_evaluate
from scoring.lib.statistics import cohens_dz, mixed_model
from scoring.models import SessionScore
from studies.models import SearchSession

pytestmark = pytest.mark.django_db

QUESTIONNAIRE = [
    {"name": "went_well", "label": "How well did this search go?", "kind": "scale", "min": 1, "max": 5},
    {"name": "effort", "label": "Effort (0-10)", "kind": "integer", "min": 0, "max": 10},
    {"name": "comment", "label": "Anything else?", "kind": "text", "required": False},
]
MEASURES = ["sdcg_per_query", "nsdcg"]


@pytest.fixture
def rated(constructed, django_capture_on_commit_callbacks):
    """The constructed study (32 sessions, systems A and B) with a post-task questionnaire answered (two
    sessions left unanswered), scored by a run that also computes two of the other measures."""
    study = constructed.study
    study.post_task_questionnaire = QUESTIONNAIRE
    study.save(update_fields=["post_task_questionnaire"])
    rng = np.random.default_rng(20)
    sessions = list(SearchSession.objects.filter(assignment__participant__study=study).order_by("pk"))
    for index, session in enumerate(sessions):
        if index in (3, 17):
            continue  # unanswered: left out of the ratings' correlations
        session.post_task_answers = {
            "went_well": int(rng.integers(1, 6)),
            "effort": int(rng.integers(0, 11)),
            "comment": "fine",
        }
        session.save(update_fields=["post_task_answers"])
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=study, measures=MEASURES)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return constructed, run


def _stored(run):
    """Per session, in the dashboards' order: system, participant, scenario, each measure and rating."""
    rows = list(
        SessionScore.objects.filter(run=run, unjudged=False)
        .order_by("system_id", "scenario_id", "participant__code", "session_id")
        .values_list(
            "system__code",
            "participant__code",
            "scenario__code",
            "final",
            "normalized_final",
            "last_query",
            "best_query",
            "average",
            "measures",
            "session__post_task_answers",
        )
    )
    measures = {
        name: np.array([r[3 + i] for r in rows])
        for i, name in enumerate(["final", "normalized_final", "last_query", "best_query", "average"])
    }
    for name in MEASURES:
        measures[name] = np.array([r[8][name] for r in rows])
    ratings = {
        name: np.array([r[9].get(name, np.nan) if r[9] else np.nan for r in rows], dtype=float)
        for name in ("went_well", "effort")
    }
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], measures, ratings


def _page_rows(content: str, rating: str) -> dict:
    section = content.split(f'id="rating-{rating}"')[1].split("</section>")[0]
    rows = {}
    for scope, measure, cells in re.findall(
        r'<tr data-scope="([^"]+)" data-measure="([^"]+)">(.*?)</tr>', section, flags=re.S
    ):
        rows[(html.unescape(scope), measure)] = [
            html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", cells)
        ]
    return rows


@pytest.fixture
def logged_in(client, rated):
    built, run = rated
    client.force_login(built.study.owner)
    return client, built, run


def test_the_page_prints_every_measure_against_every_rating_with_scipys_numbers(logged_in):
    client, built, run = logged_in
    response = client.get(reverse("scoring:meta_evaluation", args=[built.study.slug, run.pk]))
    assert response.status_code == 200
    content = response.content.decode()
    systems, _, _, measures, ratings = _stored(run)
    expected = meta_evaluate(measures, ratings, systems)
    for rating in ("went_well", "effort"):
        rows = _page_rows(content, rating)
        assert len(rows) == 3 * 7  # all systems, A, B; five summaries and the run's two other measures
        y_all = ratings[rating]
        for scope in ("all systems", "A", "B"):
            in_scope = np.ones(len(systems), bool) if scope == "all systems" else np.asarray(systems) == scope
            p_family = {c: [] for c in ("pearson", "spearman")}
            for measure, x_all in measures.items():
                keep = in_scope & np.isfinite(y_all)
                x, y = x_all[keep], y_all[keep]
                cells = rows[(scope, measure)]
                assert cells[2] == str(keep.sum())
                pearson, spearman = stats.pearsonr(x, y), stats.spearmanr(x, y)
                assert cells[3] == f"{pearson.statistic:.3f}" and cells[5] == f"{pearson.pvalue:.4g}"
                assert cells[8] == f"{spearman.statistic:.3f}" and cells[10] == f"{spearman.pvalue:.4g}"
                mine = {
                    (a.coefficient): a
                    for a in expected.correlations
                    if a.scope == scope and a.measure == measure and a.rating == rating
                }
                assert cells[4] == f"[{mine['pearson'].low:.3f}, {mine['pearson'].high:.3f}]"
                assert cells[9] == f"[{mine['spearman'].low:.3f}, {mine['spearman'].high:.3f}]"
                p_family["pearson"].append((rating, measure, pearson.pvalue))
                p_family["spearman"].append((rating, measure, spearman.pvalue))
    # Holm over one scope and coefficient: every (measure, rating) pair of the table.
    overall = {}
    for rating in ("went_well", "effort"):
        keep = np.isfinite(ratings[rating])
        for measure, x_all in measures.items():
            overall[(rating, measure)] = stats.pearsonr(x_all[keep], ratings[rating][keep]).pvalue
    keys = list(overall)
    holm = dict(zip(keys, multipletests([overall[k] for k in keys], method="holm")[1], strict=True))
    bh = dict(zip(keys, multipletests([overall[k] for k in keys], method="fdr_bh")[1], strict=True))
    for rating in ("went_well", "effort"):
        rows = _page_rows(content, rating)
        for measure in measures:
            cells = rows[("all systems", measure)]
            assert cells[6] == f"{holm[(rating, measure)]:.4g}" and cells[7] == f"{bh[(rating, measure)]:.4g}"
    assert 'id="rating-comment"' not in content  # a text item is not a rating


def test_the_chart_and_its_csv_give_the_same_numbers(logged_in):
    client, built, run = logged_in
    systems, _, _, measures, ratings = _stored(run)
    url = reverse("scoring:chart_csv", args=[built.study.slug, run.pk, "meta-evaluation"])
    table = list(csv.reader(io.StringIO(client.get(url).content.decode())))
    header, rows = table[0], table[1:]
    assert header[:11] == [
        "scope",
        "measure",
        "rating",
        "coefficient",
        "n",
        "value",
        "ci_low",
        "ci_high",
        "p_value",
        "p_holm",
        "p_bh",
    ]
    assert len(rows) == 3 * 7 * 2 * 2
    row = next(r for r in rows if r[:4] == ["B", "nsdcg", "effort", "spearman"])
    keep = (np.asarray(systems) == "B") & np.isfinite(ratings["effort"])
    assert float(row[5]) == pytest.approx(
        stats.spearmanr(measures["nsdcg"][keep], ratings["effort"][keep]).statistic
    )
    payload = client.get(
        reverse("scoring:chart_json", args=[built.study.slug, run.pk, "meta-evaluation"]),
        {"rating": "effort", "coefficient": "spearman"},
    ).json()
    points = {
        t["name"]: dict(zip(t["y"], t["x"], strict=True))
        for t in payload["figure"]["data"]
        if t["type"] == "scatter"
    }
    assert set(points) == {"all systems", "A", "B"}
    assert points["B"]["nsdcg"] == pytest.approx(float(row[5]), abs=1e-6)
    assert "Effort (0-10)" in payload["figure"]["layout"]["title"]["text"]
    assert "Averaged over: sessions." in payload["notes"]
    bad = client.get(
        reverse("scoring:chart_json", args=[built.study.slug, run.pk, "meta-evaluation"]),
        {"rating": "comment"},
    )
    assert (
        bad.status_code == 400 and "rating 'comment' is not one of went_well, effort" in bad.json()["error"]
    )


def test_the_rankings_chart_is_kendalls_tau_of_the_system_means(logged_in):
    client, built, run = logged_in
    systems, _, _, measures, ratings = _stored(run)
    url = reverse("scoring:chart_csv", args=[built.study.slug, run.pk, "meta-rankings"])
    rows = list(csv.reader(io.StringIO(client.get(url).content.decode())))[1:]
    s = np.asarray(systems)

    def means(values):
        return [np.nanmean(values[s == code]) for code in ("A", "B")]

    row = next(r for r in rows if r[:2] == ["final", "rating: went_well"])
    expected = stats.kendalltau(means(measures["final"]), means(ratings["went_well"]))
    assert float(row[2]) == pytest.approx(expected.statistic) and row[4] == "2"
    page = client.get(reverse("scoring:meta_evaluation", args=[built.study.slug, run.pk])).content.decode()
    assert f"<td>{means(measures['final'])[0]:.4g}</td>" in page


def test_on_participants_each_ones_sessions_on_a_system_are_averaged_first(logged_in):
    client, built, run = logged_in
    systems, participants, _, measures, ratings = _stored(run)
    page = client.get(
        reverse("scoring:meta_evaluation", args=[built.study.slug, run.pk]), {"unit": "participant"}
    )
    rows = _page_rows(page.content.decode(), "went_well")
    cells = {}
    for i, (p, s) in enumerate(zip(participants, systems, strict=True)):
        cells.setdefault((p, s), []).append(i)
    x = np.array([measures["final"][m].mean() for m in cells.values()])
    y = np.array([np.nanmean(ratings["went_well"][m]) for m in cells.values()])
    assert rows[("all systems", "final")][2] == str(len(cells)) == "16"
    assert rows[("all systems", "final")][3] == f"{stats.pearsonr(x, y).statistic:.3f}"


def test_a_study_without_answers_says_there_is_nothing_to_correlate(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    page = client.get(reverse("scoring:meta_evaluation", args=[built.study.slug, run.pk])).content.decode()
    # The default post-task item exists, but nobody answered it: every correlation is undefined, and said so.
    assert "fewer than three sessions have both values" in page
    payload = client.get(
        reverse("scoring:chart_json", args=[built.study.slug, run.pk, "meta-evaluation"])
    ).json()
    assert payload["figure"]["data"]  # drawn (empty points), never a 5xx


def test_others_get_404_and_a_bad_filter_400(client, charlie, rated):
    built, run = rated
    url = reverse("scoring:meta_evaluation", args=[built.study.slug, run.pk])
    client.force_login(charlie)
    assert client.get(url).status_code == 404
    client.force_login(built.study.owner)
    response = client.get(url, {"system": "Z"})
    assert response.status_code == 400 and b"system 'Z'" in response.content


def test_the_statistics_card_gives_adjusted_p_effect_sizes_permutation_and_mixed_model(logged_in):
    client, built, run = logged_in
    systems, participants, scenarios, measures, _ = _stored(run)
    url = reverse("scoring:chart_csv", args=[built.study.slug, run.pk, "statistics"])
    table = list(
        csv.reader(io.StringIO(client.get(url, {"summary": "final", "unit": "participant"}).content.decode()))
    )
    header, rows = table[0], {(r[0], r[1]): r for r in table[1:]}
    assert header[7:13] == ["p_holm", "p_bh", "effect_size", "effect", "effect_low", "effect_high"]
    # Each participant's mean per system, the paired unit.
    s, p = np.asarray(systems), np.asarray(participants)
    codes = sorted(set(participants))
    a = np.array([measures["final"][(s == "A") & (p == c)].mean() for c in codes])
    b = np.array([measures["final"][(s == "B") & (p == c)].mean() for c in codes])
    t_row = rows[("paired t-test (participant means)", "A vs B")]
    dz = cohens_dz(a, b)
    assert t_row[9] == "Cohen's d_z" and float(t_row[10]) == pytest.approx(
        stats.ttest_rel(b, a).statistic / np.sqrt(8)
    )
    assert (float(t_row[11]), float(t_row[12])) == (pytest.approx(dz.low), pytest.approx(dz.high))
    perm = rows[("paired permutation test (participant means)", "A vs B")]
    exact = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(y - x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
    )
    assert float(perm[4]) == pytest.approx(exact.pvalue) and "exact, all 256" in perm[3]
    wilcoxon = rows[("Wilcoxon signed-rank (participant means)", "A vs B")]
    assert wilcoxon[9] == "rank-biserial r"
    assert rows[("Friedman (participant means)", "all")][9] == "Kendall's W"
    mixed = rows[("linear mixed model (sessions; participant and scenario random)", "A vs B")]
    fitted = mixed_model(measures["final"], systems, participants, scenarios).effects[0]
    assert float(mixed[2]) == pytest.approx(fitted.estimate) and float(mixed[4]) == pytest.approx(
        fitted.p_value
    )
    assert (float(mixed[11]), float(mixed[12])) == (pytest.approx(fitted.low), pytest.approx(fitted.high))
    assert mixed[5] == "32"
    notes = client.get(
        reverse("scoring:chart_json", args=[built.study.slug, run.pk, "statistics"]),
        {"summary": "final", "unit": "participant"},
    ).json()["notes"]
    assert any(n.startswith("Mixed model value ~ system + (1 | participant) + (1 | scenario)") for n in notes)
    assert any(n.startswith("Effect sizes with 95% intervals") for n in notes)
