"""In a real browser (Debian's Chromium through Playwright): a researcher tries the study as a participant,
deletes the preview, pauses the study; a participant's link then says "paused". Keyboard and phone width."""

import pytest

from studies.design import services
from studies.models import Participant
from tests.browser.csp import csp_listen, csp_violations


@pytest.fixture
def running_study(django_user_model):
    owner = django_user_model.objects.create_user("alice", password="alice-password", is_staff=True)
    study = services.study_create(
        owner=owner, name="Browser study", consent_text="Consent text.", status="open"
    )
    services.scenario_add(study=study, code="S1", title="Wings", text="Find reports on wings.", topic_id="1")
    services.system_add(study=study, code="A", name="A", config={"configuration": "bm25_title_text"})
    (participant,) = services.participants_enrol(study=study, count=1)
    return study, participant


@pytest.mark.django_db(transaction=True)
def test_a_researcher_previews_then_pauses(live_server, running_study, chromium, tmp_path):
    study, participant = running_study
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(15_000)
    reports = csp_listen(page)
    page.goto(f"{live_server.url}/accounts/login/?next=/studies/{study.slug}/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.keyboard.press("Enter")
    page.wait_for_selector("#study-lifecycle")
    assert page.inner_text("#study-status") == "Open"
    page.screenshot(path=str(tmp_path / "study-status.png"), full_page=True)
    with context.expect_page() as opened:
        page.focus("#preview-start")
        page.keyboard.press("Enter")
    preview = opened.value
    preview.wait_for_selector("#preview-banner")
    assert "Nothing here counts" in preview.inner_text("#preview-banner")
    preview.close()
    page.reload()
    page.click("#preview-delete")
    page.wait_for_selector("text=Deleted the preview data (1 preview participant)")
    assert not Participant.objects.filter(preview_at__isnull=False).exists()
    page.click("button[name=status][value=paused]")
    page.wait_for_selector("text=The study is paused")
    assert page.inner_text("#study-status") == "Paused"
    page.goto(f"{live_server.url}/p/{participant.access_token}/")
    assert "This study is paused" in page.inner_text("#study-paused")
    assert csp_violations(page, reports) == []
    context.close()
