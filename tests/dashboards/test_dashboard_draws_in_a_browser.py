"""Chromium draws every chart of a run page with the
vendored Plotly, offline: no request leaves the server."""

import pytest
from django.urls import reverse

from scoring import services
from scoring.dashboards.registry import drawn_charts

from .conftest import build_study

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_chart_is_drawn_from_local_files_only(
    chromium, live_server, designed_study, collection_docs, client
):
    build_study(designed_study, collection_docs, participants=4)
    run = services.scoring_run_create(study=designed_study)  # autocommit: scored eagerly at once
    run.refresh_from_db()
    assert run.status == "done"
    client.force_login(designed_study.owner)
    cookie = client.cookies["sessionid"]
    context = chromium.new_context()
    context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": live_server.url}])
    page = context.new_page()
    outside = []
    page.on(
        "request",
        lambda request: None if request.url.startswith(live_server.url) else outside.append(request.url),
    )
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(live_server.url + reverse("scoring:run_detail", args=[designed_study.slug, run.pk]))
    page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot').length === {len(drawn_charts(2))}", timeout=30000
    )
    assert page.locator(".chart-notes li").count() > 0
    assert page.locator(".modebar-btn[data-title*='png' i]").count() == len(drawn_charts(2))
    assert outside == [] and errors == []
    context.close()
