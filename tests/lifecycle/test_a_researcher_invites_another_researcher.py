"""A researcher makes another researcher's account from the pages: "Invite a researcher" on the
studies page, a one-time password shown once, the new account a researcher as `create_researcher` makes one,
optionally added to a study of the inviter's own. Refusals say why and change nothing."""

import re

import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db

URL = "/studies/researchers/new/"


def test_alice_invites_rita_to_her_study_and_rita_logs_in_to_it(client, alice, study):
    client.force_login(alice)
    assert 'id="researcher-invite-link"' in client.get("/studies/").content.decode()
    page = client.post(
        URL, {"username": "rita", "email": "rita@example.org", "study": study.pk}
    ).content.decode()
    password = re.search(r'id="one-time-password">([^<]+)<', page).group(1)
    rita = get_user_model().objects.get(username="rita")
    assert rita.is_staff and rita.is_active and not rita.is_superuser and rita.email == "rita@example.org"
    assert not rita.user_permissions.exists() and not rita.groups.exists()
    assert study.researchers.filter(pk=rita.pk).exists() and study.owner == alice
    client.logout()
    assert client.login(username="rita", password=password)
    assert client.get(f"/studies/{study.slug}/").status_code == 200


def test_without_a_study_the_new_researcher_sees_none_of_the_inviter_s(client, alice, study):
    client.force_login(alice)
    page = client.post(URL, {"username": "sam"}).content.decode()
    password = re.search(r'id="one-time-password">([^<]+)<', page).group(1)
    client.logout()
    assert client.login(username="sam", password=password)
    assert client.get(f"/studies/{study.slug}/").status_code == 404


def test_only_the_owner_adds_researchers_to_a_study(client, alice, bob, study):
    client.force_login(bob)  # bob researches on alice's study but does not own it
    response = client.post(URL, {"username": "tom", "study": study.pk})
    assert response.status_code == 400 and 'id="id_study_error"' in response.content.decode()
    assert not get_user_model().objects.filter(username="tom").exists()


def test_a_taken_name_or_a_bad_address_is_refused_beside_its_field(client, alice, charlie):
    client.force_login(alice)
    taken = client.post(URL, {"username": "charlie"})
    assert (
        taken.status_code == 400
        and "an account called &#x27;charlie&#x27; already exists" in taken.content.decode()
    )
    bad = client.post(URL, {"username": "tom", "email": "not-an-address"})
    assert bad.status_code == 400 and 'id="id_email_error"' in bad.content.decode()
    spaced = client.post(URL, {"username": "tom jones"})
    assert spaced.status_code == 400 and "letters, numbers, and @/./+/-/_" in spaced.content.decode()
    assert not get_user_model().objects.filter(username="tom").exists()


def test_an_assessor_cannot_invite_researchers(client):
    get_user_model().objects.create_user("ann", password="ann-password")
    client.login(username="ann", password="ann-password")
    assert client.post(URL, {"username": "eve"}).status_code == 403
    assert not get_user_model().objects.filter(username="eve").exists()
