"""The population is stated once per page, in the note at the top of the dashboard: a card whose population
is the page's repeats none of it; a card that differs (Table 1 counts participants, Figure 4 draws sessions
one by one) says how in one line."""

import html
import re

import pytest
from django.urls import reverse

from scoring.dashboards.registry import drawn_charts
from tests.browser.test_pages_obey_the_content_security_policy import _context

pytestmark = pytest.mark.django_db


def _key(page: str) -> str:
    return html.unescape(re.search(r'id="population-counted" data-population-key="([^"]*)"', page).group(1))


def _json(client, run, chart):
    return client.get(reverse("scoring:chart_json", args=[run.study.slug, run.pk, chart])).json()


def test_the_page_s_key_is_the_same_cards_and_differs_where_a_card_does(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    key = _key(client.get(reverse("scoring:run_detail", args=[built.study.slug, run.pk])).content.decode())
    for chart in ("curves", "query-counts", "statistics", "attention"):
        payload = _json(client, run, chart)
        assert payload["population"]["key"] == key, chart
        assert payload["notes"][0].startswith("Population: ") and payload["population"]["notes"] == 4
    table_1 = _json(client, run, "participants")["population"]
    assert table_1["key"] != key
    assert table_1["line"].startswith("This card differs from the note at the top: population: ")
    assert "averaged over participants (not scores)" in table_1["line"]


@pytest.mark.django_db(transaction=True)
def test_in_the_browser_a_card_repeats_no_population_note(chromium, live_server, scored):
    built, run = scored
    context = _context(chromium, live_server, built.study.owner)
    page = context.new_page()
    page.goto(live_server.url + reverse("scoring:run_detail", args=[built.study.slug, run.pk]))
    page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot').length === {len(drawn_charts(2))}", timeout=60000
    )
    notes = page.eval_on_selector_all(
        "section.chart-card",
        "els => els.map(e => [e.id, Array.from(e.querySelectorAll('.chart-notes li'))"
        ".map(li => li.textContent)])",
    )
    cards = dict(notes)
    every = [text for texts in cards.values() for text in texts]
    assert not any(text.startswith("Population: ") or text.startswith("Averaged over: ") for text in every)
    assert cards["participants"][0].startswith("This card differs from the note at the top")
    assert not any(text.startswith("This card differs") for text in cards["curves"])
    assert page.locator("#population-counted").count() == 1
    context.close()
