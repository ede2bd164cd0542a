"""Failed sign-ins are limited per username and per address (sessionlab/ratelimit.py): past the limit a clear
429, the right password included; the window ends and the real user gets in again."""

import pytest
from django.test import Client

from sessionlab import ratelimit


@pytest.fixture
def limits(settings):
    settings.LOGIN_RATE_PER_USERNAME = 3
    settings.LOGIN_RATE_PER_IP = 5
    settings.LOGIN_RATE_WINDOW_SECONDS = 60
    return settings


def _login(client, username, password, address="10.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.mark.django_db
def test_the_login_page_answers_429_with_a_message_after_too_many_failures(limits, alice):
    client = Client()
    for _ in range(3):
        assert _login(client, "alice", "wrong").status_code == 200
    response = _login(client, "alice", "alice-password")
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert int(response["Retry-After"]) > 0
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_the_limit_is_per_username_and_other_accounts_still_sign_in(limits, alice, charlie):
    client = Client()
    for _ in range(3):
        _login(client, "alice", "wrong")
    assert _login(client, "charlie", "charlie-password").status_code == 302


@pytest.mark.django_db
def test_the_limit_is_per_address_across_usernames(limits, alice):
    client = Client()
    for n in range(5):
        _login(client, f"guess{n}", "wrong", address="10.0.0.9")
    assert _login(client, "alice", "alice-password", address="10.0.0.9").status_code == 429
    assert _login(client, "alice", "alice-password", address="10.0.0.10").status_code == 302


@pytest.mark.django_db
def test_no_lockout_forever_the_window_ends(limits, alice, monkeypatch):
    client = Client()
    for _ in range(3):
        _login(client, "alice", "wrong")
    assert _login(client, "alice", "alice-password").status_code == 429
    from django.core.cache import cache

    cache.clear()  # what the window's expiry does
    assert _login(client, "alice", "alice-password").status_code == 302


@pytest.mark.django_db
def test_a_success_clears_the_usernames_failures(limits, alice):
    client = Client()
    for _ in range(2):
        _login(client, "alice", "wrong")
    assert _login(client, "alice", "alice-password").status_code == 302
    client.logout()
    for _ in range(2):
        _login(client, "alice", "wrong")
    assert _login(client, "alice", "alice-password").status_code == 302


@pytest.mark.django_db
def test_the_api_token_endpoint_is_limited_too(limits, alice):
    client = Client()
    for _ in range(3):
        response = client.post(
            "/api/auth/token/", {"username": "alice", "password": "wrong"}, content_type="application/json"
        )
        assert response.status_code == 400
    response = client.post(
        "/api/auth/token/",
        {"username": "alice", "password": "alice-password"},
        content_type="application/json",
    )
    assert response.status_code == 429 and "Too many failed sign-ins" in response.json()["detail"]
    assert "Retry-After" in response


@pytest.mark.django_db
def test_the_api_token_endpoint_gives_a_token_to_the_right_password(limits, alice):
    response = Client().post(
        "/api/auth/token/",
        {"username": "alice", "password": "alice-password"},
        content_type="application/json",
    )
    assert response.status_code == 200 and len(response.json()["token"]) == 40


@pytest.mark.django_db
def test_the_admin_login_refuses_a_blocked_username(limits, alice):
    alice.is_superuser = True
    alice.save()
    client = Client()
    for _ in range(3):
        _login(client, "alice", "wrong")
    client.post("/admin/login/", {"username": "alice", "password": "alice-password"}, REMOTE_ADDR="10.0.0.1")
    assert "_auth_user_id" not in client.session


def test_the_window_starts_at_the_first_failure_and_does_not_slide(settings, rf):
    from django.core.cache import cache

    cache.clear()
    settings.LOGIN_RATE_PER_USERNAME, settings.LOGIN_RATE_PER_IP, settings.LOGIN_RATE_WINDOW_SECONDS = (
        2,
        99,
        30,
    )
    request = rf.post("/accounts/login/", REMOTE_ADDR="10.1.1.1")
    assert ratelimit.retry_after(request, "Someone") is None
    ratelimit.failure(request, "someone")
    ratelimit.failure(request, "SOMEONE ")  # the same username, as typed differently
    wait = ratelimit.retry_after(request, "someone")
    assert wait is not None and 0 < wait <= 30
    cache.clear()


def test_a_trusted_proxy_header_names_the_address(settings, rf):
    settings.LOGIN_RATE_IP_META = "HTTP_X_REAL_IP"
    assert (
        ratelimit.client_address(rf.get("/", HTTP_X_REAL_IP="192.0.2.7", REMOTE_ADDR="10.0.0.1"))
        == "192.0.2.7"
    )
    assert ratelimit.client_address(rf.get("/", REMOTE_ADDR="10.0.0.1")) == "10.0.0.1"
