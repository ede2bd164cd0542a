"""A card that carries no information at the study's size is not drawn; its title stays with one line saying
why: Kendall's tau between the rankings of two systems can only be +1 or -1. From three systems it is drawn;
its JSON and CSV answer either way."""

import html

import pytest
from django.urls import reverse

from scoring.dashboards.registry import CHARTS, chart_hidden, drawn_charts

pytestmark = pytest.mark.django_db

REASON = "Kendall's tau between two rankings can only be +1 or -1"


def test_the_rankings_heatmap_is_not_drawn_with_two_systems(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    page = html.unescape(
        client.get(reverse("scoring:run_detail", args=[built.study.slug, run.pk])).content.decode()
    )
    rankings = reverse("scoring:chart_json", args=[built.study.slug, run.pk, "meta-rankings"])
    assert f'data-url="{rankings}' not in page
    assert 'class="card chart-card chart-hidden" id="meta-rankings"' in page
    assert f"Not drawn: with 2 systems, {REASON}" in page
    assert page.count('class="chart"') == len(CHARTS) - 1
    assert client.get(rankings).status_code == 200  # the data stay available


def test_a_filter_down_to_two_systems_hides_it_too_and_three_draw_it():
    assert chart_hidden("meta-rankings", 1).startswith("Not drawn: with 1 system,")
    assert chart_hidden("meta-rankings", 3) == ""
    assert drawn_charts(3) == list(CHARTS)
    assert drawn_charts(2) == [name for name in CHARTS if name != "meta-rankings"]
