"""The questionnaire editor in the browser: a researcher builds the questions before each task from a
template, changes a label, adds a choice with "Other (please specify)", moves it, starts a page at it and
previews the result; a participant answers the two pages, "other" text included; sessions.csv has a
column for each."""

import csv
import io
import zipfile

import pytest

from studies.models import Assignment, Event

from .csp import csp_listen, csp_violations
from .steps import consent_and_questionnaire, ready

pytestmark = pytest.mark.django_db(transaction=True)
SETUP = "/studies/browser-study/setup/questionnaires/"


def researcher_edits(page, url):
    page.goto(f"{url}/accounts/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "x")
    page.click("button[type=submit]")
    page.goto(url + SETUP)
    # Both add forms propose the same questionnaire; the template goes before each task.
    page.select_option("select[name=instrument-which]", "pre_task_questionnaire")
    page.select_option("select[name=instrument-instrument]", "topic_familiarity")
    page.click("#instrument-form button[type=submit]")
    table = "#pre_task_questionnaire"
    assert "expected_difficulty" in page.inner_text(table)

    # A label changed in place.
    page.click(f"{table} tr[data-item=topic_interest] a.edit")
    page.fill("#item-form input[name=item-label]", "How much does this topic interest you?")
    page.click("#item-form button[type=submit]")
    assert "How much does this topic interest you?" in page.inner_text(table)

    # A choice with "Other (please specify)", moved above the last item, starting page 2.
    page.select_option("#item-form select[name=item-which]", "pre_task_questionnaire")
    page.fill("#item-form input[name=item-name]", "source")
    page.fill("#item-form input[name=item-label]", "Where did you last read about this topic?")
    page.select_option("#item-form select[name=item-kind]", "choice")
    page.fill("#item-form textarea[name=item-choices]", "news\nschool")
    page.check("#item-form input[name=item-other]")
    page.click("#item-form button[type=submit]")
    page.click(f"{table} tr[data-item=source] button[value=up]")
    page.click(f"{table} tr[data-item=source] button[value=page_break]")
    names = page.eval_on_selector_all(f"{table} tbody tr", "rows => rows.map(r => r.dataset.item)")
    assert names == ["topic_familiarity", "topic_interest", "source", "expected_difficulty"]
    assert page.inner_text(f"{table} tr[data-item=source] td:first-child") == "2"


def researcher_previews(page, url):
    page.goto(url + SETUP)
    page.click("#preview-pre_task_questionnaire")
    assert "Page 1 of 2" in page.inner_text("#question-page")
    assert "How much does this topic interest you?" in page.content()
    page.check("input[name=topic_familiarity][value='2']")
    page.check("input[name=topic_interest][value='4']")
    page.click("#questionnaire-preview button")
    assert "Page 2 of 2" in page.inner_text("#question-page")
    page.check("input[name=source][value=other]")
    page.fill("input[name='source.other']", "a podcast")
    page.check("input[name=expected_difficulty][value='3']")
    page.click("#questionnaire-preview button")
    saved = page.inner_text("#preview-saved")
    assert "source.other: a podcast" in saved and "topic_interest: 4" in saved


def participant_answers(page, live_server, token):
    consent_and_questionnaire(page, live_server, token)
    page.wait_for_selector(ready("form#pre-task"))
    assert "Page 1 of 2" in page.inner_text("#question-page")
    page.check("input[name=topic_familiarity][value='5']")
    page.check("input[name=topic_interest][value='3']")
    page.click("form#pre-task button")
    page.wait_for_selector(ready("form#pre-task #question-page"))
    assert "Page 2 of 2" in page.inner_text("#question-page")
    # "Other" without its text is refused; the first page's answers are kept.
    page.check("input[name=source][value=other]")
    page.check("input[name=expected_difficulty][value='2']")
    page.click("form#pre-task button")
    page.wait_for_selector(ready("form#pre-task .error"))
    assert "Please say what you mean by other." in page.inner_text("form#pre-task")
    page.fill("input[name='source.other']", "a colleague")
    page.click("form#pre-task button")
    page.click(ready("#start-search"))
    page.wait_for_selector(ready("#search-app"))


def test_a_researcher_edits_previews_and_a_participant_answers_by_pages(chromium, live_server, token):
    researcher = chromium.new_context()
    page = researcher.new_page()
    page.set_default_timeout(20_000)
    reports = csp_listen(page)
    researcher_edits(page, live_server.url)
    researcher_previews(page, live_server.url)
    assert not Event.objects.exists()  # the preview stored nothing

    participant = chromium.new_page()
    participant.set_default_timeout(20_000)
    participant_answers(participant, live_server, token)
    first = Assignment.objects.get(participant__access_token=token, position=1)
    assert first.pre_task_answers == {
        "topic_familiarity": 5,
        "topic_interest": 3,
        "source": "other",
        "source.other": "a colleague",
        "expected_difficulty": 2,
    }

    tables = page.request.get(f"{live_server.url}/studies/browser-study/downloads/tables.zip")
    assert tables.ok
    with zipfile.ZipFile(io.BytesIO(tables.body())) as zipped:
        rows = list(csv.DictReader(io.StringIO(zipped.read("sessions.csv").decode())))
    assert rows[0]["pre_task.source"] == "other" and rows[0]["pre_task.source.other"] == "a colleague"
    assert rows[0]["pre_task.topic_interest"] == "3"
    assert list(rows[0])[-6:-1] == [
        "pre_task.topic_familiarity",
        "pre_task.topic_interest",
        "pre_task.source",
        "pre_task.source.other",
        "pre_task.expected_difficulty",
    ]
    assert csp_violations(page, reports) == []
    researcher.close()
