"""Beyond status codes: what a participant's token reaches is theirs alone, and refusals are no oracle."""

import secrets

from django.test import Client

from studies.models import Event, Judgment, Participant, Query


def test_the_participant_api_answers_with_the_callers_own_rows(world):
    theirs = Client(HTTP_AUTHORIZATION=f"Participant {world.other_participant.access_token}")
    body = theirs.get("/api/participant/").json()
    assert body["code"] == world.other_participant.code
    assert world.participant.code not in str(body) and world.participant.access_token not in str(body)


def test_another_participants_session_is_refused_in_their_event_batch(world):
    theirs = Client(HTTP_AUTHORIZATION=f"Participant {world.other_participant.access_token}")
    queries, judgments = Query.objects.count(), Judgment.objects.count()
    response = theirs.post(
        "/api/participant/events/",
        {
            "events": [
                {
                    "id": secrets.token_hex(8),
                    "type": "query",
                    "session": world.session.pk,
                    "data": {"text": "wing"},
                },
            ]
        },
        content_type="application/json",
    )
    assert response.status_code == 200 and response.json()["acks"][0]["ok"] is False
    assert (Query.objects.count(), Judgment.objects.count()) == (queries, judgments)
    assert not Event.objects.filter(participant=world.participant, session=world.session, type="query")


def test_an_unknown_session_and_another_participants_get_the_same_answer(world):
    own = f"/p/{world.other_participant.access_token}"
    client = Client()
    for field, path, foreign in (
        ("session", "post-task/", world.session.pk),
        ("assignment", "start/", world.participant.assignments.first().pk),
    ):
        unknown = client.post(f"{own}/{path}", {field: 10**9, "client_event_id": "x"})
        other = client.post(f"{own}/{path}", {field: foreign, "client_event_id": "y"})
        assert unknown.status_code == other.status_code == 404


def test_an_assessor_learns_nothing_from_researcher_pages(world):
    client = Client()
    client.force_login(world.users["ann"])
    for template in ("/studies/{}/", "/assess/manage/{}/", "/scoring/{}/"):
        known = client.get(template.format(world.study.slug))
        unknown = client.get(template.format("no-such-study"))
        assert known.status_code == unknown.status_code == 403
        assert known.content == unknown.content


def test_a_token_that_differs_in_its_last_character_is_unknown(world):
    token = world.participant.access_token
    forged = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert Client().get(f"/p/{forged}/").status_code == 404
    assert Client(HTTP_AUTHORIZATION=f"Participant {forged}").get("/api/participant/").status_code == 401


def test_every_participant_row_carries_the_digest_its_token_is_looked_up_by(world):
    from studies.models import access_token_digest

    rows = list(Participant.objects.values_list("access_token", "access_token_digest"))
    assert rows and all(digest == access_token_digest(token) for token, digest in rows)
    assert all(len(token) >= 43 for token, _ in rows)  # 32 random bytes, URL-safe base64: 256 bits


def test_lists_show_a_researcher_only_their_studies_and_an_assessor_only_theirs(world):
    charlie = Client()
    charlie.force_login(world.users["charlie"])
    slugs = [s["slug"] for s in charlie.get("/api/studies/").json()["results"]]
    assert slugs == [world.other_study.slug]
    for path in ("/studies/", "/assess/"):
        page = charlie.get(path).content.decode()
        assert world.other_study.slug in page and world.study.slug not in page, path
    zoe = Client()
    zoe.force_login(world.users["zoe"])
    page = zoe.get("/assess/").content.decode()
    assert world.other_study.slug in page and world.study.slug not in page
