"""A researcher, in Chromium, brings a language model in beside the study's two human assessors,
end to end: on a study with scored sessions and a pool that ann and ben graded (three disagreements), they
set up an LLM assessor against a local chat-completions server (tests/assessment/llm/fake_model_server.py),
see that the API key is never shown again, start a run and watch its page go from queued through running
(two of six graded, a failed request retried) to done; adjudicate; read the model on the agreement page (a
pair with each person, and against the reference with its confusion matrix); publish a version without a
rule (no machine grade) and one with "break ties" (its provenance on the page); and read on the
conclusion-change page how the study's conclusion moves between the two, its chart drawn, with no console
error and no Content-Security-Policy violation.

The run's task is held and worked by a thread of the test (tests/browser/worker.py), as a Celery worker
would, so the run page is seen while it works. With SESSIONLAB_SCREENSHOTS=<folder> each step is saved."""

import os
import re
import threading
from pathlib import Path

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from studies.assessment import assessors
from studies.assessment.llm import runs
from studies.assessment.llm.prompts import UMBRELA_PROMPT, prompt_hash
from studies.models import Collection, Document
from tests.assessment.conftest import grade_all
from tests.assessment.llm.fake_model_server import FakeModelServer
from tests.dashboards.conftest import build_study
from tests.factories import study_scored

from .csp import csp_listen, csp_violations
from .worker import WorkerThread

API_KEY = "sk-browser-5d1c7e9a3b2f4a6c8e0d1f2a3b4c5d6e"
MODEL = "llama3.1:8b"
WAIT = 60_000  # ms: generous, on a busy 2-core machine
# ann's and ben's grades of the six pooled documents, in pool order, and the model's: three disagreements
# (second, third, sixth), which "break ties" settles with the model's grade or the people's nearest to it.
PEOPLE = [[2, 2], [1, 3], [0, 1], [3, 3], [0, 0], [2, 1]]
MACHINE = [2, 3, 1, 2, 0, 2]
DOCUMENT_NUMBER = re.compile(r"Doc (\d+)")  # the passage's title in the prompt


def shot(page, name):
    folder = os.environ.get("SESSIONLAB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"llm-{name}.png"), full_page=True)


@pytest.fixture
def study_with_people_grades(designed_study, django_capture_on_commit_callbacks):
    """The dashboards' constructed study (8 participants x 4 scenarios, reference v1, the default run
    scored), and S1's pool of six documents its sessions showed that v1 does not grade, graded by ann and
    ben (PEOPLE). Returns (study, the pooled external ids)."""
    cache.clear()  # charts are cached by run id, which a rolled-back test's run may have had
    collection = Collection.objects.create(name="Browser LLM collection")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{i}", title=f"Doc {i}") for i in range(30)
    )
    designed_study.collection = collection
    designed_study.save(update_fields=["collection"])
    docs = {doc.external_id: doc for doc in collection.documents.all()}
    built = build_study(designed_study, docs)
    study_scored(designed_study, django_capture_on_commit_callbacks)
    shown = {
        external_id
        for session in built.sessions
        if session["topic"] == "1" and session["id"] is not None
        for ranked in session["lists"]
        for external_id in ranked
    }
    pooled = sorted(shown - set(built.grades["1"]), key=lambda external_id: int(external_id[1:]))[:6]
    assert len(pooled) == 6, pooled
    owner = designed_study.owner
    people = [
        assessors.assessor_invite(study=designed_study, username=name, invited_by=owner)[0].user
        for name in ("ann", "ben")
    ]
    assessors.assessment_plan_set(study=designed_study, assessors_per_document=2)
    grade_all(designed_study, dict(zip(pooled, PEOPLE, strict=True)), people)
    return designed_study, pooled


@pytest.mark.django_db(transaction=True)
def test_a_researcher_brings_a_language_model_in_beside_the_assessors(
    live_server, chromium, settings, monkeypatch, study_with_people_grades
):
    study, pooled = study_with_people_grades
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]  # the fake model server, as tests/assessment/llm/conftest.py
    settings.LLM_RETRY_BACKOFF_SECONDS = 0
    machine_grades = dict(zip(pooled, MACHINE, strict=True))
    machine = f"llm-{study.pk}-llama3.1-8b"
    worker = WorkerThread(
        monkeypatch, live_server, ["studies.tasks.llm_run_task"], unlocked=[(runs, "chat_complete")]
    )
    # The model answers the third document only once the page has shown the first two graded.
    third_asked, answer_third = threading.Event(), threading.Event()
    graded_calls = []

    def grade_for(prompt):
        graded_calls.append(prompt)
        if len(graded_calls) == 3:  # the first two documents, one of them retried after its 500
            third_asked.set()
            answer_third.wait(WAIT / 1000)
        return machine_grades["d" + DOCUMENT_NUMBER.search(prompt).group(1)]

    page = chromium.new_page(viewport={"width": 1366, "height": 900})
    page.set_default_timeout(WAIT)
    reports = csp_listen(page)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    with FakeModelServer() as server:
        server.grade_for = grade_for
        server.script = [("status", 500)]  # the first request fails, and is retried
        try:
            page.goto(f"{live_server.url}/accounts/login/?next=/assess/manage/{study.slug}/")
            page.fill("input[name=username]", "alice")
            page.fill("input[name=password]", "alice-password")
            page.click("button[type=submit]")

            # 1. The LLM assessor, set up from the assessment page; its key is never shown again.
            page.click("#llm-assessors >> text=Add a language-model assessor")
            page.fill("input[name=endpoint_url]", server.endpoint)
            page.fill("input[name=model_name]", MODEL)
            page.fill("input[name=api_key]", API_KEY)
            page.fill("input[name=requests_per_minute]", "100000")
            page.fill("input[name=timeout_seconds]", "120")
            shot(page, "1-set-up")
            with page.expect_navigation():
                page.click("button:has-text('Set up')")
            assert f"LLM assessor {machine} set up." in page.inner_text("main")
            assert page.inner_text("#api-key-state") == "a key is set"
            assert page.input_value("input[name=api_key]") == ""
            assert API_KEY not in page.content()
            page.goto(f"{live_server.url}/assess/manage/{study.slug}/")
            row = page.locator("#llm-assessors tbody tr", has_text=machine)
            assert "a key is set" in row.inner_text() and server.endpoint in row.inner_text()
            assert API_KEY not in page.content()

            # 2. A run, watched: queued, then running with two of six graded, then done.
            row.locator("text=settings and runs").click()
            with page.expect_navigation():
                page.click("button:has-text('Start a run')")
            # The page refreshes itself every 3 s while the run is not over: expect() reads it again.
            status, counts = page.locator("#run-status"), page.locator("#run-counts")
            expect(status).to_contain_text("Status: Queued", timeout=WAIT)
            expect(counts).to_have_text("0 graded, 0 failed, of 6 documents", timeout=WAIT)
            shot(page, "2-queued")
            worker.start()
            assert third_asked.wait(WAIT / 1000), "the model was never asked for the third document"
            expect(counts).to_have_text("2 graded, 0 failed, of 6 documents", timeout=WAIT)
            expect(status).to_contain_text("Status: Running", timeout=WAIT)
            failed = page.locator("tr.request-http_error")
            expect(failed).to_have_count(1, timeout=WAIT)
            expect(failed).to_contain_text("HTTP error (500)", timeout=WAIT)
            shot(page, "3-running")
            answer_third.set()
            expect(status).to_contain_text("Status: Done", timeout=WAIT)
            worker.finish()
            expect(counts).to_have_text("6 graded, 0 failed, of 6 documents", timeout=WAIT)
            assert page.inner_text(".count-ok") == "6" and page.inner_text(".count-http_error") == "1"
            expect(page.locator("table.llm-requests tbody tr")).to_have_count(7, timeout=WAIT)
            assert API_KEY not in page.content()
            shot(page, "4-done")
        finally:
            answer_third.set()
    assert len(server.requests) == 7
    assert all(r["headers"]["Authorization"] == f"Bearer {API_KEY}" for r in server.requests)

    # 3. Adjudication leaves the three disagreements to the researcher; the agreement page shows the model.
    page.goto(f"{live_server.url}/assess/manage/{study.slug}/")
    page.select_option("select[name=adjudicate-preset]", "researcher")
    with page.expect_navigation():
        page.click("button:has-text('Adjudicate')")
    assert "For you to decide: 3." in page.inner_text("main")  # on the disagreements page
    page.goto(f"{live_server.url}/assess/manage/{study.slug}/")
    page.click(f"a[href='/assess/manage/{study.slug}/agreement/']")
    page.wait_for_selector("#assessor-figures")
    captions = page.locator("section.card .pair > table > caption").all_inner_texts()
    for person in ("ann", "ben"):
        assert any(c.startswith(f"{person} × {machine}: n = 6") for c in captions), captions
    figures = page.locator("#assessor-figures")
    assert figures.locator("h2").inner_text() == "Each assessor against the reference"
    assert page.inner_text("#figures-reference") == "adjudicated grades"
    against = figures.locator(".assessor-against-reference", has_text=f"{machine} (machine)")
    caption = against.locator("table caption").first.inner_text()
    assert caption == f"{machine} (machine) × adjudicated grades: n = 3"
    matrix = (
        against.locator("table")
        .first.locator("tbody tr")
        .evaluate_all(
            "rows => rows.map(row => [...row.querySelectorAll('td')].map(cell => Number(cell.textContent)))"
        )
    )
    # The agreed documents: 2 and 2, 3 and 2, 0 and 0 (reference, model); rows are the model's grades.
    assert matrix == [[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0]]
    shot(page, "5-agreement")

    # 4. Published without a rule: no machine grade. With "break ties": the provenance says whose and how.
    page.goto(f"{live_server.url}/assess/manage/{study.slug}/")
    page.check("input[name=publish-allow_pending]")
    page.fill("input[name=publish-note]", "people only")
    with page.expect_navigation():
        page.click("button:has-text('Preview the new version')")
    assert page.inner_text("h1") == "Publish reference version 2: what changes"
    assert page.inner_text("#publish-machine") == (
        "No machine assessor's grade enters this version (no rule ticked)."
    )
    with page.expect_navigation():
        page.click("button:has-text('Publish v2')")
    assert "Reference version 2 published" in page.inner_text("main")
    versions = page.locator("section.card", has_text="Reference versions")
    assert versions.locator("tr", has_text="people only").locator(".provenance").inner_text() == (
        "people's grades and imports only"
    )
    page.check("input[name=publish-rules][value=break_ties]")
    page.select_option("select[name=publish-machine]", label=machine)
    page.fill("input[name=publish-note]", "with the model's tie-breaks")
    with page.expect_navigation():
        page.click("button:has-text('Preview the new version')")
    preview = page.inner_text("#publish-machine")
    assert f"Machine assessor {machine}, by the rules ticked:" in preview
    assert "3 undecided disagreements settled by its grade." in preview
    shot(page, "6-preview")
    with page.expect_navigation():
        page.click("button:has-text('Publish v3')")
    assert "Reference version 3 published" in page.inner_text("main")
    provenance = (
        f"machine grades by {machine}, model {MODEL}, prompt {prompt_hash(UMBRELA_PROMPT, MODEL)[:12]}, "
        "never audited for robustness: 3 ties broken"
    )
    v3 = versions.locator("tr", has_text="with the model's tie-breaks")
    assert v3.locator(".provenance").inner_text() == provenance
    shot(page, "7-versions")

    # 5. The conclusion-change page compares v2 (people) with v3 (people and the model's tie-breaks).
    v3.locator("text=how the conclusion changes").click()
    page.wait_for_selector("#reference-change")
    population = page.inner_text("#reference-change-population")
    assert "v2: people only." in population
    assert f"v3: with the model's tie-breaks [{provenance}]" in population
    assert re.match(r"The conclusion (holds|changes): .*v2.*v3", page.inner_text("#conclusion-final"))
    means = page.locator("#means-final tbody tr").evaluate_all(
        "rows => rows.map(row => [...row.cells].map(cell => cell.textContent.trim()))"
    )
    assert [(row[0], row[3]) for row in means] == [("A", "16"), ("B", "16")]  # 32 sessions, half on each
    assert all(re.fullmatch(r"\d+\.\d{4}", value) for row in means for value in row[1:3]), means
    assert any(row[1] != row[2] for row in means), means  # the tie-broken documents were shown on topic 1
    page.wait_for_selector("#reference-change-chart .js-plotly-plot .main-svg", timeout=WAIT)
    expect(page.locator("#reference-change-chart .chart-notes li").first).to_contain_text(
        "n = 32 sessions", timeout=WAIT
    )
    shot(page, "8-conclusion-change")
    assert errors == []
    assert csp_violations(page, reports) == []

    # What the pages said is what was stored: v2 holds no machine grade, v3 the three ties the model broke
    # (the model's grade when a person gave it, the people's nearest otherwise; PEOPLE and MACHINE).
    v2, v3 = (study.reference_versions.get(number=n) for n in (2, 3))
    assert not v2.judgments.filter(source__startswith="machine ").exists() and v2.facts == {}
    broken = v3.judgments.filter(source="machine tie-break v3").values_list("document__external_id", "grade")
    assert sorted(broken) == sorted([(pooled[1], 3), (pooled[2], 1), (pooled[5], 2)])
    assert v3.facts["ties_broken"] == 3 and v3.facts["machine_assessor"]["assessor"] == machine
