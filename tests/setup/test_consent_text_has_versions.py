from django.utils import timezone

from studies.design import services


def save(client, study, text, version):
    return client.post(
        f"/studies/{study.slug}/setup/consent/",
        {"action": "consent", "consent-consent_text": text, "consent-consent_version": version},
    )


def test_the_text_changes_freely_before_anyone_consented(alice_client, study):
    assert save(alice_client, study, "New text.", "1").status_code == 302
    study.refresh_from_db()
    assert (study.consent_text, study.consent_version) == ("New text.", "1")


def test_after_a_consent_a_changed_text_needs_a_new_version(alice_client, designed_study):
    study = designed_study
    participant = services.participants_enrol(study=study, count=1)[0]
    participant.consented_at, participant.consent_version = timezone.now(), "1"
    participant.save(update_fields=["consented_at", "consent_version"])
    response = save(alice_client, study, "Changed.", "1")
    assert response.status_code == 400 and "give the changed text a new version" in response.content.decode()
    assert save(alice_client, study, "Changed.", "2").status_code == 302
    page = alice_client.get(f"/studies/{study.slug}/setup/consent/").content.decode()
    assert "2 (current)" in page and "Consent text." in page  # the old version's text is kept
    assert save(alice_client, study, "Again.", "1").status_code == 400  # a used version is not reused


def test_the_time_limit_is_set_and_cleared(alice_client, study):
    alice_client.post(
        f"/studies/{study.slug}/setup/consent/", {"action": "time", "time-time_limit_minutes": "15"}
    )
    study.refresh_from_db()
    assert study.time_limit_minutes == 15
    alice_client.post(
        f"/studies/{study.slug}/setup/consent/", {"action": "time", "time-time_limit_minutes": ""}
    )
    study.refresh_from_db()
    assert study.time_limit_minutes is None


def test_a_researcher_s_preview_consent_does_not_fix_the_text(alice_client, alice, designed_study):
    from studies.design.lifecycle import preview_start

    preview = preview_start(study=designed_study, by=alice)
    preview.consented_at, preview.consent_version = timezone.now(), "1"
    preview.save(update_fields=["consented_at", "consent_version"])
    assert save(alice_client, designed_study, "Reworded after trying it.", "1").status_code == 302
    assert alice_client.get(f"/studies/{designed_study.slug}/setup/").context["enrolled"] == 0
