"""Table 1 counts the participants who answered the questionnaire; its note counts the population's
participants. The two used to disagree without a word (the demo: N = 30 under a note of 32, the two printed
links nobody has used yet; 11 and 12 after a withdrawal deleted one's answers): now the title and the note
say both figures and who has no answers."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _table_1(client, run):
    response = client.get(reverse("scoring:chart_json", args=[run.study.slug, run.pk, "participants"]))
    assert response.status_code == 200
    return response.json()


def test_a_participant_without_answers_is_counted_apart_in_the_title_and_the_note(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    silent = built.study.participants.order_by("enrolment_index").last()
    silent.questionnaire_answers = {}
    silent.save(update_fields=["questionnaire_answers"])
    payload = _table_1(client, run)
    title = payload["figure"]["layout"]["title"]["text"]
    total = built.study.participants.count()
    assert title.startswith(
        f"Participant features (N = {total - 1} who answered, of the {total} participants"
    )
    assert f"n = {total} participants, {total - 1} of them with questionnaire answers" in title
    note = payload["notes"][0]
    assert f"{total - 1} of them with questionnaire answers (1 without: not started" in note
    assert silent.code not in note  # counted, not named (a withdrawn participant's code leaves the charts)


def test_when_everyone_answered_the_title_gives_one_n(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    total = built.study.participants.count()
    payload = _table_1(client, run)
    assert payload["figure"]["layout"]["title"]["text"].startswith(f"Participant features (N = {total})")
    assert "with questionnaire answers" not in payload["notes"][0]
