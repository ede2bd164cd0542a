"""A new study is a draft: it enrols nobody (service, page, API), says what its set-up checklist still needs,
and opens only once that checklist passes; a draft can be tried as a participant, or given up (closed), and
nothing goes back to draft."""

import pytest

from studies.design import lifecycle, services
from studies.errors import DesignError, StudyStatusError
from studies.models import AuditEntry
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db

NOT_OPEN_YET = "the study is not open yet"


@pytest.fixture
def draft(alice):
    return services.study_create(owner=alice, name="A new study", consent_text="Consent text.")


def designed(study, collection):
    """The draft's set-up finished: a collection, two scenarios, two systems of the researcher's own engine
    (no index to build), consent."""
    study.collection = collection
    study.save(update_fields=["collection"])
    for n in (1, 2):
        services.scenario_add(study=study, code=f"S{n}", title=f"S{n}", text=f"Scenario {n}", topic_id=str(n))
    for code in ("A", "B"):
        services.system_add(study=study, code=code, name=f"Engine {code}", backend="external")
    return study


def test_a_new_study_is_a_draft(draft):
    assert draft.status == lifecycle.DRAFT == lifecycle.status_of(draft)


def test_a_draft_enrols_nobody_from_the_service(draft, collection):
    designed(draft, collection)
    with pytest.raises(DesignError, match=NOT_OPEN_YET):
        services.participants_enrol(study=draft, count=2)
    assert not draft.participants.exists()


def test_a_draft_enrols_nobody_from_the_page_or_the_api(client, draft, collection, alice):
    designed(draft, collection)
    client.force_login(alice)
    page = client.post(f"/studies/{draft.slug}/participants/enrol/", {"enrol-count": "2"}, follow=True)
    assert NOT_OPEN_YET in page.content.decode()
    api = client_for(alice).post(f"/api/studies/{draft.pk}/participants/enrol/", {"count": 2}, format="json")
    assert api.status_code == 409 and NOT_OPEN_YET in api.json()["detail"]
    assert not draft.participants.exists()


def test_the_study_page_says_what_is_missing_and_cannot_open_yet(client, draft, alice):
    client.force_login(alice)
    html = client.get(f"/studies/{draft.slug}/").content.decode()
    assert '<span id="study-status">Draft</span>' in html
    assert 'id="missing-to-open"' in html and "Add at least one system" in html
    assert '<button name="status" value="open" disabled>Open</button>' in html
    # No Enrol form that can only refuse: the reason stands in its place.
    assert "participants/enrol/" not in html
    assert 'id="enrolment-refused"' in html and NOT_OPEN_YET in html


def test_opening_before_the_checklist_passes_is_refused_and_changes_nothing(client, draft, alice):
    with pytest.raises(StudyStatusError, match="set-up checklist passes: .*Add at least one system"):
        lifecycle.study_status_change(study=draft, status=lifecycle.OPEN, by=alice)
    client.force_login(alice)
    response = client.post(f"/studies/{draft.slug}/status/", {"status": "open"}, follow=True)
    assert "cannot open before its set-up checklist passes" in response.content.decode()
    draft.refresh_from_db()
    assert draft.status == lifecycle.DRAFT
    assert not AuditEntry.objects.filter(study=draft, action="study_status_changed").exists()


def test_a_draft_opens_once_its_checklist_passes_and_then_enrols(client, draft, collection, alice):
    designed(draft, collection)
    client.force_login(alice)
    html = client.get(f"/studies/{draft.slug}/").content.decode()
    assert 'id="missing-to-open"' not in html
    assert '<button name="status" value="open">Open</button>' in html
    response = client.post(f"/studies/{draft.slug}/status/", {"status": "open"})
    assert response.status_code == 302 and response.url == f"/studies/{draft.slug}/"
    draft.refresh_from_db()
    assert draft.status == lifecycle.OPEN and draft.status_changed_at is not None
    entry = AuditEntry.objects.get(study=draft, action="study_status_changed")
    assert entry.detail == {"from": "draft", "to": "open", "by": "alice"}
    assert len(services.participants_enrol(study=draft, count=2)) == 2


def test_a_draft_is_not_paused_but_may_be_given_up(draft, alice):
    with pytest.raises(StudyStatusError, match="a draft study cannot be made paused"):
        lifecycle.study_status_change(study=draft, status=lifecycle.PAUSED, by=alice)
    closed = lifecycle.study_status_change(study=draft, status=lifecycle.CLOSED, by=alice)
    assert closed.status == lifecycle.CLOSED


@pytest.mark.parametrize("status", ["open", "paused", "closed"])
def test_nothing_goes_back_to_draft(designed_study, alice, status):
    if status != "open":
        lifecycle.study_status_change(study=designed_study, status=status, by=alice)
    with pytest.raises(StudyStatusError, match="not a study status to move to: 'draft'"):
        lifecycle.study_status_change(study=designed_study, status=lifecycle.DRAFT, by=alice)
    designed_study.refresh_from_db()
    assert designed_study.status == status


def test_a_draft_can_be_tried_as_a_participant(client, draft, collection, alice):
    designed(draft, collection)
    preview = lifecycle.preview_start(study=draft, by=alice)
    lifecycle.participant_check_accepting(preview)  # the preview's steps go on in a draft
    home = client.get(f"/p/{preview.access_token}/")
    assert home.status_code == 200 and "not open yet" not in home.content.decode()


def test_the_api_opens_a_draft_once_its_checklist_passes(draft, collection, alice):
    api = client_for(alice)
    early = api.post(f"/api/studies/{draft.pk}/status/", {"status": "open"}, format="json")
    assert early.status_code == 409 and "set-up checklist passes" in early.json()["detail"]
    designed(draft, collection)
    assert api.post(f"/api/studies/{draft.pk}/status/", {"status": "draft"}, format="json").status_code == 400
    opened = api.post(f"/api/studies/{draft.pk}/status/", {"status": "open"}, format="json")
    assert opened.status_code == 200 and opened.json()["status"] == "open"
    assert (
        api.post(f"/api/studies/{draft.pk}/participants/enrol/", {"count": 2}, format="json").status_code
        == 201
    )
