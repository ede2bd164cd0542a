"""The demo's researcher is a researcher as docs/security.md describes one (is_staff, no superuser flag, no
model permissions), not a superuser, and the README's demo steps still work: log in with the printed password
and see the study and its dashboards. An account an older demo made a superuser is demoted."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from studies import demo

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_simulation(settings, tmp_path, monkeypatch):
    settings.INDEX_ROOT = tmp_path / "indexes"
    settings.DEMO_DATA = "generated"  # quick; the simulated sessions: tests/studies/test_demo_loading.py
    monkeypatch.setattr(demo, "participants_simulate", lambda **kwargs: [])


def _printed_password(out: str) -> str:
    match = re.search(r"Login\s+researcher / (\S+)\s+\(researcher\)", out)
    assert match, out
    return match.group(1)


def test_the_demo_researcher_logs_in_and_sees_the_study_without_being_a_superuser(capsys, client):
    call_command("load_demo", "--participants", "2")
    password = _printed_password(capsys.readouterr().out)
    researcher = get_user_model().objects.get(username=demo.DEMO_USERNAME)
    assert researcher.is_staff and researcher.is_active and not researcher.is_superuser
    assert not researcher.user_permissions.exists() and not researcher.groups.exists()
    assert client.login(username=demo.DEMO_USERNAME, password=password)
    page = client.get(f"/studies/{demo.DEMO_SLUG}/")
    assert page.status_code == 200 and "Demo: two systems, four scenarios" in page.content.decode()
    assert client.get(f"/scoring/{demo.DEMO_SLUG}/").status_code == 200
    assert "/admin/" not in client.get("/studies/").content.decode()  # no Admin link: not a superuser
    assert client.get("/admin/studies/study/").status_code == 403


def test_a_superuser_left_by_an_older_demo_is_made_a_plain_researcher(capsys, client):
    get_user_model().objects.create_superuser(demo.DEMO_USERNAME, password="old-demo-password")
    call_command("load_demo", "--participants", "2")
    password = _printed_password(capsys.readouterr().out)
    researcher = get_user_model().objects.get(username=demo.DEMO_USERNAME)
    assert researcher.is_staff and not researcher.is_superuser
    assert client.login(username=demo.DEMO_USERNAME, password=password)
    assert not client.login(username=demo.DEMO_USERNAME, password="old-demo-password")
