"""The study page refreshes its participants' progress without a reload: it names a progress fragment and a
static script (no inline script), and the fragment answers the page's counts and participant rows as they are
now, in a fixed number of queries however many participants there are."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from studies.design import services
from tests.participation.conftest import start

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, alice):
    client.force_login(alice)
    return client


def rows(html: str) -> dict[str, str]:
    found = re.findall(
        r"<tr class=\"state-[a-z_]+\"><td>(P\d+).*?</td>.*?<td>(.*?)</td>\s*<td><code", html, re.S
    )
    return {code: re.sub(r"<[^>]+>|\s+replay", "", order).strip() for code, order in found}


def test_the_page_names_its_fragment_and_its_script(signed_in, designed_study):
    html = signed_in.get(f"/studies/{designed_study.slug}/").content.decode()
    assert f'data-progress-url="/studies/{designed_study.slug}/progress/"' in html
    assert '<script type="module" src="/static/js/study-progress.js"></script>' in html
    assert 'id="participants-count"' in html and 'id="study-counts"' in html


def test_the_fragment_shows_a_session_started_since_the_page_was_drawn(signed_in, designed_study):
    first, second = services.participants_enrol(study=designed_study, count=2)
    url = f"/studies/{designed_study.slug}/progress/"
    before = signed_in.get(url)
    assert before.status_code == 200 and before["Cache-Control"] == "no-store"
    assert "2 participants enrolled, 0 started" in before.content.decode()
    assert "…" not in rows(before.content.decode())["P001"]
    start(first)
    after = signed_in.get(url).content.decode()
    assert "2 participants enrolled, 1 started" in after and "(0 finished, 1 open)" in after
    assert rows(after)["P001"].startswith("1. S") and "…" in rows(after)["P001"]
    assert "…" not in rows(after)["P002"]
    assert '<span id="participants-count">2</span>' in after


def test_the_fragment_takes_the_same_queries_for_few_or_many_participants(signed_in, designed_study):
    url = f"/studies/{designed_study.slug}/progress/"
    services.participants_enrol(study=designed_study, count=2)
    signed_in.get(url)  # the sweep's first turn and the session's caches, out of the count
    with CaptureQueriesContext(connection) as few:
        signed_in.get(url)
    services.participants_enrol(study=designed_study, count=20)
    with CaptureQueriesContext(connection) as many:
        response = signed_in.get(url)
    assert len(rows(response.content.decode())) == 22
    assert len(many) == len(few)


def test_another_researcher_gets_a_404(client, charlie, designed_study):
    client.force_login(charlie)
    assert client.get(f"/studies/{designed_study.slug}/progress/").status_code == 404
