"""A forgotten password is reset by a link sent to the account's e-mail address: Django's reset
views, linked from the login page, the same answer whether or not an account has the address, the link good
once, and requests limited per address (PASSWORD_RESET_RATE_PER_EMAIL)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_limits():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def rita(django_user_model):
    return django_user_model.objects.create_user(
        "rita", email="rita@example.org", password="forgotten-one", is_staff=True
    )


def _link(message) -> str:
    return re.search(r"https?://[^/\s]+(/accounts/reset/\S+/)", message.body).group(1)


def test_a_researcher_resets_a_forgotten_password_through_the_e_mailed_link(client, rita):
    assert 'id="password-reset-link"' in client.get("/accounts/login/").content.decode()
    sent = client.post("/accounts/password/reset/", {"email": "rita@example.org"}, follow=True)
    assert b'id="password-reset-sent"' in sent.content
    [message] = mail.outbox
    assert message.to == ["rita@example.org"] and "rita" in message.body
    form = client.get(_link(message), follow=True)
    assert b'id="password-reset-confirm"' in form.content
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "rita-chose-this-one", "new_password2": "rita-chose-this-one"},
        follow=True,
    )
    assert b'id="password-reset-complete"' in done.content
    assert client.login(username="rita", password="rita-chose-this-one")
    client.logout()
    assert b'id="password-reset-invalid"' in client.get(_link(message), follow=True).content  # used up


def test_an_unknown_address_gets_the_same_answer_and_no_e_mail(client, rita):
    sent = client.post("/accounts/password/reset/", {"email": "nobody@example.org"}, follow=True)
    assert sent.status_code == 200 and b'id="password-reset-sent"' in sent.content
    assert mail.outbox == []


def test_requests_past_the_limit_for_an_address_are_refused_with_retry_after(client, rita, settings):
    settings.PASSWORD_RESET_RATE_PER_EMAIL = 2
    for _ in range(2):
        assert client.post("/accounts/password/reset/", {"email": "rita@example.org"}).status_code == 302
    refused = client.post("/accounts/password/reset/", {"email": "Rita@Example.org"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "Too many password reset requests" in refused.content.decode()
    assert len(mail.outbox) == 2
    assert get_user_model().objects.get(username="rita").check_password("forgotten-one")
