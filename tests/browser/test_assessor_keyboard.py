"""An assessor logs in with a real browser and judges documents with the keyboard only; the grades land in
the database. Drives Debian's /usr/bin/chromium through Playwright (never `playwright install`)."""

import pytest

from studies.assessment import assessors, pools, selectors
from studies.design import services
from studies.models import AssessorJudgment, Collection, Document, StudyAssessor

from .csp import csp_listen, csp_violations


def keys_ready(page):
    """The form's script is a separate file: a key pressed before it has run would be lost."""
    page.wait_for_selector("#grade-form[data-keys=ready], #all-done")


@pytest.fixture
def assessor_with_pool(django_user_model):
    owner = django_user_model.objects.create_user("alice", password="alice-password", is_staff=True)
    collection = Collection.objects.create(name="Browser collection", owner=owner)
    Document.objects.bulk_create(
        Document(
            collection=collection, external_id=f"d{n}", title=f"Title {n}", text=f"Text of document {n}."
        )
        for n in range(1, 5)
    )
    study = services.study_create(owner=owner, name="Browser study", collection=collection)
    scenario = services.scenario_add(
        study=study, code="S1", title="Scenario one", text="Find it.", topic_id="1"
    )
    pools.pool_add_documents(scenario=scenario, external_ids=["d1", "d2", "d3", "d4"], added_by=owner)
    membership, password = assessors.assessor_invite(study=study, username="ann", invited_by=owner)
    return study, membership, password


@pytest.mark.django_db(transaction=True)
def test_an_assessor_judges_documents_with_the_keyboard(live_server, assessor_with_pool, chromium):
    study, membership, password = assessor_with_pool
    queue = selectors.assessor_queue(membership=membership, scenario=study.scenarios.get())
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    csp_reports = csp_listen(page)
    page.goto(f"{live_server.url}/accounts/login/?next=/assess/")
    page.fill("input[name=username]", "ann")
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.click("text=Browser study")
    page.click("text=Start")
    keys_ready(page)
    assert page.inner_text("#document-title") == queue[0].document.title
    for key in ("3", "0"):
        with page.expect_navigation():
            page.keyboard.press(key)
        keys_ready(page)
    # The third document: skip it with the right arrow, grade the fourth, go back and grade the third.
    assert page.inner_text("#document-title") == queue[2].document.title
    with page.expect_navigation():
        page.keyboard.press("ArrowRight")
    keys_ready(page)
    assert page.inner_text("#document-title") == queue[3].document.title
    with page.expect_navigation():
        page.keyboard.press("2")
    keys_ready(page)
    # After the last document the form comes back to the skipped one.
    assert page.inner_text("#document-title") == queue[2].document.title
    with page.expect_navigation():
        page.keyboard.press("ArrowLeft")
    keys_ready(page)
    assert page.inner_text("#document-title") == queue[1].document.title
    with page.expect_navigation():
        page.keyboard.press("ArrowRight")
    keys_ready(page)
    with page.expect_navigation():
        page.keyboard.press("1")
    assert "All 4 documents of this scenario are judged" in page.inner_text("#all-done")
    grades = dict(
        AssessorJudgment.objects.filter(assessor=membership.user).values_list(
            "pool_document__document__external_id", "grade"
        )
    )
    assert grades == {
        queue[0].document.external_id: 3,
        queue[1].document.external_id: 0,
        queue[2].document.external_id: 1,
        queue[3].document.external_id: 2,
    }
    assert StudyAssessor.objects.get(user=membership.user).study == study
    assert csp_violations(page, csp_reports) == []  # the progress bar's width included (no style attribute)
