"""A researcher, starting from an empty database and only the browser, uploads the Cranfield zip, watches the
progress bar finish, creates a study on it with two built-in systems and four scenarios from its topics, adds
NASA-TLX after each task, enrols eight participants, previews the study, and scores it once two simulated
participants have worked. Debian's Chromium through Playwright.

With SESSIONLAB_SCREENSHOTS=<folder> the test saves a screenshot of each step there (docs/img/ is made so)."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from studies.models import Collection, Study
from studies.simulation.participants import participants_simulate
from tests.browser.csp import csp_listen, csp_violations


def shot(page, name):
    folder = os.environ.get("SESSIONLAB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"setup-{name}.png"), full_page=True)


@pytest.mark.django_db(transaction=True)
def test_a_researcher_sets_up_a_study_in_the_browser(live_server, chromium, cranfield_zip, django_user_model):
    django_user_model.objects.create_user("alice", password="alice-password", is_staff=True)
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(60_000)
    reports = csp_listen(page)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit]")

    # 1. The collection: upload, then the progress bar runs to its end.
    page.click("nav >> text=Collections")
    page.fill("input[name=name]", "Cranfield")
    page.select_option("select[name=format]", "cranfield")
    page.set_input_files(
        "input[name=documents]",
        {"name": "cranfield.zip", "mimeType": "application/zip", "buffer": cranfield_zip},
    )
    shot(page, "1-upload")
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#upload[data-finished='1']")
    assert page.eval_on_selector("#upload-progress", "bar => bar.value") == 100
    assert "1400 documents, 225 topics" in page.inner_text("#upload-stage")
    page.reload()  # the progress is the database's: a reload shows the same
    page.wait_for_selector("#upload[data-finished='1']")
    shot(page, "2-progress")
    page.click("#upload-collection")
    assert "bm25_title_text" in page.inner_text("#indexes") and "not built" not in page.inner_text("#indexes")

    # 2. The study, on that collection.
    page.click("nav >> text=Studies")
    page.goto(f"{live_server.url}/studies/new/")
    page.fill("input[name=name]", "Wings and flow")
    page.fill("textarea[name=consent_text]", "You may stop at any time.")
    page.click("button[type=submit]")
    page.click("#setup-links >> text=Set-up checklist")
    assert page.get_attribute("#step-collection", "data-done") == "0"
    shot(page, "3-checklist-empty")
    page.click("#step-collection a")
    page.click("button[type=submit]")  # Cranfield is the only choice

    # 3. Two built-in systems, picked by name.
    page.goto(f"{live_server.url}/studies/wings-and-flow/setup/systems/")
    for code, configuration in (("A", "bm25_title_text"), ("B", "bm25_text")):
        page.fill("input[name=system-code]", code)
        page.fill("input[name=system-name]", f"System {code}")
        page.check("input[name=system-backend][value=builtin]")
        page.select_option("select[name=system-configuration]", configuration)
        page.click("#system-form button[type=submit]")
    page.fill("#systems input[name=query]", "boundary layer")
    shot(page, "4-systems")
    page.click("#systems >> text=Test this system >> nth=0")
    # The click returns once the answer's page is committed, perhaps before it is parsed: wait for the list.
    expect(page.locator("#test-results li"), "the test page shows no ten results").to_have_count(
        10, timeout=30_000
    )

    # 4. Four scenarios from the collection's topics.
    page.goto(f"{live_server.url}/studies/wings-and-flow/setup/scenarios/")
    for topic in ("1", "2", "3", "4"):
        page.check(f"input[name=pick-topics][value='{topic}']")
    page.click("#topic-form button[type=submit]")
    expect(page.locator("#scenarios tbody tr")).to_have_count(4, timeout=30_000)
    shot(page, "5-scenarios")

    # 5. NASA-TLX after each task.
    page.goto(f"{live_server.url}/studies/wings-and-flow/setup/questionnaires/")
    page.select_option("select[name=instrument-which]", "post_task_questionnaire")
    page.select_option("select[name=instrument-instrument]", "nasa_tlx")
    page.click("#instrument-form button[type=submit]")
    assert "tlx_frustration" in page.inner_text("#post_task_questionnaire")
    shot(page, "6-questionnaires")

    # 6. The checklist is complete; the draft is opened, then eight participants are enrolled.
    page.click("nav.setup-nav >> text=Checklist")
    page.wait_for_selector("#setup-ready")
    assert "still a draft" in page.inner_text("#setup-ready")
    shot(page, "7-checklist-ready")
    page.click("nav.setup-nav >> text=Study page")
    assert page.inner_text("#study-status") == "Draft"
    with page.expect_navigation():
        page.click("#status-form button[value=open]")
    assert page.inner_text("#study-status") == "Open"
    page.fill("input[name=enrol-count]", "8")
    with page.expect_navigation():
        page.click("form[action$='/participants/enrol/'] button")
    assert page.locator("#participants tbody tr").count() == 8
    page.goto(f"{live_server.url}/studies/wings-and-flow/setup/")
    assert "Latin square" in page.inner_text("#step-systems")

    # 7. A preview, stored apart; then two (simulated) participants work and the researcher scores the study.
    page.goto(f"{live_server.url}/studies/wings-and-flow/")
    with page.context.expect_page() as opened:
        page.click("#preview-start")
    preview = opened.value
    preview.wait_for_load_state()
    assert "/p/" in preview.url
    preview.close()
    study = Study.objects.get(slug="wings-and-flow")
    version = study.reference_versions.get()
    reference = {}
    for topic, doc, grade in version.judgments.values_list("topic_id", "document__external_id", "grade"):
        reference.setdefault(topic, {})[doc] = grade
    workers = list(study.participants.filter(preview_at__isnull=True).order_by("enrolment_index")[:2])
    assert participants_simulate(participants=workers, reference=reference) == 8
    page.goto(f"{live_server.url}/scoring/wings-and-flow/")
    with page.expect_navigation():
        page.click("text=Score the study")
    page.goto(f"{live_server.url}/scoring/wings-and-flow/")
    shot(page, "8-dashboards")
    assert "Done: 8 sessions" in page.inner_text("main")  # two participants x four scenarios, scored

    # At phone width, no set-up page is wider than the phone (wide tables scroll inside their box).
    page.set_viewport_size({"width": 390, "height": 844})
    for step in ("", "systems/", "scenarios/", "questionnaires/", "consent/"):
        page.goto(f"{live_server.url}/studies/wings-and-flow/setup/{step}")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, step

    assert study.collection == Collection.objects.get(name="Cranfield")
    assert list(study.systems.values_list("code", "config")) == [
        ("A", {"configuration": "bm25_title_text"}),
        ("B", {"configuration": "bm25_text"}),
    ]
    assert list(study.scenarios.values_list("topic_id", flat=True)) == ["1", "2", "3", "4"]
    assert (
        len(study.post_task_questionnaire) == 6
        and study.participants.filter(preview_at__isnull=True).count() == 8
    )
    assert study.reference_versions.get().judgments.count() > 0  # Cranfield's qrels, on the 0..3 scale
    assert csp_violations(page, reports) == []
