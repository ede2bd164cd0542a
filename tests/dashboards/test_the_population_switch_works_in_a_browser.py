"""A researcher switches the analysis population on the dashboard in the browser: the Population
box of the filters (base and leave-outs) redraws every chart for the new population, each chart's subtitle
and the page say which population and n; "Make ... the study's default" stores it on the study."""

import pytest
from django.urls import reverse

from scoring import services
from scoring.dashboards.registry import drawn_charts
from studies.models import ParticipantState, Study
from studies.participation.recruitment.states import participant_state_set

from .conftest import build_study

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_population_box_redraws_the_charts_and_sets_the_default(
    chromium, live_server, designed_study, collection_docs, client
):
    build_study(designed_study, collection_docs, participants=4)
    for participant in designed_study.participants.all():
        state = ParticipantState.WITHDRAWN if participant.code == "P004" else ParticipantState.COMPLETED
        participant_state_set(participant=participant, state=state)
    run = services.scoring_run_create(study=designed_study)  # autocommit: scored eagerly at once
    client.force_login(designed_study.owner)
    context = chromium.new_context(viewport={"width": 1366, "height": 900})
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(live_server.url + reverse("scoring:run_detail", args=[designed_study.slug, run.pk]))
    assert "n = 16 sessions of 4 participants" in page.locator("#population-counted").inner_text()

    page.select_option("#population select[name=population]", "completers")
    page.locator("#population input[name=leave_out][value=excluded]").uncheck()
    page.locator("form.filters button", has_text="Apply").click()
    page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot').length === {len(drawn_charts(2))}", timeout=30000
    )
    assert "population=completers" in page.url
    assert "n = 12 sessions of 3 participants" in page.locator("#population-counted").inner_text()
    titles = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].map(t => t.textContent)"
    )
    assert (
        sum("population: completers only, n = 12 sessions" in t for t in titles) >= len(drawn_charts(2)) - 1
    )
    assert any("population: completers only, n = 3 participants" in t for t in titles)  # Table 1

    page.locator("#population-default button").click()
    page.wait_for_load_state()
    assert "population=completers" in page.url  # back on the same view
    assert Study.objects.get(pk=designed_study.pk).analysis_population == "completers"
    assert page.locator("#population-default").count() == 0  # now the default: nothing to make so
    assert errors == []
    context.close()
