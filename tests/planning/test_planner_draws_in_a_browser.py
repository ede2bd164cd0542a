"""Chromium draws a plan's power curve with the vendored Plotly under the Content-Security-Policy: no request
leaves the server and no script error."""

import pytest
from django.urls import reverse

from scoring.planning import services

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_power_curve_is_drawn_from_local_files_only(chromium, live_server, designed_study, client):
    a, b = designed_study.systems.order_by("id")
    plan, _ = services.power_plan_create(
        study=designed_study,
        first_system=a,
        second_system=b,
        counts=[8, 16, 24],
        difference=0.5,
        spread=1.0,
        replications=200,
    )  # autocommit: eager
    plan.refresh_from_db()
    assert plan.status == "done"
    client.force_login(designed_study.owner)
    context = chromium.new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    outside, errors, refused = [], [], []
    page.on("request", lambda r: None if r.url.startswith(live_server.url) else outside.append(r.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(live_server.url + reverse("scoring:planning_plan", args=[designed_study.slug, plan.pk]))
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length === 1", timeout=30000)
    # two traces (Monte Carlo and closed form), three points each with error bars
    assert page.evaluate("() => document.querySelector('.js-plotly-plot').data.length") == 2
    assert page.evaluate("() => document.querySelector('.js-plotly-plot').data[0].x") == [8, 16, 24]
    assert page.locator(".plan-notes li").count() >= 3
    assert outside == [] and errors == [] and refused == []
    context.close()
