"""A template comment over two lines ({# ... #} is one line only) showed as text above every participant
page; the pages carry none."""

from studies.participation.way.form_steps import consent_record

from .conftest import cid


def test_the_consent_and_questionnaire_pages_show_no_template_comment(client, participant):
    assert "{#" not in client.get(f"/p/{participant.access_token}/").content.decode()
    consent_record(participant=participant, consent_version="1", client_event_id=cid())
    page = client.get(f"/p/{participant.access_token}/").content.decode()
    assert 'id="questionnaire"' in page and "{#" not in page and "#}" not in page
