"""An assessor opens their form in a real browser: the study's and the scenario's guidelines above the
document, the topic's words marked in it, markup in a document shown as text; they switch highlighting off,
and it stays off on the next document. Drives Debian's /usr/bin/chromium through Playwright."""

import pytest

from studies.assessment import assessor_work, assessors, pools
from studies.design import services
from studies.models import Collection, Document

from .csp import csp_listen, csp_violations


@pytest.fixture
def assessor_with_guidelines(django_user_model):
    owner = django_user_model.objects.create_user("alice", password="alice-password", is_staff=True)
    collection = Collection.objects.create(name="Browser collection", owner=owner)
    Document.objects.bulk_create(
        Document(
            collection=collection,
            external_id=f"d{n}",
            title=f"Wing report {n}",
            text=f"Swept WING loads <img src=x onerror=alert({n})> and a winglet.",
        )
        for n in (1, 2)
    )
    study = services.study_create(owner=owner, name="Browser study", collection=collection)
    scenario = services.scenario_add(
        study=study, code="S1", title="Wing loads", text="Find it.", topic_id="1"
    )
    pools.pool_add_documents(scenario=scenario, external_ids=["d1", "d2"], added_by=owner)
    assessor_work.guidelines_set(
        study=study, scenario=None, text="Grade 3: <em>exactly</em> on topic.", by=owner
    )
    assessor_work.guidelines_set(study=study, scenario=scenario, text="Loads on wings only.", by=owner)
    membership, password = assessors.assessor_invite(study=study, username="ann", invited_by=owner)
    return study, membership, password


@pytest.mark.django_db(transaction=True)
def test_an_assessor_reads_guidelines_and_switches_highlighting_off(
    live_server, assessor_with_guidelines, chromium
):
    _study, _membership, password = assessor_with_guidelines
    page = chromium.new_page()
    page.set_default_timeout(15_000)
    csp_reports = csp_listen(page)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{live_server.url}/accounts/login/?next=/assess/")
    page.fill("input[name=username]", "ann")
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.click("text=Browser study")
    page.click("text=Start")
    page.wait_for_selector("#grade-form[data-keys=ready]")
    sections = page.locator("section.guidelines")
    assert sections.count() == 2
    assert sections.nth(0).inner_text().endswith("Grade 3: <em>exactly</em> on topic.")
    assert "Loads on wings only." in sections.nth(1).inner_text()
    assert page.locator("#document-title mark").all_inner_texts() == ["Wing"]
    assert page.locator(".document-text mark").all_inner_texts() == ["WING", "loads"]
    assert (
        "<img src=x" in page.inner_text(".document-text") and page.locator(".document-text img").count() == 0
    )
    with page.expect_navigation():
        page.click("text=Stop highlighting query terms")
    assert page.locator("mark").count() == 0
    with page.expect_navigation():
        page.keyboard.press("2")
    page.wait_for_selector("#grade-form[data-keys=ready]")
    assert page.locator("mark").count() == 0  # still off on the next document
    assert page.locator("text=Highlight query terms").count() == 1
    assert dialogs == []
    assert csp_violations(page, csp_reports) == []
