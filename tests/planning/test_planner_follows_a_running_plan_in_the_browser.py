"""The planner page uses charts.js's loader and progress follower (window.SessionLabCharts) instead of copies
of them: a running plan's bar and count follow its status JSON, and its curve is re-plotted on each tick."""

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from scoring.models import PowerPlan
from scoring.planning import services

pytestmark = pytest.mark.django_db(transaction=True)


def test_planning_js_has_no_loader_of_its_own():
    script = (Path(settings.BASE_DIR) / "static" / "js" / "planning.js").read_text()
    assert "fetch(" not in script and "Plotly" not in script and "SessionLabCharts" in script


def test_a_running_plan_is_followed_and_replotted(chromium, live_server, designed_study, client):
    a, b = designed_study.systems.order_by("id")
    plan, _ = services.power_plan_create(
        study=designed_study,
        first_system=a,
        second_system=b,
        counts=[8, 16],
        difference=0.5,
        spread=1.0,
        replications=200,
    )
    PowerPlan.objects.filter(pk=plan.pk).update(status="running", progress_done=100, progress_total=400)
    client.force_login(designed_study.owner)
    context = chromium.new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    errors, chart_requests = [], []
    page.on("pageerror", lambda error: errors.append(str(error)))
    chart_url = reverse("scoring:planning_chart", args=[designed_study.slug, plan.pk])
    page.on("request", lambda r: chart_requests.append(r.url) if r.url.endswith(chart_url) else None)
    status = {"status": "running", "done": 300, "total": 400, "error": "", "finished": False}
    page.route(
        "**" + reverse("scoring:planning_status", args=[designed_study.slug, plan.pk]),
        lambda route: route.fulfill(status=200, content_type="application/json", body=json.dumps(status)),
    )
    page.goto(live_server.url + reverse("scoring:planning_plan", args=[designed_study.slug, plan.pk]))
    page.wait_for_function(
        "() => document.querySelector('.plan-status .progress-text').textContent"
        " === '300/400 simulated studies'",
        timeout=30000,
    )
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length === 1", timeout=30000)
    assert page.evaluate("() => document.querySelector('.plan-status progress').value") == 300
    assert page.evaluate("() => typeof window.SessionLabCharts.follow") == "function"
    page.wait_for_timeout(1800)  # one more tick (1 s after each answer) re-plots the curve
    assert len(chart_requests) >= 2
    assert errors == []
    context.close()
