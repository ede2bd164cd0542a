"""In Chromium: the dashboard of a default run that is done but not current (a reference version committed,
its re-score not yet run) says why, follows status.json, and reloads once the re-score has made the run
current. A run that no re-score will change is not followed."""

import pytest
from django.urls import reverse

from scoring import services

from .conftest import build_study, reference_version

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_page_says_why_and_reloads_when_the_run_is_current(
    chromium, live_server, designed_study, collection_docs, client
):
    built = build_study(designed_study, collection_docs, participants=4)
    run = services.scoring_run_create(study=designed_study)  # autocommit: scored eagerly at once
    grades = {topic: {ext: 3 for ext in judged} for topic, judged in built.grades.items()}
    reference_version(designed_study, grades, docs=collection_docs)  # committed; the hook not yet run
    client.force_login(designed_study.owner)
    context = chromium.new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(live_server.url + reverse("scoring:run_detail", args=[designed_study.slug, run.pk]))
    freshness = page.locator(".run-status .freshness")
    assert freshness.inner_text() == (
        "Not current: scored on reference v1, v2 is the latest. "
        "The default run is re-scored as the data change."
    )
    assert page.locator(".run-status").get_attribute("data-finished") == "0"
    reference_version(designed_study, built.grades, docs=collection_docs)  # v3, still no hook: followed
    page.wait_for_function(
        "() => document.querySelector('.freshness-reasons').textContent"
        " === 'scored on reference v1, v3 is the latest'",
        timeout=30000,
    )

    with page.expect_navigation(timeout=30000):
        services.reference_version_changed(study_id=designed_study.pk)  # autocommit: re-scored at once
    page.wait_for_load_state()
    assert (
        page.locator(".run-status .freshness")
        .inner_text()
        .startswith("Current: scored on the study's latest data (reference v3)")
    )
    assert page.locator(".run-status").get_attribute("data-finished") == "1"
    assert errors == []
    context.close()
