"""The first researcher account: `manage.py create_researcher`, not createsuperuser (docs/security.md); any
account changes its one-time password at /accounts/password/."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command


def create(*args, stdin=None, monkeypatch=None):
    out = io.StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    call_command("create_researcher", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_the_command_makes_a_researcher_with_a_one_time_password(client):
    out = create("rita", "--email", "rita@example.org")
    password = next(
        line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("One-time password")
    )
    rita = get_user_model().objects.get(username="rita")
    assert rita.is_staff and rita.is_active and not rita.is_superuser and rita.email == "rita@example.org"
    assert not rita.user_permissions.exists() and not rita.groups.exists()
    assert client.login(username="rita", password=password)
    assert client.get("/studies/").status_code == 200
    assert client.post("/studies/new/", {"name": "Rita's study", "grade_labels": "no\nyes"}).status_code in (
        200,
        302,
    )
    assert client.get("/admin/studies/study/").status_code == 403  # as docs/security.md says


@pytest.mark.django_db
def test_the_password_can_come_from_standard_input(monkeypatch, client):
    out = create("sam", "--password-stdin", stdin="a-long-passphrase-of-sam\n", monkeypatch=monkeypatch)
    assert "One-time password" not in out and "a-long-passphrase-of-sam" not in out
    assert client.login(username="sam", password="a-long-passphrase-of-sam")


@pytest.mark.django_db
def test_a_taken_name_or_a_weak_password_is_refused(monkeypatch, alice):
    with pytest.raises(CommandError, match="already exists"):
        create("alice")
    with pytest.raises(CommandError):
        create("tom", "--password-stdin", stdin="123\n", monkeypatch=monkeypatch)
    assert not get_user_model().objects.filter(username="tom").exists()


@pytest.mark.django_db
def test_an_assessor_changes_the_one_time_password(client):
    get_user_model().objects.create_user("ann", password="one-time-pass-1")
    client.login(username="ann", password="one-time-pass-1")
    page = client.get("/accounts/password/").content.decode()
    assert 'id="password-change"' in page and "admin" not in page.lower().split("<main>")[1]
    refused = client.post(
        "/accounts/password/", {"old_password": "wrong", "new_password1": "x", "new_password2": "y"}
    ).content.decode()
    assert 'id="id_old_password_error"' in refused  # the error beside its field
    response = client.post(
        "/accounts/password/",
        {
            "old_password": "one-time-pass-1",
            "new_password1": "ann-chose-this-one",
            "new_password2": "ann-chose-this-one",
        },
        follow=True,
    )
    assert b'id="password-changed"' in response.content
    client.logout()
    assert client.login(username="ann", password="ann-chose-this-one")
