"""The researcher forms (login, new scoring run, invite assessor) said b, bq, 2008/2002/log2/
kanoulas2011, pad/as_is, pointed at repository paths and flashed errors above the page. Now: plain words with
the paper's term beside them, help that links to the served docs, each error beside its field."""

import re

import pytest

pytestmark = pytest.mark.django_db


def doc_links(page: str) -> set[str]:
    return set(re.findall(r'href="(/docs/[a-z0-9-]+/#[a-z0-9-]+)"', page))


def test_the_run_form_names_each_option_in_words_with_the_papers_term(client, alice, designed_study):
    client.force_login(alice)
    page = client.get(f"/scoring/{designed_study.slug}/").content.decode()
    for words in (
        "Patience down a result list (b, the rank&#x27;s log base)",
        "Session DCG of the paper (Järvelin et al., ECIR 2008) (2008)",
        "(kanoulas2011)",
        "Filled up to X with results worth nothing (pad)",
        "(as_is)",
        "Counts only the first time it is shown (first)",
        "(observed)",
    ):
        assert words in page, words
    assert "docs/scoring-sessions.md" not in page


def test_every_help_link_leads_to_a_served_section(client, alice, designed_study):
    client.force_login(alice)
    links = doc_links(client.get(f"/scoring/{designed_study.slug}/").content.decode())
    links |= doc_links(client.get(f"/assess/manage/{designed_study.slug}/").content.decode())
    client.logout()
    links |= doc_links(client.get("/accounts/login/").content.decode())
    assert len(links) >= 5
    for link in links:
        path, section = link.split("#")
        page = client.get(path)
        assert page.status_code == 200 and f'id="{section}"' in page.content.decode(), link


def test_a_wrong_value_is_named_beside_its_field(client, alice, designed_study):
    client.force_login(alice)
    response = client.post(
        f"/scoring/{designed_study.slug}/",
        {"weights": "0,1,x", "b": "two", "bq": "4", "top": "10", "formulation": "2008"},
    )
    page = response.content.decode()
    assert 'id="id_b_error"' in page and 'id="id_weights_error"' in page
    field = page[page.index('id="field-b"') : page.index('id="field-bq"')]
    assert "Enter a number" in field


def test_an_invitation_refused_says_why_beside_the_name(client, alice, bob, designed_study):
    client.force_login(alice)
    response = client.post(
        f"/assess/manage/{designed_study.slug}/assessors/invite/", {"invite-username": "bob"}
    )
    page = response.content.decode()
    assert response.status_code == 400 and 'id="id_invite-username_error"' in page
    assert "How assessors work" in page


def test_the_login_form_shows_its_fields_and_help(client, alice):
    page = client.get("/accounts/login/").content.decode()
    assert 'id="field-username"' in page and "private link" in page
    page = client.post("/accounts/login/", {"username": "alice", "password": "wrong"}).content.decode()
    assert "Please enter a correct username and password" in page


def test_the_docs_are_served_by_name_only(client):
    assert 'href="/docs/scoring-sessions/"' in client.get("/docs/").content.decode()
    assert client.get("/docs/no-such-doc/").status_code == 404
    assert client.get("/docs/..%2Fsettings/").status_code == 404
